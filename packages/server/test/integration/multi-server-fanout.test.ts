/**
 * Two real servers on one Postgres and one Redis: the fan-out end to end. A server that gains its first client
 * mid-burst catches up without gaps; presence crosses servers; a new epoch opened on one server is noticed by the
 * other at once; SIGTERM publishes before it closes sockets; `/healthz` and `/metrics` per server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Cluster } from '../helpers/cluster.js';
import { ServerProcess } from '../helpers/server-process.js';
import { postgresStoreUrl, newSchemaName, dropSchema, services, uniqueDocId } from '../helpers/services.js';
import { TestClient } from '../helpers/test-client.js';

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

if (await services('postgres', 'redis')) {
  describe('fan-out across two servers (Postgres + Redis)', () => {
    let cluster: Cluster;
    let apiKey: string;
    const clients: TestClient[] = [];
    const connect = async (server: number, docId: string, seedText?: string): Promise<TestClient> => {
      const client = new TestClient({ url: cluster.urls[server]!, apiKey, docId, ...(seedText !== undefined ? { seedText } : {}) });
      clients.push(client);
      await client.opened;
      return client;
    };

    before(async () => {
      cluster = await Cluster.start(2);
      apiKey = (await cluster.createKey({ name: 'fan' })).apiKey;
    });
    after(async () => {
      await Promise.all(clients.map((c) => c.close()));
      await cluster.cleanup();
    });

    it('servers started at once on one store agree on one demo key', async () => {
      const printed = cluster.servers.map((s) => /API key "demo"(?: \(origins: self\))?: (wk_\S+)/.exec(s.stdout)?.[1]);
      assert.ok(printed[0]);
      assert.equal(printed[1], printed[0]);
      const store = cluster.openStore();
      try {
        const demos = (await store.listKeys()).filter((k) => k.name === 'demo' && k.revokedAt === null);
        assert.deepEqual(
          demos.map((k) => k.apiKey),
          [printed[0]],
        );
      } finally {
        await store.close();
      }
    });

    it('a server that gains its first client mid-burst loads from the store and catches up from the stream, no gap', async () => {
      const docId = uniqueDocId('late');
      const writer = await connect(0, docId, 'start\n');
      await writer.waitSynced();
      let reader: TestClient | undefined;
      for (let round = 0; round < 40; round++) {
        for (let i = 0; i < 10; i++) writer.insert(writer.text.length, `${round}.${i} `);
        // The reader's server loads the document while the writer's commits keep coming.
        if (round === 10) reader = await connect(1, docId, 'MUST NOT SEED');
        await writer.waitAllAcked();
      }
      const expected = writer.text.toString();
      await reader!.waitFor(() => reader!.text.toString() === expected, 'every edit of the burst');
      assert.equal(reader!.doc.store.pendingStructs, null, 'nothing waiting for a missing update');
      assert.deepEqual(reader!.seedRequests, []);
      assert.equal(await cluster.storedText({ account: 'fan', docId }), expected);
    });

    it('carries presence across servers, stamped, and removes it when its client leaves', async () => {
      const docId = uniqueDocId('presence');
      const a = await connect(0, docId, 'p');
      await a.waitSynced();
      const b = await connect(1, docId);
      await b.waitSynced();
      a.setPresence({ cursor: 3, user: { name: 'forged' } });
      const state = await b.waitFor(() => b.awareness.getStates().get(a.clientId) as { cursor?: number; user?: { name?: string } } | undefined, 'presence of a');
      assert.equal(state.cursor, 3);
      assert.equal(state.user?.name, 'tester', 'identity stamped by the server a is connected to');
      await a.close();
      await b.waitFor(() => !b.awareness.getStates().has(a.clientId), 'presence of a removed');
    });

    it('notices at once a new epoch opened on the other server', async () => {
      const docId = uniqueDocId('epoch');
      const b = await connect(1, docId, 'first session');
      await b.waitSynced();
      await b.waitAllAcked();
      // The session ends as if every server had been silent past the grace period (the store decides), then a
      // client of server 0 opens the next epoch.
      const store = cluster.openStore();
      try {
        const next = await store.openSession({ account: 'fan', docId }, { now: Date.now() + 3_600_000, graceMs: 60_000, persistent: false });
        assert.equal(next.epoch, 2);
      } finally {
        await store.close();
      }
      const a = await connect(0, docId, 'second session');
      await a.waitSynced();
      assert.equal(a.welcome?.epoch, 2);
      // Server 1 touches its sessions every 20 s (grace 60 s): a close within 2 s came from the fan-out.
      const closed = await b.waitClosed(2_000);
      assert.equal(closed.code, 1012);
    });

    it('answers /healthz with store and Redis, and /metrics per server', async () => {
      for (const url of cluster.urls) {
        const health = await get(`${url}/healthz`);
        assert.equal(health.status, 200);
        assert.deepEqual(JSON.parse(health.body), { ok: true, store: 'ok', redis: 'ok' });
      }
      const docId = uniqueDocId('metrics');
      const a = await connect(0, docId, 'm');
      await a.waitSynced();
      const b = await connect(1, docId);
      await b.waitSynced();
      a.insert(1, '!');
      await a.waitAllAcked();
      await b.waitFor(() => b.text.toString() === 'm!', 'the edit');
      const bogus = new TestClient({ url: cluster.urls[0]!, apiKey: 'wk_unknown', docId });
      clients.push(bogus);
      await bogus.waitClosed();

      const [m0, m1] = await Promise.all(cluster.urls.map((u) => get(`${u}/metrics`)));
      assert.equal(m0!.status, 200);
      assert.match(m0!.body, /^# TYPE wave_connections gauge$/m);
      assert.match(m0!.body, /^wave_documents_loaded [1-9]\d*$/m);
      assert.match(m0!.body, /^wave_updates_total [1-9]\d*$/m);
      assert.match(m0!.body, /^wave_ack_latency_seconds_bucket\{le="0.25"\} [1-9]\d*$/m);
      assert.match(m0!.body, /^wave_ack_latency_seconds_count [1-9]\d*$/m);
      assert.match(m0!.body, /^wave_rejections_total\{code="validation_error"\} [1-9]\d*$/m);
      assert.match(m1!.body, /^wave_remote_updates_total [1-9]\d*$/m, 'server 1 received the edit through the fan-out');
    });

    it('SIGTERM commits, acks and publishes before it closes the sockets', async () => {
      // Its own pair of servers: this test stops one.
      const pair = await Cluster.start(2);
      try {
        const { apiKey: key } = await pair.createKey({ name: 'drain' });
        const docId = uniqueDocId('drain');
        const writer = new TestClient({ url: pair.urls[0]!, apiKey: key, docId, seedText: 'w\n' });
        const reader = new TestClient({ url: pair.urls[1]!, apiKey: key, docId });
        clients.push(writer, reader);
        await writer.waitSynced();
        await reader.waitSynced();
        const lines = Array.from({ length: 50 }, (_, i) => `line ${i}\n`);
        for (const line of lines) writer.insert(writer.text.length, line);
        const exit = await pair.servers[0]!.kill('SIGTERM');
        assert.equal(exit.code, 0, pair.servers[0]!.stderr);
        const acked = lines.slice(0, writer.lastAck);
        assert.ok(acked.length > 0, 'some edits were acked during the shutdown');
        // The reader's server never reloads the document: these come from the publishes made during shutdown.
        await reader.waitFor(() => acked.every((line) => reader.text.toString().includes(line)), 'every acked edit', 3_000);
      } finally {
        await pair.cleanup();
      }
    });
  });

  describe('/healthz without Redis', () => {
    const schema = newSchemaName();
    let server: ServerProcess;
    before(async () => {
      // Nothing listens on port 1: the server starts, keeps retrying, and reports it.
      server = await ServerProcess.start({ store: postgresStoreUrl(schema), redis: 'redis://127.0.0.1:1' });
    });
    after(async () => {
      await server.cleanup();
      await dropSchema(schema);
    });

    it('answers 503 and names Redis', async () => {
      const health = await get(`${server.url}/healthz`);
      assert.equal(health.status, 503);
      assert.deepEqual(JSON.parse(health.body), { ok: false, store: 'ok', redis: 'error' });
    });
  });
}
