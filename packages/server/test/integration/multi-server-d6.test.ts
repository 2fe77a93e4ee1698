/**
 * RELIABILITY.md D6 across two real server processes on one Postgres and one Redis: an edit acked on one server
 * reaches the clients of the other within 2 s even when the acking server dies right after the ack, or has lost
 * its Redis link (cut by a TCP proxy the test controls) while it keeps its clients. The model under test: a server
 * acks an edit only once it is committed and Redis accepted its publish (fanout/types.ts), so a server without
 * Redis stops acking, and every acked edit is already in the stream the other server reads.
 * (A join while Redis is frozen: redis-frozen.test.ts.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MessageType } from 'wave-protocol';
import { PostgresStore, parsePostgresUrl } from '../../src/store/postgres.js';
import type { DocKey } from '../../src/store/types.js';
import * as Y from 'yjs';
import { EXIT_AFTER_ACK_CODE, EXIT_AFTER_ACK_SERVER, ServerProcess } from '../helpers/server-process.js';
import { REDIS_URL, deleteTestStreams, dropSchema, newSchemaName, postgresStoreUrl, services, uniqueDocId } from '../helpers/services.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { TestClient } from '../helpers/test-client.js';

/** The bar (RELIABILITY.md D6): from the ack on one server to the edit on the other's clients. */
const D6_MS = 2_000;

/** A client that only appends, remembering the text each update-bearing count stands for. */
class Writer {
  readonly client: TestClient;
  private readonly createdAt = Date.now();
  /** Update-bearing count → the client's text once that message was sent. */
  private readonly texts = new Map<number, string>();

  constructor(url: string, apiKey: string, docId: string) {
    this.client = new TestClient({ url, apiKey, docId });
  }

  append(content: string): void {
    const count = this.client.insert(this.client.text.length, content);
    this.texts.set(count, this.client.text.toString());
  }

  /** The text covered by the highest ack received (what the other server's clients must have). */
  ackedText(): string {
    let best = 0;
    for (const count of this.texts.keys()) if (count <= this.client.lastAck && count > best) best = count;
    return this.texts.get(best) ?? '';
  }

  /** When the highest ack arrived (ms since the epoch). */
  lastAckAt(): number {
    const frame = this.client.frames.findLast((f) => f.message?.type === MessageType.Ack);
    return frame ? this.createdAt + frame.at : Date.now();
  }

  /** Resolves once the server answered a Ping sent now: every ack it released before reading the Ping arrived. */
  async roundTrip(): Promise<void> {
    const pongs = this.client.pongs;
    this.client.send({ type: MessageType.Ping });
    await this.client.waitFor(() => this.client.pongs > pongs, 'a pong');
  }
}

/** Waits for `reader` to hold every edit `writer` had acked, failing after the D6 bar counted from that ack. */
async function reachesWithinBar(reader: TestClient, writer: Writer, what: string): Promise<void> {
  const expected = writer.ackedText();
  const left = D6_MS - (Date.now() - writer.lastAckAt());
  await reader.waitFor(() => reader.text.toString().startsWith(expected), `${what}: every acked edit (${JSON.stringify(expected)}) on the other server ≤ 2 s after its ack`, Math.max(left, 1));
}

async function storedText(storeUrl: string, doc: DocKey): Promise<string> {
  const store = new PostgresStore(parsePostgresUrl(storeUrl));
  try {
    const session = await store.getSession(doc);
    if (!session) return '';
    const loaded = new Y.Doc();
    for (const update of (await store.loadDocument(doc, session.epoch)).updates) Y.applyUpdate(loaded, update);
    return loaded.getText('text').toString();
  } finally {
    await store.close();
  }
}

