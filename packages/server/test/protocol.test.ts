/** Server side of PROTOCOL.md, in-process: state machine, refusals, seeding hand-over, limits, shutdown. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as Y from 'yjs';
import { DOC_FORMAT, MessageType, SyncStep, encodeMessage } from 'wave-protocol';
import type { HelloPayload, Message } from 'wave-protocol';
import { holdableStore, startInProcess } from './helpers/in-process.js';
import type { InProcessServer } from './helpers/in-process.js';
import { TestClient, messagesOfType } from './helpers/test-client.js';
import { deleteRangeUpdate, embedUpdate, ownFutureUpdate } from './helpers/hostile-updates.js';
import { COMPACT_AFTER_BYTES } from '../src/rooms/compaction.js';
import { DEFAULT_LIMITS } from '../src/server.js';
import { normalizeSeed } from '../src/rooms/seed-check.js';
import { UpdateOverLimit } from '../src/rooms/update-check.js';
import { DEFAULT_DEPTH_LIMITS } from '../src/rooms/depth-check.js';

const HELLO_TIMEOUT_MS = 300;

describe('protocol (in-process server)', () => {
  let server: InProcessServer;
  let apiKey: string;
  let docCounter = 0;
  const clients: TestClient[] = [];
  /** A fresh document per test, so tests do not depend on each other. */
  const newDoc = (): string => `doc-${++docCounter}`;
  const connect = async (options: Partial<ConstructorParameters<typeof TestClient>[0]> & { docId: string }): Promise<TestClient> => {
    const client = new TestClient({ url: server.url, apiKey, ...options });
    clients.push(client);
    await client.opened;
    return client;
  };
  /** A document seeded with `seedText` by `client` (acked), and a synced `peer` with the count of Sync frames it got. */
  const seededWithPeer = async (seedText = 'x'): Promise<{ docId: string; client: TestClient; peer: TestClient; peerSyncs: number }> => {
    const docId = newDoc();
    const client = await connect({ docId, seedText });
    await client.waitSynced();
    await client.waitAllAcked();
    const peer = await connect({ docId });
    await peer.waitSynced();
    return { docId, client, peer, peerSyncs: messagesOfType(peer, MessageType.Sync).length };
  };
  /** Asserts the socket got `Error{code}` as its last message and then the close code. */
  const assertRefused = async (client: TestClient, code: string, close: number): Promise<void> => {
    const closed = await client.waitClosed();
    assert.equal(closed.code, close, client.describe());
    const last = client.messages.at(-1);
    assert.equal(last?.type, MessageType.Error, client.describe());
    assert.equal(last.type === MessageType.Error && last.error.code, code);
  };

  before(async () => {
    server = await startInProcess({
      sessionGraceSeconds: 60,
      limits: { helloTimeoutMs: HELLO_TIMEOUT_MS, unloadDelayMs: 50, leasePollMs: 100, compactAfterUpdates: 20 },
    });
    apiKey = (await server.sqlite.createKey({ name: 'protocol' })).record.apiKey;
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await server.cleanup();
  });

  describe('[P2] hello', () => {
    it('closes 4408 after an Error when no Hello arrives in time', async () => {
      const client = await connect({ docId: newDoc(), hello: false });
      const started = Date.now();
      await assertRefused(client, 'validation_error', 4408);
      assert.ok(Date.now() - started >= HELLO_TIMEOUT_MS - 20);
      assert.equal(client.errors[0]?.fatal, false, 'not fatal: a client whose Hello was only late reconnects');
    });

    it('answers a protocol mismatch with Error{protocol_mismatch} and 4426, before any Welcome', async () => {
      const client = await connect({ docId: newDoc(), helloOverride: { protocol: 999 } });
      await assertRefused(client, 'protocol_mismatch', 4426);
      assert.equal(client.messages.length, 1);
    });

    describe('[P2d] document format', () => {
      /** A Hello as a client would write it by hand: JSON of exactly these fields, no format added by the helper. */
      const rawHello = (docId: string, fields: Record<string, unknown>): Uint8Array => {
        const hello = { protocol: 1, apiKey, docId, user: { name: 'old' }, clientId: 77, ...fields };
        return encodeMessage({ type: MessageType.Hello, hello: hello as unknown as HelloPayload });
      };
      for (const [name, fields, named] of [
        ['no format (an earlier, tree-format client)', {}, /no document format/],
        ['another format', { format: 'tree/0' }, /document format "tree\/0"/],
      ] as const) {
        it(`refuses a Hello with ${name}: one fatal Error{protocol_mismatch} naming both formats, 4426, no document byte`, async () => {
          const docId = newDoc();
          const writer = await connect({ docId, seedText: 'stored words' });
          await writer.waitSynced();
          const client = await connect({ docId, hello: false });
          client.sendRaw(rawHello(docId, fields));
          await assertRefused(client, 'protocol_mismatch', 4426);
          assert.equal(client.messages.length, 1, `only the Error: ${client.describe()}`);
          const error = client.errors[0]!;
          assert.equal(error.fatal, true);
          assert.match(error.detail, named);
          assert.ok(error.detail.includes(`"${DOC_FORMAT}"`), error.detail);
          assert.match(error.detail, /update the client/);
        });
      }

      it('accepts the current format', async () => {
        const docId = newDoc();
        const writer = await connect({ docId, seedText: 'stored words' });
        await writer.waitSynced();
        const client = await connect({ docId, hello: false });
        client.sendRaw(rawHello(docId, { format: DOC_FORMAT }));
        await client.waitSynced();
        assert.equal(client.doc.getText('text').toString(), 'stored words');
      });
    });

    it('requires the Hello apiKey/docId to equal the URL', async () => {
      const client = await connect({ docId: newDoc(), helloOverride: { docId: 'another' } });
      await assertRefused(client, 'validation_error', 4400);
      assert.equal(client.welcome, undefined);
    });

    it('requires Hello first', async () => {
      const client = await connect({ docId: newDoc(), hello: false });
      client.send({ type: MessageType.Ping });
      await assertRefused(client, 'validation_error', 4400);
    });

    it('refuses a second Hello', async () => {
      const client = await connect({ docId: newDoc(), seedText: 'x' });
      await client.waitSynced();
      client.sendHello();
      await assertRefused(client, 'validation_error', 4400);
    });
  });

  describe('bad frames (S9, S13)', () => {
    const serverOnly: Message[] = [
      { type: MessageType.Welcome, welcome: { epoch: 1, permission: 'edit', user: {}, color: '#000', joinTime: 1, persistent: false } },
      { type: MessageType.Error, error: { code: 'server_error', detail: 'x', fatal: false } },
      { type: MessageType.Ack, count: 1 },
      { type: MessageType.SeedRequest, epoch: 1 },
      { type: MessageType.Pong },
    ];
    for (const message of serverOnly) {
      it(`closes 4400 on server-only type ${message.type}`, async () => {
        const docId = newDoc();
        const client = await connect({ docId, seedText: 'content' });
        await client.waitSynced();
        const peer = await connect({ docId });
        await peer.waitSynced();
        const before = peer.frames.length;
        client.send(message);
        await assertRefused(client, 'validation_error', 4400);
        // Never relayed: after that point the peer gets only its own acks and presence changes.
        const later = peer.messages.slice(before);
        assert.ok(later.every((m) => m.type === MessageType.Awareness || m.type === MessageType.Ack), JSON.stringify(later.map((m) => m.type)));
      });
    }

    for (const [name, bytes] of [
      ['an unknown type', new Uint8Array([42])],
      ['a truncated sync', new Uint8Array([0, 2, 200])],
      ['trailing bytes', new Uint8Array([...encodeMessage({ type: MessageType.Ping }), 0])],
      ['a text frame', 'hello'],
    ] as const) {
      it(`closes 4400 on ${name}`, async () => {
        const client = await connect({ docId: newDoc(), seedText: 'x' });
        await client.waitSynced();
        client.sendRaw(bytes);
        await assertRefused(client, 'validation_error', 4400);
      });
    }

    it('closes 4400 on an update that does not decode, without ack', async () => {
      const client = await connect({ docId: newDoc(), seedText: 'x' });
      await client.waitSynced();
      await client.waitAllAcked();
      const acked = client.lastAck;
      client.send({ type: MessageType.Sync, step: SyncStep.Update, update: new Uint8Array([1, 2, 3, 4, 5, 6, 7]) });
      await assertRefused(client, 'validation_error', 4400);
      assert.equal(client.lastAck, acked);
    });

    it('closes 4400 on an update with missing dependencies, without ack or relay', async () => {
      const { docId, client, peer } = await seededWithPeer();
      // An update of another doc whose first change the server never saw.
      const other = new Y.Doc();
      other.getText('text').insert(0, 'a');
      const sv = Y.encodeStateVector(other);
      other.getText('text').insert(1, 'b');
      const dependent = Y.encodeStateAsUpdate(other, sv);
      const acked = client.lastAck;
      client.send({ type: MessageType.Sync, step: SyncStep.Update, update: dependent });
      await assertRefused(client, 'validation_error', 4400);
      assert.equal(client.lastAck, acked);
      assert.equal(peer.text.toString(), 'x');
      // The room did not keep the pending part: a new client gets exactly the stored content.
      const fresh = await connect({ docId });
      await fresh.waitSynced();
      assert.equal(fresh.text.toString(), 'x');
    });

    it('closes 4400 on an update whose one delete range is empty, without ack; no other peer is closed', async () => {
      const { docId, client, peer, peerSyncs } = await seededWithPeer('hello');
      const acked = client.lastAck;
      // Inside the seeded item: Yjs would split it and emit nothing, which the room took for a broken document.
      client.send({ type: MessageType.Sync, step: SyncStep.Update, update: deleteRangeUpdate(client.doc.clientID, 2, 0) });
      await assertRefused(client, 'validation_error', 4400);
      assert.equal(client.lastAck, acked);
      peer.insert(5, '!');
      await peer.waitAllAcked();
      assert.equal(peer.closeEvent, undefined, peer.describe());
      assert.equal(messagesOfType(peer, MessageType.Sync).length, peerSyncs, 'nothing was relayed');
      const fresh = await connect({ docId });
      await fresh.waitSynced();
      assert.equal(fresh.text.toString(), 'hello!');
    });

    it("closes 4400 on an update whose item names a later clock of its own client as origin; peers get nothing", async () => {
      const { docId, client, peer, peerSyncs } = await seededWithPeer();
      const acked = client.lastAck;
      client.send({ type: MessageType.Sync, step: SyncStep.Update, update: ownFutureUpdate(client.doc, 0x7fff0003) });
      await assertRefused(client, 'validation_error', 4400);
      assert.equal(client.lastAck, acked);
      // Refused before Yjs saw it: the room still serves its peer, which got none of it.
      peer.insert(1, 'y');
      await peer.waitAllAcked();
      assert.equal(peer.closeEvent, undefined);
      assert.equal(messagesOfType(peer, MessageType.Sync).length, peerSyncs);
      const fresh = await connect({ docId });
      await fresh.waitSynced();
      assert.equal(fresh.text.toString(), 'xy');
    });

    it('closes 4400 on an embed that is not a JSON object (null): peers get nothing', async () => {
      const { docId, client, peer, peerSyncs } = await seededWithPeer();
      client.send({ type: MessageType.Sync, step: SyncStep.Update, update: embedUpdate(client.doc, 0x7fff0005, null) });
      await assertRefused(client, 'validation_error', 4400);
      assert.equal(messagesOfType(peer, MessageType.Sync).length, peerSyncs);
      const fresh = await connect({ docId });
      await fresh.waitSynced();
      assert.deepEqual(fresh.text.toDelta(), [{ insert: 'x' }]);
    });

    it('closes 1009 on a frame over maxPayload', async () => {
      const client = await connect({ docId: newDoc(), seedText: 'x' });
      await client.waitSynced();
      client.send({ type: MessageType.Sync, step: SyncStep.Update, update: new Uint8Array(DEFAULT_LIMITS.maxPayloadBytes + 1) });
      const closed = await client.waitClosed();
      assert.equal(closed.code, 1009);
    });
  });

  describe('[P12] heartbeat', () => {
    it('answers Ping with Pong', async () => {
      const client = await connect({ docId: newDoc(), seedText: 'x' });
      await client.waitSynced();
      client.send({ type: MessageType.Ping });
      client.send({ type: MessageType.Ping });
      await client.waitFor(() => client.pongs === 2, 'two pongs');
    });
  });

  describe('[P3]–[P7] seeding', () => {
    it('sends nothing but Welcome to a waiting client, hands the lease on when the holder leaves', async () => {
      const docId = newDoc();
      const holder = await connect({ docId, autoSeed: false, seedText: 'holder text' });
      await holder.waitFor(() => holder.seedRequests.length === 1, 'SeedRequest');
      const waiter = await connect({ docId, seedText: 'waiter text' });
      await waiter.waitFor(() => waiter.welcome, 'Welcome');
      // While the holder does not seed, the waiter gets nothing else (P3).
      await holder.close();
      await waiter.waitSynced();
      assert.deepEqual(
        waiter.messages.map((m) => m.type),
        [MessageType.Welcome, MessageType.SeedRequest, MessageType.Sync, MessageType.Sync, ...waiter.messages.slice(4).map((m) => m.type)],
      );
      assert.equal(waiter.seedRequests.length, 1, 'the lease passed to the waiter (P6)');
      assert.equal(waiter.text.toString(), 'waiter text');
      const late = await connect({ docId });
      await late.waitSynced();
      assert.equal(late.text.toString(), 'waiter text');
    });

    it('ignores a Seed from a non-holder or for another epoch, but acks it (P7)', async () => {
      const docId = newDoc();
      const seeder = await connect({ docId, seedText: 'real' });
      await seeder.waitSynced();
      const other = await connect({ docId });
      await other.waitSynced();
      const bogus = new Y.Doc();
      bogus.getText('text').insert(0, 'bogus');
      other.send({ type: MessageType.Seed, epoch: other.welcome!.epoch, update: Y.encodeStateAsUpdate(bogus) });
      other.send({ type: MessageType.Seed, epoch: other.welcome!.epoch + 5, update: Y.encodeStateAsUpdate(bogus) });
      other.sent += 2;
      await other.waitAllAcked();
      // The seeder also re-sends its seed: too late, ignored.
      seeder.send({ type: MessageType.Seed, epoch: seeder.welcome!.epoch, update: Y.encodeStateAsUpdate(bogus) });
      seeder.sent++;
      await seeder.waitAllAcked();
      const fresh = await connect({ docId });
      await fresh.waitSynced();
      assert.equal(fresh.text.toString(), 'real');
      assert.equal(seeder.text.toString(), 'real');
    });

    it('refuses an update from a client that is still waiting for the document', async () => {
      const docId = newDoc();
      const holder = await connect({ docId, autoSeed: false });
      await holder.waitFor(() => holder.seedRequests.length === 1, 'SeedRequest');
      const waiter = await connect({ docId });
      await waiter.waitFor(() => waiter.welcome, 'Welcome');
      const d = new Y.Doc();
      d.getText('text').insert(0, 'early');
      waiter.send({ type: MessageType.Sync, step: SyncStep.Update, update: Y.encodeStateAsUpdate(d) });
      await assertRefused(waiter, 'validation_error', 4400);
      holder.seed(holder.seedRequests[0]!);
      await holder.waitSynced();
      assert.equal(holder.text.toString(), '');
    });

    it('seeds an empty document with an empty update', async () => {
      const docId = newDoc();
      const client = await connect({ docId });
      await client.waitSynced();
      await client.waitAllAcked();
      assert.equal(client.seedRequests.length, 1);
      client.insert(0, 'typed');
      await client.waitAllAcked();
      const fresh = await connect({ docId, seedText: 'not used' });
      await fresh.waitSynced();
      assert.equal(fresh.text.toString(), 'typed');
    });
  });

  describe('[P9][P10] sync', () => {
    it('relays updates to synced peers and answers step1 with the missing part', async () => {
      const docId = newDoc();
      const a = await connect({ docId, seedText: 'abc' });
      await a.waitSynced();
      const b = await connect({ docId });
      await b.waitSynced();
      a.insert(3, 'd');
      await b.waitFor(() => b.text.toString() === 'abcd', 'relayed update');
      // b asks for what it lacks relative to an empty state vector: the whole document.
      const before = messagesOfType(b, MessageType.Sync).length;
      b.send({ type: MessageType.Sync, step: SyncStep.Step1, stateVector: Y.encodeStateVector(new Y.Doc()) });
      const reply = await b.waitFor(() => messagesOfType(b, MessageType.Sync).slice(before).find((m) => m.step === SyncStep.Step2), 'step2');
      const check = new Y.Doc();
      Y.applyUpdate(check, reply.step === SyncStep.Step2 ? reply.update : new Uint8Array());
      assert.equal(check.getText('text').toString(), 'abcd');
      // The sender does not get its own update back.
      assert.ok(messagesOfType(a, MessageType.Sync).every((m) => m.step !== SyncStep.Update));
    });

    it('relays what an update changed, not content it repeats: a client cannot make peers download the document again', async () => {
      const docId = newDoc();
      const a = await connect({ docId, seedText: 'x'.repeat(20_000) });
      await a.waitSynced();
      const c = await connect({ docId });
      await c.waitSynced();
      // d sends the whole document it already has, with one new character.
      const d = await connect({ docId });
      await d.waitSynced();
      const copy = new Y.Doc();
      Y.applyUpdate(copy, Y.encodeStateAsUpdate(d.doc));
      copy.getText('text').insert(0, '!');
      const whole = Y.encodeStateAsUpdate(copy);
      assert.ok(whole.length > 20_000);
      const from = messagesOfType(c, MessageType.Sync).length;
      d.send({ type: MessageType.Sync, step: SyncStep.Update, update: whole });
      const relayed = await c.waitFor(() => messagesOfType(c, MessageType.Sync).slice(from).find((m) => m.step === SyncStep.Update), 'the relayed edit');
      assert.ok(relayed.step === SyncStep.Update && relayed.update.length < 1_000, `relayed ${relayed.step === SyncStep.Update ? relayed.update.length : 0} bytes`);
      await c.waitFor(() => c.text.toString().startsWith('!x'), 'the edit');
    });

    it('merges offline edits sent in the step2 reply on reconnect', async () => {
      const docId = newDoc();
      const a = await connect({ docId, seedText: 'shared' });
      await a.waitSynced();
      await a.close();
      const b = await connect({ docId });
      await b.waitSynced();
      // "Offline" edits made on a copy of a's document, then a reconnect with the same doc state.
      const offline = new TestClient({ url: server.url, apiKey, docId, hello: false });
      clients.push(offline);
      Y.applyUpdate(offline.doc, Y.encodeStateAsUpdate(a.doc));
      offline.text.insert(6, ' offline');
      await offline.opened;
      offline.sendHello();
      await offline.waitSynced();
      await offline.waitAllAcked();
      await b.waitFor(() => b.text.toString() === 'shared offline', 'offline edit merged once');
      assert.equal(offline.text.toString(), 'shared offline');
    });

    /** The document's stored rows (epoch 1) once they are at most `rows`, or after ~2 s of polling as they are. */
    const storedWithin = async (docId: string, rows: number) => {
      const key = { account: 'protocol', docId };
      let stored = await server.sqlite.loadDocument(key, 1);
      for (let i = 0; i < 100 && stored.updates.length > rows; i++) {
        await new Promise((r) => setTimeout(r, 20));
        stored = await server.sqlite.loadDocument(key, 1);
      }
      return stored;
    };

    it('compacts after one update larger than the document before it, long before the update count', async () => {
      const docId = newDoc();
      const a = await connect({ docId, seedText: 'seed\n' });
      await a.waitSynced();
      const pasted = 'a pasted chapter. '.repeat(4_000);
      assert.ok(pasted.length > COMPACT_AFTER_BYTES);
      a.insert(a.text.length, pasted);
      await a.waitAllAcked();
      // Compaction runs after the commit: wait until the seed and the paste are one row (bounded).
      const stored = await storedWithin(docId, 1);
      assert.equal(stored.updates.length, 1, 'the seed and the paste were compacted into one row');
      const rebuilt = new Y.Doc();
      Y.applyUpdate(rebuilt, stored.updates[0]!);
      assert.equal(rebuilt.getText('text').toString(), `seed\n${pasted}`);
    });

    it('compacts stored updates through the doc without changing the content', async () => {
      const docId = newDoc();
      const a = await connect({ docId, seedText: '0' });
      await a.waitSynced();
      for (let i = 1; i <= 100; i++) {
        a.insert(a.text.length, String(i % 10));
        if (i % 10 === 0) await a.waitAllAcked();
      }
      await a.waitAllAcked();
      const expected = a.text.toString();
      await a.close();
      // Compaction runs after the commits: wait until the stored update count dropped (bounded).
      const stored = await storedWithin(docId, 25);
      assert.ok(stored.updates.length <= 25, `compacted: ${stored.updates.length} updates stored`);
      const rebuilt = new Y.Doc();
      for (const u of stored.updates) Y.applyUpdate(rebuilt, u);
      assert.equal(rebuilt.getText('text').toString(), expected);
      const fresh = await connect({ docId });
      await fresh.waitSynced();
      assert.equal(fresh.text.toString(), expected);
    });
  });

  describe('keys and limits', () => {
    it('refuses a Hello without a token for a key that requires one (S1)', async () => {
      const key = (await server.sqlite.createKey({ name: 'tok', requireToken: true })).record.apiKey;
      const client = new TestClient({ url: server.url, apiKey: key, docId: newDoc() });
      clients.push(client);
      await assertRefused(client, 'validation_error', 4401);
      assert.equal(client.welcome, undefined);
    });

    it('refuses connections over the key\'s max users with session_full', async () => {
      const key = (await server.sqlite.createKey({ name: 'small', maxUsers: 1 })).record.apiKey;
      const docId = newDoc();
      const first = new TestClient({ url: server.url, apiKey: key, docId, seedText: 'x' });
      clients.push(first);
      await first.waitSynced();
      const second = new TestClient({ url: server.url, apiKey: key, docId });
      clients.push(second);
      await assertRefused(second, 'session_full', 4409);
    });

    it('unloads rooms without connections', async () => {
      const docId = newDoc();
      const a = await connect({ docId, seedText: 'x' });
      await a.waitSynced();
      const rooms = server.stats().rooms;
      assert.ok(rooms >= 1);
      await a.close();
      for (let i = 0; i < 100 && server.stats().rooms >= rooms; i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok(server.stats().rooms < rooms, 'the idle room was unloaded');
    });
  });
});

