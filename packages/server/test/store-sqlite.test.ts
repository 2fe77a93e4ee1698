import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { SqliteStore } from '../src/store/sqlite.js';
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

  it('opens stores from URLs', async () => {
    const store = openStore('sqlite::memory:');
    await store.ping();
    await store.close();
    assert.throws(() => openStore('mysql://x'), StoreUrlError);
    assert.throws(() => openStore('sqlite:'), StoreUrlError);
  });
});