if (await services('postgres', 'redis')) {
  describe('[D6] no acked edit stranded between servers (Postgres + Redis)', () => {
    const schema = newSchemaName();
    const storeUrl = postgresStoreUrl(schema);
    const redis = new URL(REDIS_URL);
    const cleanups: Array<() => Promise<unknown>> = [];
    let other: ServerProcess;
    let apiKey: string;
    const account = 'd6';

    before(async () => {
      other = await ServerProcess.start({ store: storeUrl, redis: REDIS_URL });
      cleanups.push(() => other.cleanup());
      apiKey = (await other.createKey({ name: account })).apiKey;
    });
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
      await dropSchema(schema);
      await deleteTestStreams();
    });

    const reader = async (docId: string, seedText?: string): Promise<TestClient> => {
      const client = new TestClient({ url: other.url, apiKey, docId, ...(seedText !== undefined ? { seedText } : {}) });
      cleanups.push(() => client.close());
      await client.waitSynced();
      await client.waitAllAcked();
      return client;
    };

    it('a server killed right after acking: every acked edit reaches the other server', async () => {
      const docId = uniqueDocId('killed');
      const b = await reader(docId, 'base;');
      for (let round = 1; round <= 5; round++) {
        // Exits right after the ack of the client's second update-bearing message (its step2 reply, then the edit).
        const dying = await ServerProcess.start({ entry: EXIT_AFTER_ACK_SERVER, store: storeUrl, redis: REDIS_URL, extraArgs: ['--exit-at-ack', '2'] });
        cleanups.push(() => dying.cleanup());
        const a = new Writer(dying.url, apiKey, docId);
        cleanups.push(() => a.client.close());
        await a.client.waitSynced();
        a.append(`r${round};`);
        const exit = await dying.exit;
        assert.equal(exit.code, EXIT_AFTER_ACK_CODE, `round ${round}: the server exited after an ack`);
        assert.ok(a.client.lastAck >= 2, `round ${round}: the edit was acked before the exit; ${a.client.describe()}`);
        await reachesWithinBar(b, a, `round ${round}`);
      }
      assert.equal(b.text.toString(), 'base;r1;r2;r3;r4;r5;');
    });

    it('a server whose Redis link is cut stops acking; what it acked reaches the other server, also after it is killed', async () => {
      const docId = uniqueDocId('cut');
      const doc = { account, docId };
      const proxy = await TcpProxy.start({ host: redis.hostname, port: Number(redis.port || 6379) });
      cleanups.push(() => proxy.close());
      const cut = await ServerProcess.start({ store: storeUrl, redis: `redis://127.0.0.1:${proxy.port}` });
      cleanups.push(() => cut.cleanup());
      const b = await reader(docId, 'base;');
      const a = new Writer(cut.url, apiKey, docId);
      cleanups.push(() => a.client.close());
      await a.client.waitSynced();

      a.append('linked;');
      await a.client.waitAllAcked();
      await reachesWithinBar(b, a, 'with the link up');

      // The link breaks; the server keeps its client, which keeps editing. The edits are committed…
      proxy.cut();
      a.append('cut1;');
      a.append('cut2;');
      await waitStored(storeUrl, doc, 'base;linked;cut1;cut2;');
      // …but not acked: the fan-out has not accepted them.
      await a.roundTrip();
      assert.equal(a.ackedText(), 'base;linked;', `no ack while Redis is cut off; ${a.client.describe()}`);

      // The link comes back: the queued publishes go out, then the acks; the other server has the edits.
      proxy.restore();
      await a.client.waitAllAcked();
      await reachesWithinBar(b, a, 'after the link came back');

      // Cut again, edit, and kill the server: its client never returns.
      proxy.cut();
      a.append('lost;');
      await waitStored(storeUrl, doc, 'base;linked;cut1;cut2;lost;');
      await a.roundTrip();
      await cut.kill('SIGKILL');
      await a.client.close();
      assert.equal(a.ackedText(), 'base;linked;cut1;cut2;', 'the edit made while cut off was never acked');
      await reachesWithinBar(b, a, 'after the server was killed');
    });
  });
}

/** Polls the store until the document's text is `expected` (the commit has no event a test can wait on). */
async function waitStored(storeUrl: string, doc: DocKey, expected: string): Promise<void> {
  let text = '';
  const deadline = Date.now() + 10_000;
  while ((text = await storedText(storeUrl, doc)) !== expected) {
    if (Date.now() > deadline) assert.fail(`the store holds ${JSON.stringify(text)}, expected ${JSON.stringify(expected)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
