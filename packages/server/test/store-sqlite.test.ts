import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { SqliteStore } from '../src/store/sqlite.js';
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

  it('opens stores from URLs', async () => {
    const store = openStore('sqlite::memory:');
    await store.ping();
    await store.close();
    assert.throws(() => openStore('mysql://x'), StoreUrlError);
    assert.throws(() => openStore('sqlite:'), StoreUrlError);
  });
});
