/**
 * The store contract on Postgres (STYLE.md 4), plus what only a shared database has: versioned migrations run by
 * servers starting at once, one lease holder among several servers, compaction while another server appends.
 * Needs Postgres (database `test` on 127.0.0.1:5432); see helpers/services.ts for skipping and CI.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import * as Y from 'yjs';
import { PostgresStore, parsePostgresUrl } from '../src/store/postgres.js';
import { LATEST_VERSION, MIGRATIONS } from '../src/store/postgres-migrations.js';
import { openStore, StoreUrlError } from '../src/store/index.js';
import type { DocKey } from '../src/store/types.js';
import { runStoreContract } from './store-contract.js';
import { adminQuery, dropSchema, newSchemaName, postgresStoreUrl, services } from './helpers/services.js';

describe('openStore (no database needed)', () => {
  it('parses postgres URLs and our schema parameter without connecting', async () => {
    assert.deepEqual(parsePostgresUrl('postgres://u@db.example:5433/wave?schema=tenant_1&sslmode=require'), {
      connectionString: 'postgres://u@db.example:5433/wave?sslmode=require',
      schema: 'tenant_1',
    });
    const store = openStore('postgresql://u@127.0.0.1:1/none');
    assert.ok(store instanceof PostgresStore);
    await store.close();
    assert.throws(() => openStore('postgres://u@h/db?schema=bad;drop'), StoreUrlError);
    assert.throws(() => openStore('mysql://x'), StoreUrlError);
  });
});

if (await services('postgres')) {
  const schemas: string[] = [];
  after(async () => {
    for (const schema of schemas) await dropSchema(schema);
  });
  const freshStore = (schema = newSchemaName()): PostgresStore => {
    if (!schemas.includes(schema)) schemas.push(schema);
    return new PostgresStore(parsePostgresUrl(postgresStoreUrl(schema)));
  };

  runStoreContract('PostgresStore', async () => {
    const schema = newSchemaName();
    const store = freshStore(schema);
    return {
      store,
      async cleanup() {
        await store.close();
        await dropSchema(schema);
      },
    };
  });

  describe('PostgresStore specifics', () => {
    it('migrates once, in order, even when several servers start at once', async () => {
      const schema = newSchemaName();
      const stores = Array.from({ length: 4 }, () => freshStore(schema));
      try {
        // Every store runs its migrations on its first call; all four race for the advisory lock.
        await Promise.all(stores.map((s) => s.ping()));
        const rows = await adminQuery<{ version: number; name: string }>(`SELECT version, name FROM "${schema}".schema_migrations ORDER BY version`);
        assert.deepEqual(
          rows.map((r) => r.version),
          MIGRATIONS.map((m) => m.version),
        );
        const tables = await adminQuery<{ table_name: string }>(
          'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
          [schema],
        );
        assert.deepEqual(
          tables.map((t) => t.table_name),
          ['change_cursor', 'doc_changes', 'keys', 'schema_migrations', 'sessions', 'updates', 'webhook_endpoints', 'webhook_outbox'],
        );
        // A later start finds nothing to do and keeps the data.
        const { record } = await stores[0]!.createKey({ name: 'kept' });
        const again = freshStore(schema);
        assert.equal((await again.findKey(record.apiKey))?.name, 'kept');
        await again.close();
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    });

    it('refuses a database migrated by a newer server', async () => {
      const schema = newSchemaName();
      const first = freshStore(schema);
      await first.ping();
      await first.close();
      await adminQuery(`INSERT INTO "${schema}".schema_migrations (version, name) VALUES ($1, 'from the future')`, [LATEST_VERSION + 1]);
      const old = freshStore(schema);
      await assert.rejects(old.ping(), /newer than this server's/);
      await old.close();
    });

    it('gives the seed lease to exactly one of several servers asking at the same instant', async () => {
      const schema = newSchemaName();
      const stores = Array.from({ length: 3 }, () => freshStore(schema));
      try {
        const doc: DocKey = { account: 'acme', docId: 'lease' };
        const now = Date.now();
        await Promise.all(stores.map((s) => s.openSession(doc, { now, graceMs: 60_000, persistent: false })));
        const asks = stores.flatMap((s, i) => Array.from({ length: 10 }, (_, j) => s.acquireSeedLease(doc, 1, `server${i}/peer${j}`, now, 10_000)));
        const granted = (await Promise.all(asks)).filter(Boolean).length;
        assert.equal(granted, 1, 'exactly one holder');
        // Seeds offered by everyone at once: exactly one is committed.
        const seeds = stores.flatMap((s, i) =>
          Array.from({ length: 10 }, (_, j) => s.commitSeed(doc, 1, `server${i}/peer${j}`, Y.encodeStateAsUpdate(new Y.Doc()), now)),
        );
        assert.equal((await Promise.all(seeds)).filter(Boolean).length, 1, 'one seed');
        assert.equal((await stores[2]!.loadDocument(doc, 1)).updates.length, 1);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    });

    it('agrees on one new epoch when two servers open an expired session at once', async () => {
      const schema = newSchemaName();
      const [a, b] = [freshStore(schema), freshStore(schema)];
      try {
        const doc: DocKey = { account: 'acme', docId: 'epochs' };
        await a.openSession(doc, { now: 1_000, graceMs: 100, persistent: false });
        const opened = await Promise.all([
          a.openSession(doc, { now: 5_000, graceMs: 100, persistent: false }),
          b.openSession(doc, { now: 5_000, graceMs: 100, persistent: false }),
        ]);
        assert.deepEqual(opened, [
          { epoch: 2, seeded: false },
          { epoch: 2, seeded: false },
        ]);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('compacts safely while another server appends: no stored update is lost', async () => {
      const schema = newSchemaName();
      const [compactor, writer] = [freshStore(schema), freshStore(schema)];
      try {
        const doc: DocKey = { account: 'acme', docId: 'busy' };
        await compactor.openSession(doc, { now: Date.now(), graceMs: 60_000, persistent: false });
        await compactor.acquireSeedLease(doc, 1, 'h', Date.now(), 10_000);
        const author = new Y.Doc();
        const updates: Uint8Array[] = [];
        author.on('update', (u: Uint8Array) => updates.push(u));
        author.getText('text').insert(0, 'seed;');
        assert.equal(await compactor.commitSeed(doc, 1, 'h', updates.shift()!, Date.now()), true);

        let writing = true;
        const written = (async () => {
          // Bounded: 150 batches of 2 updates from the "other server".
          for (let i = 0; i < 150 && writing; i++) {
            const text = author.getText('text');
            text.insert(text.length, `a${i};`);
            text.insert(text.length, `b${i};`);
            await writer.appendUpdates(updates.splice(0).map((update) => ({ doc, epoch: 1, update })));
          }
        })();
        // Meanwhile compact repeatedly, each time from what the store holds (as a room does after catching up).
        for (let round = 0; round < 15; round++) {
          const stored = await compactor.loadDocument(doc, 1);
          const state = new Y.Doc();
          for (const u of stored.updates) Y.applyUpdate(state, u);
          await compactor.compact(doc, 1, Y.encodeStateAsUpdate(state), stored.lastSeq);
          state.destroy();
        }
        await written;
        writing = false;
        const final = new Y.Doc();
        for (const u of (await compactor.loadDocument(doc, 1)).updates) Y.applyUpdate(final, u);
        assert.equal(final.getText('text').toString(), author.getText('text').toString());
        assert.equal(final.store.pendingStructs, null, 'nothing missing');
      } finally {
        await Promise.all([compactor.close(), writer.close()]);
      }
    });

    it('stores only a hash of the secret, and keeps origins as text[]', async () => {
      const schema = newSchemaName();
      const store = freshStore(schema);
      try {
        const { record, secret } = await store.createKey({ name: 'k', origins: ['self', 'https://a.example'] });
        const [row] = await adminQuery<Record<string, unknown>>(`SELECT * FROM "${schema}".keys WHERE api_key = $1`, [record.apiKey]);
        assert.ok(Buffer.isBuffer(row!['secret_hash']));
        assert.equal((row!['secret_hash'] as Buffer).length, 32);
        assert.ok(!JSON.stringify(row).includes(secret.slice(4)));
        assert.deepEqual(row!['origins'], ['self', 'https://a.example']);
      } finally {
        await store.close();
      }
    });
  });
}
