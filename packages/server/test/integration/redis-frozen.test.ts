/**
 * RELIABILITY.md D6 (second half) against the real server process and a real Redis: a Redis that accepts
 * connections but answers nothing (its process stopped with SIGSTOP) must not make a join hang silently. The test
 * runs its own redis-server on a free port, so that freezing it touches no other test.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import { ServerProcess } from '../helpers/server-process.js';
import { TestClient } from '../helpers/test-client.js';

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
  const { port } = probe.address() as AddressInfo;
  await new Promise((r) => probe.close(r));
  return port;
}

/** Starts redis-server on `port` and resolves once it answers PING. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => 50, maxRetriesPerRequest: null });
  probe.on('error', () => {}); // refused until redis-server listens; the PING below waits for it
  try {
    await probe.connect().catch(() => {});
    await probe.ping();
  } finally {
    probe.disconnect();
  }
  return child;
}

test('[D6] a join while Redis is frozen (SIGSTOP) fails with server_error / 4500 within 2 s', async (t) => {
  const port = await freePort();
  const redis = await startRedis(port);
  t.after(() => {
    redis.kill('SIGCONT');
    redis.kill('SIGKILL');
  });
  const server = await ServerProcess.start({ redis: `redis://127.0.0.1:${port}` });
  t.after(() => server.cleanup());
  const { apiKey } = await server.createKey({ name: 'frozen' });

  const before = new TestClient({ url: server.url, apiKey, docId: 'before', seedText: 'works' });
  t.after(() => before.close());
  await before.waitSynced();
  await before.waitAllAcked();

  redis.kill('SIGSTOP');
  const started = Date.now();
  const joiner = new TestClient({ url: server.url, apiKey, docId: 'cold', seedText: 'never seeded' });
  t.after(() => joiner.close());
  const closed = await joiner.waitClosed(10_000);
  const took = Date.now() - started;
  assert.equal(closed.code, 4500, joiner.describe());
  assert.deepEqual(joiner.errors.map((e) => [e.code, e.fatal]), [['server_error', false]]);
  assert.ok(took <= 2_000, `the join failed after ${took} ms (D6: ≤ 2 s)`);

  // A document this server has open needs no Redis to join.
  const warm = new TestClient({ url: server.url, apiKey, docId: 'before' });
  t.after(() => warm.close());
  await warm.waitSynced();
  assert.equal(warm.text.toString(), 'works');

  // Redis back: the document that could not be opened opens.
  redis.kill('SIGCONT');
  const retry = new TestClient({ url: server.url, apiKey, docId: 'cold', seedText: 'seeded after all' });
  t.after(() => retry.close());
  await retry.waitSynced();
  assert.equal(retry.text.toString(), 'seeded after all');
});