describe('graceful shutdown (D4)', () => {
  it('commits and acks pending edits, then closes sockets with 1012', async () => {
    let holdable!: ReturnType<typeof holdableStore>;
    const server = await startInProcess({}, (sqlite) => (holdable = holdableStore(sqlite)).store);
    const apiKey = (await server.sqlite.createKey({ name: 'shutdown' })).record.apiKey;
    const client = new TestClient({ url: server.url, apiKey, docId: 'sd', seedText: 'start' });
    await client.waitSynced();
    await client.waitAllAcked();
    // Commits are held: the edits are applied and relayed but not stored, so not acked, when the shutdown starts.
    holdable.hold();
    for (let i = 0; i < 50; i++) client.insert(client.text.length, `.${i}`);
    // Messages of a connection are handled in order: the Pong proves the server has applied every edit.
    client.send({ type: MessageType.Ping });
    await client.waitFor(() => client.pongs === 1, 'pong');
    assert.ok(client.lastAck < client.sent, 'edits still unacked when the shutdown starts');
    const closing = server.close();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(client.closeEvent, undefined, 'sockets stay open until the pending commits are stored');
    holdable.release();
    const closed = await client.waitClosed();
    await closing;
    assert.equal(closed.code, 1012);
    assert.equal(client.lastAck, client.sent, 'every edit acked before the close');
    const ackIndex = client.frames.findLastIndex((f) => f.message?.type === MessageType.Ack);
    assert.ok(ackIndex >= 0);
    // The store was closed by its owner only: reopen through a fresh handle to check the content.
    const stored = await server.sqlite.loadDocument({ account: 'shutdown', docId: 'sd' }, 1);
    const doc = new Y.Doc();
    for (const u of stored.updates) Y.applyUpdate(doc, u);
    assert.equal(doc.getText('text').toString(), client.text.toString());
    await server.cleanup();
  });
});

