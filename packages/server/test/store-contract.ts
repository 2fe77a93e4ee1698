/**
 * The contract every `Store` passes (STYLE.md 4: one suite for every backend). Call `runStoreContract` from a
 * backend's test file with a factory that returns a fresh, empty store. Times are passed explicitly (`now`), so
 * nothing here sleeps.
 */
import assert from 'node:assert/strict';
import { describe, it, beforeEach, afterEach } from 'node:test';
import * as Y from 'yjs';
import type { DocKey, Store } from '../src/store/types.js';
import { webhookContract } from './store-webhooks-contract.js';

export interface StoreFixture {
  store: Store;
  /** Closes the store and removes what it wrote. */
  cleanup(): Promise<void>;
}

const T0 = 1_700_000_000_000;
const GRACE = 1_000;

function textUpdate(doc: Y.Doc, index: number, text: string): Uint8Array {
  let update: Uint8Array | undefined;
  const capture = (u: Uint8Array): void => {
    update = u;
  };
  doc.on('update', capture);
  doc.getText('text').insert(index, text);
  doc.off('update', capture);
  assert.ok(update, 'the edit produced an update');
  return update;
}

function rebuild(updates: Uint8Array[]): string {
  const doc = new Y.Doc();
  for (const u of updates) Y.applyUpdate(doc, u);
  const text = doc.getText('text').toString();
  doc.destroy();
  return text;
}

