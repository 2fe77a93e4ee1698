/**
 * Idle documents held in compact form (rooms/doc-holder.ts), against real server processes with a 300 ms idle time
 * (`COMPACT_IDLE_SERVER`). Each case first waits until `/metrics` shows every loaded document compact, then acts:
 * an edit is integrated once, acked, relayed once and stored; a join and its reply are answered without a rebuild;
 * REST reads every format; a SIGKILL loses nothing acked; another server's update arrives through Redis. With
 * compaction off, the wait for a compact document fails.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MessageType, SyncStep } from 'wave-protocol';
import { Cluster } from '../helpers/cluster.js';
import { COMPACT_IDLE_SERVER, ServerProcess } from '../helpers/server-process.js';
import { services, uniqueDocId } from '../helpers/services.js';
import { TestClient, messagesOfType } from '../helpers/test-client.js';

const IDLE = { entry: COMPACT_IDLE_SERVER, extraArgs: ['--compact-idle-after-ms', '300'] };

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  if (!match) throw new Error(`/metrics has no ${name}`);
  return Number(match[1]);
}

/** Loaded and compact documents of a server, from its /metrics. */
async function documents(url: string): Promise<{ loaded: number; compact: number }> {
  return { loaded: await metric(url, 'wave_documents_loaded'), compact: await metric(url, 'wave_documents_compact') };
}