describe('structs per update (limits.maxStructsPerUpdate)', () => {
  it('refuses an update over the limit with document_too_large (4413) before applying it: an edit too large, not a broken one', async () => {
    const server = await startInProcess({ limits: { maxStructsPerUpdate: 50 } });
    const apiKey = (await server.sqlite.createKey({ name: 'structs' })).record.apiKey;
    const a = new TestClient({ url: server.url, apiKey, docId: 'st', seedText: 'start' });
    const b = new TestClient({ url: server.url, apiKey, docId: 'st' });
    try {
      await a.waitSynced();
      await a.waitAllAcked();
      await b.waitSynced();
      // 50 structs (one-character inserts at the start, each before the last): at the limit, accepted.
      a.doc.transact(() => {
        for (let i = 0; i < 50; i++) a.text.insert(0, 'x');
      });
      await a.waitAllAcked();
      await b.waitFor(() => b.text.toString() === 'x'.repeat(50) + 'start', 'the edit at the limit relayed');
      const framesBefore = b.frames.length;
      a.doc.transact(() => {
        for (let i = 0; i < 51; i++) a.text.insert(0, 'y');
      });
      const closed = await a.waitClosed();
      assert.equal(closed.code, 4413);
      assert.deepEqual(a.errors.map((e) => [e.code, e.fatal]), [['document_too_large', true]]);
      assert.match(a.errors[0]!.detail ?? '', /51 structs \(limit 50\)/);
      assert.ok(a.lastAck < a.sent, 'not acked');
      assert.equal(b.frames.slice(framesBefore).filter((f) => f.bytes[0] === 0).length, 0, 'not relayed');
      const fresh = new TestClient({ url: server.url, apiKey, docId: 'st' });
      await fresh.waitSynced();
      assert.equal(fresh.text.toString(), 'x'.repeat(50) + 'start', 'not applied or stored');
      await fresh.close();
    } finally {
      await Promise.all([a.close(), b.close()]);
      await server.cleanup();
    }
  });

  it('a seed over five times the limit is refused the same way', () => {
    const doc = new Y.Doc();
    doc.transact(() => {
      for (let i = 0; i < 6; i++) doc.getText('text').insert(0, 'x');
    });
    assert.throws(() => normalizeSeed(Y.encodeStateAsUpdate(doc), 5, DEFAULT_DEPTH_LIMITS), UpdateOverLimit);
    assert.equal(Y.decodeUpdate(normalizeSeed(Y.encodeStateAsUpdate(doc), 6, DEFAULT_DEPTH_LIMITS)).structs.length, 6);
  });
});
