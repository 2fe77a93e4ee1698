/**
 * Rooms with other servers behind a fan-out, in-process with a hand-driven `FakeFanout` (no Redis needed):
 * what a room publishes and when, and how it applies what other servers committed (README "Running more than
 * one server", rules F1–F6).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as Y from 'yjs';
import * as awarenessProtocol from 'y-protocols/awareness';
import { MessageType } from 'wave-protocol';
import type { DocKey } from '../src/store/types.js';
import { FakeFanout } from './helpers/fake-fanout.js';
import { startInProcess } from './helpers/in-process.js';
import { pollUntil } from './helpers/poll.js';
import type { InProcessServer } from './helpers/in-process.js';
import { TestClient } from './helpers/test-client.js';

describe('rooms behind a fan-out (in-process, fake fan-out)', () => {
  let server: InProcessServer;
  let fanout: FakeFanout;
  let apiKey: string;
  let counter = 0;
  const clients: TestClient[] = [];
  const account = 'fan';
  const newDoc = (): string => `fan-doc-${++counter}`;
  const connect = async (docId: string, seedText?: string): Promise<TestClient> => {
    const client = new TestClient({ url: server.url, apiKey, docId, ...(seedText !== undefined ? { seedText } : {}) });
    clients.push(client);
    await client.opened;
    return client;
  };
  /** A doc holding what the store holds now: "another server" that loaded the document. */
  const otherServer = async (doc: DocKey): Promise<{ ydoc: Y.Doc; edit: (f: (t: Y.Text) => void) => Uint8Array }> => {
    const session = await server.sqlite.getSession(doc);
    const ydoc = new Y.Doc();
    for (const u of (await server.sqlite.loadDocument(doc, session!.epoch)).updates) Y.applyUpdate(ydoc, u);
    return {
      ydoc,
      edit(f) {
        let update: Uint8Array | undefined;
        const capture = (u: Uint8Array): void => {
          update = u;
        };
        ydoc.on('update', capture);
        f(ydoc.getText('text'));
        ydoc.off('update', capture);
        return update!;
      },
    };
  };

  before(async () => {
    fanout = new FakeFanout();
    // A lease poll of 60 s: anything that happens sooner came through the fan-out, not through polling.
    server = await startInProcess({ redis: fanout, limits: { leasePollMs: 60_000, unloadDelayMs: 50, compactAfterUpdates: 10 } });
    apiKey = (await server.sqlite.createKey({ name: account })).record.apiKey;
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await server.cleanup();
  });

  it('[F1] publishes a local update only after it is committed, in commit order, once', async () => {
    const docId = newDoc();
    const client = await connect(docId, 'base;');
    await client.waitSynced();
    const feed = fanout.feed(docId);
    const lastSeqs: Array<Promise<number>> = [];
    feed.onPublish = (p) => {
      if (p.kind === 'update') lastSeqs.push(server.sqlite.lastSeq({ account, docId }, 1));
    };
    for (const s of ['a', 'b', 'c']) client.insert(client.text.length, s);
    await client.waitAllAcked();
    const updates = feed.published.filter((p) => p.kind === 'update');
    assert.equal(updates.length, 3);
    // When each was published, the store already held it (the seed is seq 1, then one row per edit).
    const seqs = await Promise.all(lastSeqs);
    assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
    assert.ok(seqs[0]! >= 2, `stored before published: ${seqs.join(',')}`);
    // The seed (first stored row) plus what was published rebuild the document: nothing is missing.
    const replay = new Y.Doc();
    Y.applyUpdate(replay, (await server.sqlite.loadDocument({ account, docId }, 1)).updates[0]!);
    for (const p of feed.published) if (p.kind === 'update') Y.applyUpdate(replay, p.update);
    assert.equal(replay.getText('text').toString(), 'base;abc');
    assert.deepEqual(feed.published.map((p) => p.kind).filter((k) => k === 'seeded'), ['seeded'], 'the seed is announced');
  });

  it('[D6] acks an edit only once it is committed and the fan-out accepted it', async () => {
    const docId = newDoc();
    const client = await connect(docId, 'held;');
    await client.waitSynced();
    await client.waitAllAcked();
    const feed = fanout.feed(docId);
    feed.holding = true; // the fan-out lost Redis: publishes wait
    const published = new Promise<void>((resolve) => {
      feed.onPublish = (p) => {
        if (p.kind === 'update' && feed.published.filter((q) => q.kind === 'update').length === 2) resolve();
      };
    });
    client.insert(client.text.length, 'a');
    client.insert(client.text.length, 'b');
    await published; // both committed (publishes follow commits)
    // A Pong is answered after any ack the commit released: the server handles frames in order.
    const pongs = client.pongs;
    client.send({ type: MessageType.Ping });
    await client.waitFor(() => client.pongs > pongs, 'the pong');
    assert.ok(client.lastAck < client.sent, `no ack while the fan-out holds the edits (acked ${client.lastAck} of ${client.sent})`);
    feed.accept();
    await client.waitAllAcked();
    assert.equal(client.lastAck, client.sent);
  });

  it('[F2] relays an update from another server to its peers without storing or publishing it again', async () => {
    const docId = newDoc();
    const doc = { account, docId };
    const a = await connect(docId, 'shared;');
    await a.waitSynced();
    await a.waitAllAcked();
    const feed = fanout.feed(docId);
    const other = await otherServer(doc);
    const before = await server.sqlite.lastSeq(doc, 1);
    const publishedBefore = feed.published.length;
    feed.deliver({ kind: 'update', epoch: 1, update: other.edit((t) => t.insert(t.length, 'remote')) });
    await a.waitFor(() => a.text.toString() === 'shared;remote', 'the remote edit');
    assert.equal(await server.sqlite.lastSeq(doc, 1), before, 'not stored again');
    assert.equal(feed.published.length, publishedBefore, 'not published again');
    // Updates of an ended epoch are ignored.
    feed.deliver({ kind: 'update', epoch: 0, update: other.edit((t) => t.insert(0, 'stale')) });
    const b = await connect(docId);
    await b.waitSynced();
    assert.equal(b.text.toString(), 'shared;remote');
  });

  it('[F3] takes the missing dependencies of a remote update from the store', async () => {
    const docId = newDoc();
    const doc = { account, docId };
    const a = await connect(docId, 'x');
    await a.waitSynced();
    await a.waitAllAcked();
    const feed = fanout.feed(docId);
    const other = await otherServer(doc);
    // "Another server" commits two updates and dies before publishing the first one.
    const first = other.edit((t) => t.insert(1, '1'));
    const second = other.edit((t) => t.insert(2, '2'));
    await server.sqlite.appendUpdates([
      { doc, epoch: 1, update: first },
      { doc, epoch: 1, update: second },
    ]);
    feed.deliver({ kind: 'update', epoch: 1, update: second });
    await a.waitFor(() => a.text.toString() === 'x12', 'both edits, the missing one read from the store');
    // A gap notice (entries lost in Redis) also reloads: a third update only in the store arrives.
    await server.sqlite.appendUpdates([{ doc, epoch: 1, update: other.edit((t) => t.insert(3, '3')) }]);
    feed.deliver({ kind: 'gap' });
    await a.waitFor(() => a.text.toString() === 'x123', 'the stored update after a gap');
    // The room still takes local edits (no pending state left behind to reject them).
    a.insert(0, '>');
    await a.waitAllAcked();
    assert.equal(a.errors.length, 0);
  });

  it('[F4] closes its peers with 1012 when another server opened a newer epoch', async () => {
    const docId = newDoc();
    const a = await connect(docId, 'old session');
    await a.waitSynced();
    fanout.feed(docId).deliver({ kind: 'session', epoch: 2 });
    const closed = await a.waitClosed(2_000);
    assert.equal(closed.code, 1012);
  });

  it('[F5] syncs peers waiting for a seed as soon as another server announces it', async () => {
    const docId = newDoc();
    const doc = { account, docId };
    const now = Date.now();
    // A client on "another server" holds the lease of the new document.
    await server.sqlite.openSession(doc, { now, graceMs: 60_000, persistent: false });
    assert.equal(await server.sqlite.acquireSeedLease(doc, 1, 'other-server/c1', now, 60_000), true);
    const waiter = await connect(docId, 'must not seed');
    await waiter.waitFor(() => waiter.welcome, 'Welcome');
    const seed = new Y.Doc();
    seed.getText('text').insert(0, 'seeded elsewhere');
    assert.equal(await server.sqlite.commitSeed(doc, 1, 'other-server/c1', Y.encodeStateAsUpdate(seed), Date.now()), true);
    const started = Date.now();
    fanout.feed(docId).deliver({ kind: 'seeded', epoch: 1 });
    await waiter.waitSynced(2_000);
    assert.ok(Date.now() - started < 1_000, 'at once, not at the next lease poll');
    assert.deepEqual(waiter.seedRequests, []);
    assert.equal(waiter.text.toString(), 'seeded elsewhere');
  });

  it('[F6] publishes local presence and relays presence from other servers', async () => {
    const docId = newDoc();
    const a = await connect(docId, 'p');
    await a.waitSynced();
    const feed = fanout.feed(docId);
    a.setPresence({ cursor: 1 });
    await pollUntil(() => feed.published.some((p) => p.kind === 'awareness'), 'published presence', 2_000);
    const published = feed.published.find((p) => p.kind === 'awareness');
    const seen = new awarenessProtocol.Awareness(new Y.Doc());
    awarenessProtocol.applyAwarenessUpdate(seen, (published as { update: Uint8Array }).update, 'test');
    assert.equal((seen.getStates().get(a.clientId) as { user?: { name?: string } }).user?.name, 'tester', 'stamped before it travels');

    // A user on another server.
    const remote = new awarenessProtocol.Awareness(new Y.Doc());
    remote.setLocalState({ user: { name: 'far away' }, cursor: 7 });
    const published0 = feed.published.length;
    feed.deliver({ kind: 'awareness', update: awarenessProtocol.encodeAwarenessUpdate(remote, [remote.clientID]) });
    await a.waitFor(() => a.awareness.getStates().has(remote.clientID), 'remote presence');
    assert.equal(feed.published.length, published0, 'not published back');
    remote.destroy();
    seen.destroy();
  });

  it('[F7] compacts from what the store holds, so that updates of other servers are kept', async () => {
    const docId = newDoc();
    const doc = { account, docId };
    const a = await connect(docId, 's');
    await a.waitSynced();
    await a.waitAllAcked();
    const other = await otherServer(doc);
    // Committed by another server and not (yet) received here: compaction must not drop it.
    await server.sqlite.appendUpdates([{ doc, epoch: 1, update: other.edit((t) => t.insert(0, 'OTHER;')) }]);
    for (let i = 0; i < 15; i++) a.insert(a.text.length, String(i % 10));
    await a.waitAllAcked();
    const feed = fanout.feed(docId);
    await pollUntil(() => feed.published.some((p) => p.kind === 'compacted'), 'a compaction', 5_000);
    const stored = new Y.Doc();
    for (const u of (await server.sqlite.loadDocument(doc, 1)).updates) Y.applyUpdate(stored, u);
    assert.match(stored.getText('text').toString(), /^OTHER;s0123456789/);
    // The peer received it as well, from the store read that preceded the compaction.
    await a.waitFor(() => a.text.toString().startsWith('OTHER;'), 'the other server\'s edit');
  });
});
