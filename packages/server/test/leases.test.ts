/** Seed leases across servers (P4–P6) and the server heartbeat (P12), in-process. */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startServer } from '../src/server.js';
import { SqliteStore } from '../src/store/sqlite.js';
import { silentLogger } from '../src/log.js';
import { startInProcess } from './helpers/in-process.js';
import { TestClient } from './helpers/test-client.js';

const FAST = { leaseTtlMs: 300, leasePollMs: 50, unloadDelayMs: 50 };

describe('[P6] seed lease held elsewhere', () => {
  it('waits for a dead holder\'s lease to expire, then asks a local client to seed', async () => {
    const server = await startInProcess({ limits: FAST });
    try {
      const key = (await server.sqlite.createKey({ name: 'lease', account: 'acct' })).record;
      const doc = { account: 'acct', docId: 'orphan' };
      // A seeder on a server that died: it holds the lease and will never renew it.
      const { epoch } = await server.sqlite.openSession(doc, { now: Date.now(), graceMs: 60_000, persistent: false });
      const leasedAt = Date.now();
      assert.equal(await server.sqlite.acquireSeedLease(doc, epoch, 'dead-server/c1', leasedAt, FAST.leaseTtlMs), true);

      const client = new TestClient({ url: server.url, apiKey: key.apiKey, docId: 'orphan', seedText: 'after the lease' });
      await client.waitFor(() => client.welcome, 'Welcome');
      await client.waitSynced();
      assert.deepEqual(client.seedRequests, [epoch]);
      assert.ok(Date.now() - leasedAt >= FAST.leaseTtlMs - 20, 'not before the lease expired');
      assert.equal(client.text.toString(), 'after the lease');
      await client.close();
    } finally {
      await server.cleanup();
    }
  });

  it('syncs a client on server B once the seeder on server A (same store) has seeded', async () => {
    const a = await startInProcess({ limits: FAST });
    const storeB = new SqliteStore(join(a.dir, 'wave.db'));
    const b = await startServer({ port: 0, store: storeB, log: silentLogger, limits: FAST });
    try {
      const key = (await a.sqlite.createKey({ name: 'two-servers' })).record;
      const onA = new TestClient({ url: a.url, apiKey: key.apiKey, docId: 'shared', seedText: 'from server A', autoSeed: false });
      await onA.waitFor(() => onA.seedRequests.length === 1, 'SeedRequest on A');
      const onB = new TestClient({ url: b.url, apiKey: key.apiKey, docId: 'shared', seedText: 'from server B' });
      await onB.waitFor(() => onB.welcome, 'Welcome on B');
      // B's client waits: the lease is A's and A keeps renewing it while its client is connected.
      onA.seed(onA.seedRequests[0]!);
      await onA.waitSynced();
      await onB.waitSynced();
      assert.deepEqual(onB.seedRequests, [], 'B never asked its client to seed');
      assert.equal(onB.text.toString(), 'from server A');
      await Promise.all([onA.close(), onB.close()]);
    } finally {
      await b.close();
      await storeB.close();
      await a.cleanup();
    }
  });
});

describe('[P12] heartbeat', () => {
  it('terminates a socket that answers no WebSocket ping, keeps one that does', async () => {
    const server = await startInProcess({ limits: { heartbeatMs: 50 } });
    try {
      const key = (await server.sqlite.createKey({ name: 'hb' })).record;
      const alive = new TestClient({ url: server.url, apiKey: key.apiKey, docId: 'hb', seedText: 'x' });
      await alive.waitSynced();
      const dead = new TestClient({ url: server.url, apiKey: key.apiKey, docId: 'hb', autoPong: false });
      await dead.waitSynced();
      const started = Date.now();
      const closed = await dead.waitClosed(5_000);
      assert.equal(closed.code, 1006, 'terminated, no close handshake');
      assert.ok(Date.now() - started >= 100, 'after two missed pings');
      assert.equal(alive.closeEvent, undefined);
      await alive.close();
    } finally {
      await server.cleanup();
    }
  });
});