export function runStoreContract(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`Store contract: ${name}`, () => {
    let fixture: StoreFixture;
    let store: Store;
    const doc: DocKey = { account: 'acme', docId: 'doc-1' };
    const other: DocKey = { account: 'acme', docId: 'doc-2' };
    const open = (d: DocKey, now: number, persistent = false) => store.openSession(d, { now, graceMs: GRACE, persistent });

    beforeEach(async () => {
      fixture = await makeStore();
      store = fixture.store;
    });
    afterEach(async () => {
      await fixture.cleanup();
    });

    describe('keys', () => {
      it('creates a key with a random apiKey and a secret shown once', async () => {
        const { record, secret } = await store.createKey({ name: 'site', origins: ['https://app.example.com'] });
        assert.match(record.apiKey, /^wk_[A-Za-z0-9_-]{24}$/);
        assert.match(secret, /^wsk_[A-Za-z0-9_-]{43}$/);
        assert.equal(record.name, 'site');
        assert.equal(record.account, 'site', 'account defaults to the name');
        assert.deepEqual(record.origins, ['https://app.example.com']);
        assert.equal(record.requireToken, false);
        assert.equal(record.persistent, false);
        assert.equal(record.maxUsers, null);
        assert.equal(record.revokedAt, null);
        const again = await store.createKey({ name: 'site' });
        assert.notEqual(again.record.apiKey, record.apiKey);
        assert.notEqual(again.secret, secret);
      });

      it('finds and lists keys with every field', async () => {
        const { record } = await store.createKey({
          name: 'n',
          account: 'acct',
          origins: ['self', 'HTTP://Localhost:3000'],
          requireToken: true,
          persistent: true,
          maxUsers: 7,
        });
        const found = await store.findKey(record.apiKey);
        assert.deepEqual(found, record);
        assert.deepEqual(found?.origins, ['self', 'http://localhost:3000']);
        assert.equal(found?.account, 'acct');
        assert.equal(found?.requireToken, true);
        assert.equal(found?.persistent, true);
        assert.equal(found?.maxUsers, 7);
        assert.equal(await store.findKey('wk_unknown'), undefined);
        const second = await store.createKey({ name: 'm' });
        const list = await store.listKeys();
        assert.deepEqual(
          list.map((k) => k.apiKey),
          [record.apiKey, second.record.apiKey],
        );
      });

      it('rejects invalid key input', async () => {
        await assert.rejects(store.createKey({ name: '' }), TypeError);
        await assert.rejects(store.createKey({ name: 'x', origins: ['https://a.example/path'] }), TypeError);
        await assert.rejects(store.createKey({ name: 'x', maxUsers: 0 }), TypeError);
        assert.deepEqual(await store.listKeys(), []);
      });

      it('revokes a key once', async () => {
        const { record } = await store.createKey({ name: 'r' });
        assert.equal(await store.revokeKey(record.apiKey), true);
        assert.equal(await store.revokeKey(record.apiKey), false);
        assert.equal(await store.revokeKey('wk_unknown'), false);
        const found = await store.findKey(record.apiKey);
        assert.ok(found, 'a revoked key is still found');
        assert.equal(typeof found.revokedAt, 'number');
      });

      it('updates the origins and token rule of an active key only', async () => {
        const { record } = await store.createKey({ name: 'u', origins: ['https://a.example'], maxUsers: 3 });
        const updated = await store.updateKey(record.apiKey, { origins: ['HTTPS://B.example:443', 'self'], requireToken: true });
        assert.deepEqual(updated, { ...record, origins: ['https://b.example', 'self'], requireToken: true });
        assert.deepEqual(await store.findKey(record.apiKey), updated);
        assert.deepEqual(await store.updateKey(record.apiKey, { origins: [] }), { ...updated, origins: [] }, 'absent fields stay');
        await assert.rejects(store.updateKey(record.apiKey, { origins: ['https://a.example/path'] }), TypeError);
        assert.equal(await store.updateKey('wk_unknown', { requireToken: true }), undefined);
        await store.revokeKey(record.apiKey);
        assert.equal(await store.updateKey(record.apiKey, { requireToken: false }), undefined, 'a revoked key stays revoked');
      });

      it('reports revocations and updates to key watchers', async () => {
        const { record } = await store.createKey({ name: 'w' });
        const reports: Array<{ apiKey: string | undefined; at: number }> = [];
        const stop = store.watchKeys((apiKey) => reports.push({ apiKey, at: performance.now() }));
        try {
          // A report covers a change when it names the key or "any key", and arrives after the change committed.
          const covered = async (since: number, what: string, apiKey: string): Promise<void> => {
            const deadline = Date.now() + 5_000;
            while (!reports.some((r) => r.at >= since && (r.apiKey === undefined || r.apiKey === apiKey))) {
              assert.ok(Date.now() < deadline, `no watcher report for ${what}`);
              await new Promise((r) => setTimeout(r, 20));
            }
          };
          // Once the watcher is live (it reported a change of another key), every later change gets its report.
          const warmUp = (await store.createKey({ name: 'warm-up' })).record.apiKey;
          await store.revokeKey(warmUp);
          await covered(0, 'a change of another key', warmUp);
          let since = performance.now();
          await store.updateKey(record.apiKey, { origins: ['https://a.example'] });
          await covered(since, 'updateKey', record.apiKey);
          since = performance.now();
          await store.revokeKey(record.apiKey);
          await covered(since, 'revokeKey', record.apiKey);
        } finally {
          await stop();
        }
      });

      it('verifies secrets', async () => {
        const { record, secret } = await store.createKey({ name: 's' });
        assert.equal(await store.verifySecret(record.apiKey, secret), true);
        assert.equal(await store.verifySecret(record.apiKey, `${secret}x`), false);
        assert.equal(await store.verifySecret(record.apiKey, ''), false);
        assert.equal(await store.verifySecret('wk_unknown', secret), false);
        await store.revokeKey(record.apiKey);
        assert.equal(await store.verifySecret(record.apiKey, secret), false, 'a revoked key verifies nothing');
      });
    });

    describe('sessions', () => {
      it('starts a new document at epoch 1, unseeded', async () => {
        assert.equal(await store.getSession(doc), undefined);
        assert.deepEqual(await open(doc, T0), { epoch: 1, seeded: false });
        assert.deepEqual(await store.getSession(doc), { epoch: 1, seeded: false });
      });

      it('keeps the epoch and content within the grace period', async () => {
        await open(doc, T0);
        assert.equal(await store.acquireSeedLease(doc, 1, 'h', T0, 10_000), true);
        assert.equal(await store.commitSeed(doc, 1, 'h', textUpdate(new Y.Doc(), 0, 'seed'), T0), true);
        assert.deepEqual(await open(doc, T0 + GRACE), { epoch: 1, seeded: true });
        // openSession marks activity: measured from T0 + GRACE now.
        assert.deepEqual(await open(doc, T0 + 2 * GRACE), { epoch: 1, seeded: true });
        assert.equal(rebuild((await store.loadDocument(doc, 1)).updates), 'seed');
      });

      it('touchSession keeps a session alive', async () => {
        await open(doc, T0);
        await store.touchSession(doc, 1, T0 + 900);
        await store.touchSession(doc, 1, T0 + 100); // older touches never move activity back
        assert.deepEqual(await open(doc, T0 + 1_800), { epoch: 1, seeded: false });
        await store.touchSession(doc, 99, T0 + 10_000); // another epoch: no effect
        assert.equal((await open(doc, T0 + 10_000)).epoch, 2);
      });

      it('touchSessions touches many sessions at once and names the touches whose session is gone', async () => {
        const third: DocKey = { account: 'acme', docId: 'doc-3' };
        const never: DocKey = { account: 'acme', docId: 'never-opened' };
        await open(doc, T0);
        await open(other, T0);
        await open(third, T0);
        await store.deleteDocument(third, T0);
        const ended = await store.touchSessions(
          [
            { doc, epoch: 1 },
            { doc: other, epoch: 99 },
            { doc: third, epoch: 1 },
            { doc: never, epoch: 1 },
          ],
          T0 + 900,
        );
        assert.deepEqual(ended, [1, 2, 3], 'another epoch, a deleted document and one never seen');
        assert.deepEqual(await store.touchSessions([{ doc, epoch: 1 }], T0 + 100), [], 'an older touch still matches');
        // Kept alive from T0 + 900 (the older touch did not move it back); the other one expired from T0.
        assert.deepEqual(await open(doc, T0 + 1_800), { epoch: 1, seeded: false });
        assert.equal((await open(other, T0 + 1_800)).epoch, 2);
        assert.deepEqual(await store.touchSessions([], T0), []);
      });

      it('starts a new epoch after the grace period and drops the old content', async () => {
        await open(doc, T0);
        await store.acquireSeedLease(doc, 1, 'h', T0, 10_000);
        const author = new Y.Doc();
        await store.commitSeed(doc, 1, 'h', textUpdate(author, 0, 'old'), T0);
        await store.appendUpdates([{ doc, epoch: 1, update: textUpdate(author, 3, '!') }]);
        assert.deepEqual(await open(doc, T0 + GRACE + 1), { epoch: 2, seeded: false });
        assert.deepEqual((await store.loadDocument(doc, 1)).updates, []);
        assert.deepEqual((await store.loadDocument(doc, 2)).updates, []);
        assert.equal(await store.lastSeq(doc, 1), 0);
        // The old epoch cannot be written any more.
        await store.appendUpdates([{ doc, epoch: 1, update: textUpdate(author, 0, 'late') }]);
        assert.deepEqual((await store.loadDocument(doc, 1)).updates, []);
      });

      it('never ends a persistent session', async () => {
        await open(doc, T0, true);
        assert.deepEqual(await open(doc, T0 + 365 * 24 * 3600 * 1000, true), { epoch: 1, seeded: false });
      });

      it('gives the seed lease to one holder at a time', async () => {
        await open(doc, T0);
        assert.equal(await store.acquireSeedLease(doc, 1, 'a', T0, 1_000), true);
        assert.equal(await store.acquireSeedLease(doc, 1, 'b', T0 + 10, 1_000), false, 'exclusive');
        assert.equal(await store.acquireSeedLease(doc, 1, 'a', T0 + 900, 1_000), true, 'renewal by the holder');
        assert.equal(await store.acquireSeedLease(doc, 1, 'b', T0 + 1_500, 1_000), false, 'renewed until T0 + 1900');
        assert.equal(await store.acquireSeedLease(doc, 1, 'b', T0 + 1_901, 1_000), true, 'expired: another holder');
        assert.equal(await store.acquireSeedLease(doc, 1, 'a', T0 + 1_902, 1_000), false);
        await store.releaseSeedLease(doc, 1, 'a'); // not the holder: no effect
        assert.equal(await store.acquireSeedLease(doc, 1, 'c', T0 + 1_903, 1_000), false);
        await store.releaseSeedLease(doc, 1, 'b');
        assert.equal(await store.acquireSeedLease(doc, 1, 'c', T0 + 1_904, 1_000), true, 'released');
        assert.equal(await store.acquireSeedLease(doc, 2, 'd', T0 + 1_905, 1_000), false, 'not the current epoch');
        assert.equal(await store.acquireSeedLease(other, 1, 'd', T0, 1_000), false, 'document never opened');
      });

      it('lets only the holder commit the seed, once', async () => {
        await open(doc, T0);
        const seed = textUpdate(new Y.Doc(), 0, 'hello');
        assert.equal(await store.commitSeed(doc, 1, 'nobody', seed, T0), false, 'no lease');
        await store.acquireSeedLease(doc, 1, 'a', T0, 1_000);
        assert.equal(await store.commitSeed(doc, 1, 'b', seed, T0), false, 'not the holder');
        assert.equal(await store.commitSeed(doc, 2, 'a', seed, T0), false, 'another epoch');
        assert.deepEqual((await store.loadDocument(doc, 1)).updates, []);
        assert.equal(await store.commitSeed(doc, 1, 'a', seed, T0), true);
        assert.deepEqual(await store.getSession(doc), { epoch: 1, seeded: true });
        assert.equal(await store.commitSeed(doc, 1, 'a', seed, T0), false, 'only once');
        assert.equal(await store.acquireSeedLease(doc, 1, 'b', T0 + 5_000, 1_000), false, 'seeded: no lease');
        const stored = await store.loadDocument(doc, 1);
        assert.equal(stored.updates.length, 1);
        assert.equal(rebuild(stored.updates), 'hello');
      });
    });

    describe('updates', () => {
      async function seeded(d: DocKey, text: string, author = new Y.Doc()): Promise<Y.Doc> {
        const { epoch } = await open(d, T0);
        await store.acquireSeedLease(d, epoch, 'h', T0, 10_000);
        assert.equal(await store.commitSeed(d, epoch, 'h', textUpdate(author, 0, text), T0), true);
        return author;
      }

      it('appends updates of several documents in one call, dropping stale epochs', async () => {
        const a = await seeded(doc, 'A');
        const b = await seeded(other, 'B');
        await store.appendUpdates([
          { doc, epoch: 1, update: textUpdate(a, 1, '1') },
          { doc: other, epoch: 1, update: textUpdate(b, 1, '2') },
          { doc, epoch: 7, update: textUpdate(new Y.Doc(), 0, 'stale') },
          { doc: { account: 'nobody', docId: 'x' }, epoch: 1, update: textUpdate(new Y.Doc(), 0, 'unknown') },
        ]);
        assert.equal(rebuild((await store.loadDocument(doc, 1)).updates), 'A1');
        assert.equal(rebuild((await store.loadDocument(other, 1)).updates), 'B2');
        assert.deepEqual((await store.loadDocument({ account: 'nobody', docId: 'x' }, 1)).updates, []);
      });

      it('appends in one transaction: a failing entry stores nothing of its call', async () => {
        const a = await seeded(doc, 'A');
        const before = await store.lastSeq(doc, 1);
        await assert.rejects(
          store.appendUpdates([
            { doc, epoch: 1, update: textUpdate(a, 1, 'x') },
            { doc, epoch: 1, update: { not: 'bytes' } as unknown as Uint8Array },
          ]),
        );
        assert.equal(await store.lastSeq(doc, 1), before);
        assert.equal((await store.loadDocument(doc, 1)).updates.length, 1);
      });

      it('loads updates in commit order with increasing sequence numbers', async () => {
        const a = await seeded(doc, '>');
        const updates = [textUpdate(a, 1, 'a'), textUpdate(a, 2, 'b'), textUpdate(a, 3, 'c')];
        const seqs: number[] = [];
        for (const update of updates) {
          await store.appendUpdates([{ doc, epoch: 1, update }]);
          seqs.push(await store.lastSeq(doc, 1));
        }
        assert.ok(seqs[0]! < seqs[1]! && seqs[1]! < seqs[2]!, `increasing: ${seqs.join(',')}`);
        const stored = await store.loadDocument(doc, 1);
        assert.equal(stored.lastSeq, seqs[2]);
        assert.equal(stored.updates.length, 4);
        assert.deepEqual(
          stored.updates.slice(1).map((u) => Buffer.from(u).toString('hex')),
          updates.map((u) => Buffer.from(u).toString('hex')),
        );
        assert.deepEqual(await store.loadDocument(doc, 2), { updates: [], lastSeq: 0 });
      });

      it('compacts without changing the content', async () => {
        const author = await seeded(doc, 'start');
        for (let i = 0; i < 50; i++) {
          await store.appendUpdates([{ doc, epoch: 1, update: textUpdate(author, i % 5, String(i % 10)) }]);
        }
        const upTo = await store.lastSeq(doc, 1);
        const expectedAtCompaction = author.getText('text').toString();
        const state = Y.encodeStateAsUpdate(author);
        // Updates committed after the compaction point stay, after the state.
        const later = textUpdate(author, 0, 'LATE');
        await store.appendUpdates([{ doc, epoch: 1, update: later }]);
        await store.compact(doc, 1, state, upTo);
        const stored = await store.loadDocument(doc, 1);
        assert.equal(stored.updates.length, 2);
        assert.equal(rebuild(stored.updates.slice(0, 1)), expectedAtCompaction);
        assert.equal(rebuild(stored.updates), author.getText('text').toString());
        assert.equal(stored.lastSeq, await store.lastSeq(doc, 1));
        // Compacting again up to the end leaves one update.
        await store.compact(doc, 1, Y.encodeStateAsUpdate(author), stored.lastSeq);
        const again = await store.loadDocument(doc, 1);
        assert.equal(again.updates.length, 1);
        assert.equal(rebuild(again.updates), author.getText('text').toString());
      });

      it('[snapshot] a load reads the snapshot first, then exactly the updates committed after its point', async () => {
        const author = await seeded(doc, 'snap');
        for (let i = 0; i < 10; i++) await store.appendUpdates([{ doc, epoch: 1, update: textUpdate(author, 0, String(i)) }]);
        const point = await store.lastSeq(doc, 1);
        const snapshot = Y.encodeStateAsUpdate(author);
        const later = [textUpdate(author, 0, 'x'), textUpdate(author, 1, 'y')];
        for (const update of later) await store.appendUpdates([{ doc, epoch: 1, update }]);
        await store.compact(doc, 1, snapshot, point);
        const loaded = await store.loadDocument(doc, 1);
        assert.deepEqual(
          loaded.updates.map((u) => Buffer.from(u).toString('hex')),
          [snapshot, ...later].map((u) => Buffer.from(u).toString('hex')),
          'one snapshot row, then the later updates in commit order',
        );
        assert.equal(rebuild(loaded.updates), author.getText('text').toString());
        // Appends after the snapshot come after it too.
        const next = textUpdate(author, 0, 'z');
        await store.appendUpdates([{ doc, epoch: 1, update: next }]);
        assert.equal(rebuild((await store.loadDocument(doc, 1)).updates), author.getText('text').toString());
        assert.ok((await store.lastSeq(doc, 1)) > point);
      });

      it('[snapshot] touches only its document and epoch, and an older snapshot point replaces nothing', async () => {
        const a = await seeded(doc, 'a');
        const b = await seeded(other, 'b');
        await store.appendUpdates([
          { doc, epoch: 1, update: textUpdate(a, 1, '1') },
          { doc: other, epoch: 1, update: textUpdate(b, 1, '2') },
        ]);
        const firstPoint = await store.lastSeq(doc, 1);
        await store.compact(doc, 1, Y.encodeStateAsUpdate(a), firstPoint);
        assert.equal((await store.loadDocument(other, 1)).updates.length, 2, 'the other document keeps its rows');
        assert.equal(rebuild((await store.loadDocument(other, 1)).updates), 'b2');
        await store.appendUpdates([{ doc, epoch: 1, update: textUpdate(a, 2, '3') }]);
        // A snapshot made from an older state (a slow compaction) cannot replace the newer snapshot's row.
        const stale = new Y.Doc();
        await store.compact(doc, 1, Y.encodeStateAsUpdate(stale), 1);
        const loaded = await store.loadDocument(doc, 1);
        assert.equal(loaded.updates.length, 2);
        assert.equal(rebuild(loaded.updates), 'a13');
        // Nothing stored in another epoch: a snapshot there is a no-op.
        await store.compact(doc, 2, Y.encodeStateAsUpdate(a), loaded.lastSeq);
        assert.deepEqual(await store.loadDocument(doc, 2), { updates: [], lastSeq: 0 });
        assert.equal(rebuild((await store.loadDocument(doc, 1)).updates), 'a13');
      });

      it('deletes a document and its session', async () => {
        await seeded(doc, 'gone');
        await seeded(other, 'kept');
        await store.deleteDocument(doc);
        assert.equal(await store.getSession(doc), undefined);
        assert.deepEqual((await store.loadDocument(doc, 1)).updates, []);
        assert.equal(rebuild((await store.loadDocument(other, 1)).updates), 'kept');
        assert.deepEqual(await open(doc, T0), { epoch: 1, seeded: false });
      });

      it('keeps accounts apart', async () => {
        const x1: DocKey = { account: 'one', docId: 'x' };
        const x2: DocKey = { account: 'two', docId: 'x' };
        await seeded(x1, 'first');
        await seeded(x2, 'second');
        assert.equal(rebuild((await store.loadDocument(x1, 1)).updates), 'first');
        assert.equal(rebuild((await store.loadDocument(x2, 1)).updates), 'second');
      });

      it('answers ping', async () => {
        await store.ping();
      });
    });

    webhookContract(() => store);
  });
}