/** Polls /metrics until the server holds at least one document and every loaded document is compact. */
async function allCompact(url: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const { loaded, compact } = await documents(url);
    if (loaded > 0 && compact === loaded) return;
    if (Date.now() > end) throw new Error(`timed out waiting for compact documents (${compact} of ${loaded} loaded)`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Sync updates (not step2) a client received: one per change relayed to it. */
function relayed(client: TestClient): number {
  return messagesOfType(client, MessageType.Sync).filter((m) => m.step === SyncStep.Update).length;
}

describe('idle documents in compact form (real server process)', () => {
  let server: ServerProcess;
  let apiKey: string;
  let auth: Record<string, string>;
  const clients: TestClient[] = [];
  const connect = async (docId: string, seedText?: string): Promise<TestClient> => {
    const client = new TestClient({ url: server.url, apiKey, docId, ...(seedText !== undefined ? { seedText } : {}) });
    clients.push(client);
    await client.waitSynced();
    return client;
  };

  before(async () => {
    server = await ServerProcess.start(IDLE);
    let secret: string;
    ({ apiKey, secret } = await server.createKey({ name: 'idle' }));
    auth = { Authorization: `Bearer ${secret}` };
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await server.cleanup();
  });

  it('an edit to a compact document is integrated once, acked, relayed once and read back', async () => {
    const a = await connect('edit', 'first line\n');
    const b = await connect('edit');
    await a.waitAllAcked();
    await allCompact(server.url);

    const before = relayed(b);
    a.insert(a.text.length, 'second line\n');
    await a.waitAllAcked();
    await b.waitFor(() => b.text.toString() === 'first line\nsecond line\n', 'the edit at b');
    assert.equal(relayed(b), before + 1, 'relayed once');
    // b's own edit reaches a through the rebuilt doc (its listener is attached).
    b.insert(0, '> ');
    await b.waitAllAcked();
    await a.waitFor(() => a.text.toString() === '> first line\nsecond line\n', 'b\'s edit at a');
    const res = await fetch(`${server.url}/api/v2/docs/edit?apiKey=${apiKey}&format=text`, { headers: auth });
    assert.equal(await res.text(), '> first line\nsecond line\n');
  });

  it('a join to a compact document and its reply are answered without a rebuild; presence is kept', async () => {
    const a = await connect('join', 'shared text\n');
    a.setPresence({ cursor: 1 });
    await a.waitAllAcked();
    await allCompact(server.url);

    const c = await connect('join', 'MUST NOT SEED\n');
    assert.equal(c.text.toString(), 'shared text\n');
    await c.waitAllAcked();
    // Presence set before the compaction reached c with the document.
    await c.waitFor(() => c.awareness.getStates().get(a.clientId), 'a\'s presence at c');
    c.setPresence({ cursor: 4 });
    await a.waitFor(() => a.awareness.getStates().get(c.clientId), 'c\'s presence at a');
    const { loaded, compact } = await documents(server.url);
    assert.equal(compact, loaded, 'still compact after the join, its reply (acked) and presence');
  });

  it('REST reads every format of a compact document', async () => {
    const a = await connect('rest', 'some text\n');
    a.insert(0, 'more ');
    await a.waitAllAcked();
    const read = async (format: string): Promise<string> => {
      const res = await fetch(`${server.url}/api/v2/docs/rest?apiKey=${apiKey}&format=${format}`, { headers: auth });
      assert.equal(res.status, 200);
      return res.text();
    };
    const formats = ['text', 'html', 'delta', 'json'];
    const live = new Map<string, string>();
    for (const format of formats) live.set(format, await read(format));
    assert.equal(live.get('text'), 'more some text\n');
    for (const format of formats) {
      await allCompact(server.url);
      assert.equal(await read(format), live.get(format), `format=${format}`);
    }
  });
});

describe('idle documents in compact form: SIGKILL and restart (real server process)', () => {
  it('an edit acked while the document was compact survives a SIGKILL of the compact document', async (t) => {
    let server = await ServerProcess.start(IDLE);
    t.after(() => server.cleanup());
    const { apiKey } = await server.createKey({ name: 'idle-kill' });
    const writer = await TestClient.connect({ url: server.url, apiKey, docId: 'kill', seedText: 'base\n' });
    await writer.waitSynced();
    await writer.waitAllAcked();
    await allCompact(server.url);
    writer.insert(writer.text.length, 'acked while compact\n');
    await writer.waitAllAcked();
    await allCompact(server.url);

    assert.equal((await server.kill('SIGKILL')).signal, 'SIGKILL');
    await writer.waitClosed();
    server = await server.restart();
    const reader = await TestClient.connect({ url: server.url, apiKey, docId: 'kill', seedText: 'MUST NOT SEED\n' });
    t.after(() => reader.close());
    await reader.waitSynced();
    assert.deepEqual(reader.seedRequests, []);
    assert.equal(reader.text.toString(), 'base\nacked while compact\n');
  });
});

if (await services('postgres', 'redis')) {
  describe('idle documents in compact form across two servers (Postgres + Redis)', () => {
    let cluster: Cluster;
    let apiKey: string;
    const clients: TestClient[] = [];

    before(async () => {
      cluster = await Cluster.start(2, IDLE);
      apiKey = (await cluster.createKey({ name: 'idle-fan' })).apiKey;
    });
    after(async () => {
      await Promise.all(clients.map((c) => c.close()));
      await cluster.cleanup();
    });

    it('an update from the other server reaches a compact document once, both ways', async () => {
      const docId = uniqueDocId('idle-fan');
      const a = new TestClient({ url: cluster.urls[0]!, apiKey, docId, seedText: 'one\n' });
      clients.push(a);
      await a.waitSynced();
      await a.waitAllAcked();
      const b = new TestClient({ url: cluster.urls[1]!, apiKey, docId, seedText: 'MUST NOT SEED\n' });
      clients.push(b);
      await b.waitSynced();
      await b.waitAllAcked();
      assert.equal(b.text.toString(), 'one\n');
      await Promise.all(cluster.urls.map((url) => allCompact(url)));

      const atB = relayed(b);
      a.insert(a.text.length, 'two\n');
      await a.waitAllAcked();
      await b.waitFor(() => b.text.toString() === 'one\ntwo\n', 'a\'s edit at b');
      assert.equal(relayed(b), atB + 1, 'relayed once by b\'s server');

      await Promise.all(cluster.urls.map((url) => allCompact(url)));
      const atA = relayed(a);
      b.insert(b.text.length, 'three\n');
      await b.waitAllAcked();
      await a.waitFor(() => a.text.toString() === 'one\ntwo\nthree\n', 'b\'s edit at a');
      assert.equal(relayed(a), atA + 1, 'relayed once by a\'s server');
      assert.equal(await cluster.storedText({ account: 'idle-fan', docId }), 'one\ntwo\nthree\n');
    });
  });
}
