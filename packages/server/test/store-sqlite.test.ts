import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { SqliteStore } from '../src/store/sqlite.js';
import { CHANGE_LOG_FOLD } from '../src/store/sqlite-webhooks.js';
import type { DocChange, DocKey } from '../src/store/types.js';
import { SqliteWriterThread } from '../src/store/sqlite-writer-thread.js';
import { openStore, StoreUrlError } from '../src/store/index.js';
import { runStoreContract } from './store-contract.js';

runStoreContract('SqliteStore', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'wave-store-'));
  const store = new SqliteStore(join(dir, 'wave.db'));
  return {
    store,
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describe('SqliteStore specifics', () => {
  it('creates missing folders, uses WAL with synchronous=FULL and stores only a hash of the secret', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'wave-store-'));
    try {
      const path = join(dir, 'a', 'b', 'wave.db');
      const store = new SqliteStore(path);
      const { record, secret } = await store.createKey({ name: 'k' });
      await store.close();

      const db = new Database(path, { readonly: true });
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
      const row = db.prepare('SELECT * FROM keys WHERE api_key = ?').get(record.apiKey) as Record<string, unknown>;
      db.close();
      assert.ok(Buffer.isBuffer(row['secret_hash']));
      assert.equal((row['secret_hash'] as Buffer).length, 32, 'SHA-256');
      assert.ok(!JSON.stringify(row).includes(secret.slice(4)), 'the secret itself is not stored');

      // synchronous is per connection: check the store's own connection.
      const again = new SqliteStore(path);
      const pragma = (again as unknown as { db: Database.Database }).db.pragma('synchronous', { simple: true });
      assert.equal(pragma, 2, 'synchronous = FULL');
      await again.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('sees keys created and revoked by another process on the same file at once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'wave-store-'));
    try {
      const server = new SqliteStore(join(dir, 'wave.db'));
      const cli = new SqliteStore(join(dir, 'wave.db'));
      const { record } = await cli.createKey({ name: 'late' });
      assert.equal((await server.findKey(record.apiKey))?.revokedAt, null);
      await cli.revokeKey(record.apiKey);
      assert.equal(typeof (await server.findKey(record.apiKey))?.revokedAt, 'number');
      await cli.close();
      await server.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("commits a document's writes on the writer thread: the event loop runs while another connection holds the lock", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'wave-store-'));
    const path = join(dir, 'wave.db');
    const store = new SqliteStore(path, { busyTimeoutMs: 10_000 });
    const locker = new Database(path);
    try {
      const doc = { account: 'acct', docId: 'd' };
      const seed = new Uint8Array([0, 0]);
      const { epoch } = await store.openSession(doc, { now: 1, graceMs: 1_000, persistent: false });
      const other = { account: 'acct', docId: 'e' };
      await store.openSession(other, { now: 1, graceMs: 1_000, persistent: false });
      // Each write waits for the lock another process holds. On the event loop it would wait there, synchronously,
      // until the lock is released — which only this event loop can do below — and fail with SQLITE_BUSY.
      const writes: Array<[string, () => Promise<unknown>]> = [
        ['openSession', () => store.openSession(doc, { now: 2, graceMs: 1_000, persistent: false })],
        ['acquireSeedLease', () => store.acquireSeedLease(doc, epoch, 'h', 3, 1_000)],
        ['releaseSeedLease', () => store.releaseSeedLease(doc, epoch, 'h')],
        ['commitSeed', () => store.commitSeed(doc, epoch, 'h', seed, 4)],
        ['touchSessions', () => store.touchSessions([{ doc, epoch }], 5)],
        ['appendUpdates', () => store.appendUpdates([{ doc, epoch, update: seed }], 6)],
        ['compact', () => store.compact(doc, epoch, seed, 1_000)],
        ['enqueueEvent', () => store.enqueueEvent(doc, 'user.joined', { epoch }, 7)],
        ['deleteDocument', () => store.deleteDocument(other, 8)],
      ];
      for (const [name, write] of writes) {
        locker.prepare('BEGIN IMMEDIATE').run();
        let settled = false;
        const pending = write().finally(() => (settled = true));
        await new Promise((resolve) => setImmediate(resolve));
        assert.equal(settled, false, `${name} waits for the lock`);
        locker.prepare('COMMIT').run();
        await pending;
      }
      assert.deepEqual(await store.getSession(doc), { epoch, seeded: false }, 'the lease was released without a seed');
      assert.equal((await store.loadDocument(doc, epoch)).updates.length, 1, 'compacted into one');
      assert.equal(await store.getSession(other), undefined, 'deleted');
    } finally {
      locker.close();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("fails only the call that threw when the writer thread commits several in one transaction", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'wave-store-'));
    const store = new SqliteStore(join(dir, 'wave.db'));
    try {
      const doc = { account: 'acct', docId: 'd' };
      const { epoch } = await store.openSession(doc, { now: 1, graceMs: 1_000, persistent: false });
      const update = new Uint8Array([0, 0]);
      // Posted in one turn, they reach the thread together and commit as one batch, each call on a savepoint of its
      // own; what is asserted holds however the thread groups them.
      const [appended, broken, leased, appendedAgain] = await Promise.allSettled([
        store.appendUpdates([{ doc, epoch, update }], 2),
        store.compact(doc, epoch, null as unknown as Uint8Array, 1),
        store.acquireSeedLease(doc, epoch, 'h', 3, 1_000),
        store.appendUpdates([{ doc, epoch, update }], 4),
      ]);
      assert.equal(appended.status, 'fulfilled');
      assert.equal(broken.status, 'rejected', 'a compaction with no state fails (NOT NULL)');
      assert.deepEqual(leased, { status: 'fulfilled', value: true });
      assert.equal(appendedAgain.status, 'fulfilled');
      const stored = await store.loadDocument(doc, epoch);
      assert.equal(stored.updates.length, 2, 'both appends committed, the failed compaction replaced nothing');
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('startWriter resolves once the writer thread can take writes, and rejects when it cannot open the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'wave-store-'));
    const store = new SqliteStore(join(dir, 'wave.db'));
    // A directory is no database file: the thread's own connection fails while it starts.
    const broken = new SqliteWriterThread({ path: dir, busyTimeoutMs: 100 });
    try {
      await store.startWriter();
      const doc = { account: 'acct', docId: 'd' };
      assert.deepEqual(await store.openSession(doc, { now: 1, graceMs: 1_000, persistent: false }), { epoch: 1, seeded: false });
      await assert.rejects(broken.warmUp(), /the writer thread could not open .*: unable to open database file/);
    } finally {
      await broken.close();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('keeps the change feed and versions exact while its change log is folded into doc_changes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'wave-store-'));
    const path = join(dir, 'wave.db');
    const store = new SqliteStore(path);
    try {
      const docs = Array.from({ length: 300 }, (_, i) => ({ account: 'acme', docId: `d${i}` }));
      const stranger = { account: 'other', docId: 'd0' };
      for (const doc of [...docs, stranger]) await store.openSession(doc, { now: 0, graceMs: 60_000, persistent: false });
      // What the feed must say: per document its latest change (cursors count changes from 1 on a new file).
      const model = new Map<string, DocChange>();
      const epochs = new Map<string, number>();
      let cursor = 0;
      const record = (doc: DocKey, at: number, deleted: boolean): void => {
        cursor++;
        const epoch = epochs.get(doc.docId) ?? 1;
        model.set(`${doc.account}/${doc.docId}`, { docId: doc.docId, epoch, version: (model.get(`${doc.account}/${doc.docId}`)?.version ?? 0) + 1, deleted, cursor, changedAt: at });
      };
      const feedOf = (account: string, since: number): DocChange[] =>
        [...model.entries()].filter(([k, c]) => k.startsWith(`${account}/`) && c.cursor > since).map(([, c]) => c).sort((a, b) => a.cursor - b.cursor);
      const readAll = async (account: string, since: number, limit: number): Promise<DocChange[]> => {
        const all: DocChange[] = [];
        for (;;) {
          const page = await store.listChanges(account, since, limit);
          if (page.length === 0) return all;
          all.push(...page);
          since = page.at(-1)!.cursor;
        }
      };
      const check = async (at: string): Promise<void> => {
        for (const since of [0, Math.floor(cursor / 2), cursor - 7, cursor]) {
          assert.deepEqual(await readAll('acme', since, 64), feedOf('acme', since), `${at}: the feed after ${since}`);
        }
        assert.deepEqual(await store.listChanges('other', 0, 10), feedOf('other', 0), `${at}: another account's feed`);
        for (const doc of [docs[0]!, docs[5]!, docs[299]!, stranger]) {
          assert.deepEqual(await store.docChange(doc), model.get(`${doc.account}/${doc.docId}`), `${at}: ${doc.docId}`);
        }
      };

      await check('before any change');
      let folds = 0;
      for (let batch = 1; cursor < 2 * CHANGE_LOG_FOLD + 500; batch++) {
        const before = cursor;
        // 25 documents a batch, each once, in batch order (appendUpdates records its documents in that order).
        const chosen = [...new Set(Array.from({ length: 25 }, (_, j) => docs[(batch * 7 + j * 13) % docs.length]!))];
        if (batch % 50 === 0) chosen.push(stranger);
        await store.appendUpdates(chosen.map((doc) => ({ doc, epoch: epochs.get(doc.docId) ?? 1, update: new Uint8Array([0, 0]) })), batch);
        for (const doc of chosen) record(doc, batch, false);
        if (batch === 120) {
          // Deleted, then edited in a new session: the version goes on counting.
          await store.deleteDocument(docs[5]!, batch);
          record(docs[5]!, batch, true);
          await check('after a deletion');
          epochs.set('d5', (await store.openSession(docs[5]!, { now: batch, graceMs: 60_000, persistent: false })).epoch);
        }
        if (Math.floor(cursor / CHANGE_LOG_FOLD) > Math.floor(before / CHANGE_LOG_FOLD)) {
          folds++;
          await check(`after fold ${folds}`);
        } else if (batch % 40 === 0) await check(`batch ${batch}`);
      }
      await check('at the end');
      assert.equal(folds, 2);
      const db = new Database(path, { readonly: true });
      const logged = (db.prepare('SELECT count(*) AS n FROM doc_change_log').get() as { n: number }).n;
      db.close();
      assert.equal(logged, cursor % CHANGE_LOG_FOLD, 'the log holds the changes since the last fold');
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("opens a version 4 file, whose feed is doc_changes alone, and goes on counting its versions and cursors", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'wave-store-'));
    const path = join(dir, 'wave.db');
    try {
      const doc = { account: 'acme', docId: 'a' };
      const first = new SqliteStore(path);
      await first.openSession(doc, { now: 0, graceMs: 60_000, persistent: false });
      await first.close();
      // What a version 4 server left: no change log, the feed's rows in doc_changes, the counter at the last cursor.
      const raw = new Database(path);
      raw.exec(`DROP TABLE doc_change_log;
        INSERT INTO doc_changes (account, doc_id, epoch, version, cursor, deleted, changed_at) VALUES ('acme', 'a', 1, 7, 9, 0, 5);
        UPDATE change_cursor SET value = 9;
        PRAGMA user_version = 4;`);
      raw.close();
      const store = new SqliteStore(path);
      try {
        assert.deepEqual(await store.docChange(doc), { docId: 'a', epoch: 1, version: 7, deleted: false, cursor: 9, changedAt: 5 });
        await store.appendUpdates([{ doc, epoch: 1, update: new Uint8Array([0, 0]) }], 6);
        const latest = { docId: 'a', epoch: 1, version: 8, deleted: false, cursor: 10, changedAt: 6 };
        assert.deepEqual(await store.docChange(doc), latest);
        assert.deepEqual(await store.listChanges('acme', 9, 10), [latest]);
      } finally {
        await store.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('opens stores from URLs', async () => {
    const store = openStore('sqlite::memory:');
    await store.ping();
    await store.close();
    assert.throws(() => openStore('mysql://x'), StoreUrlError);
    assert.throws(() => openStore('sqlite:'), StoreUrlError);
  });
});
