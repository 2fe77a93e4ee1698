/**
 * RELIABILITY.md S19 (and S1's budget behind a proxy) against the real server process: a per-address cap on open
 * connections with its own close code (4430, `rate_limited`), and `--trust-proxy`, which takes the client address
 * of the per-address budgets from the proxy's `X-Forwarded-For` / `Forwarded` (the last entry: the one the proxy
 * appended), and which is off by default (the headers are then ignored).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import WebSocket from 'ws';
import { MessageType } from 'wave-protocol';
import { ServerProcess } from '../helpers/server-process.js';
import { TestClient } from '../helpers/test-client.js';

/** One upgrade with an unknown apiKey and these headers: `HTTP <status>` when refused before the upgrade, else the close code. */
function attempt(server: ServerProcess, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${server.url.replace(/^http/, 'ws')}/v2/ws?apiKey=wk_unknown&docId=d`, { headers });
    ws.on('unexpected-response', (req, res) => {
      res.resume();
      req.destroy();
      resolve(`HTTP ${res.statusCode}`);
    });
    ws.on('error', () => {});
    ws.on('close', (code) => resolve(String(code)));
  });
}

test('[S1][S19] --trust-proxy: the auth-failure budget is per forwarded client address', async (t) => {
  const server = await ServerProcess.start({ extraArgs: ['--trust-proxy', '--auth-failures-per-minute', '2'] });
  t.after(() => server.cleanup());
  const a = { 'X-Forwarded-For': '198.51.100.1' };
  assert.equal(await attempt(server, a), '4401');
  assert.equal(await attempt(server, a), '4401');
  assert.equal(await attempt(server, a), 'HTTP 429', 'the address that failed twice is throttled');
  // A client cannot escape by prepending an address: the proxy's (last) entry counts.
  assert.equal(await attempt(server, { 'X-Forwarded-For': '192.0.2.7, 198.51.100.1' }), 'HTTP 429');
  assert.equal(await attempt(server, { 'X-Forwarded-For': '198.51.100.2' }), '4401', 'another client behind the same proxy is not');
  assert.equal(await attempt(server, { Forwarded: 'for=198.51.100.1;proto=https' }), 'HTTP 429', 'Forwarded (RFC 7239) is read too');
  assert.equal(await attempt(server, { Forwarded: 'for="[2001:db8::1]:4711"' }), '4401');
});

test('[S1] without --trust-proxy, forwarding headers are ignored (a direct client could forge them)', async (t) => {
  const server = await ServerProcess.start({ extraArgs: ['--auth-failures-per-minute', '2'] });
  t.after(() => server.cleanup());
  assert.equal(await attempt(server, { 'X-Forwarded-For': '198.51.100.1' }), '4401');
  assert.equal(await attempt(server, { 'X-Forwarded-For': '198.51.100.2' }), '4401');
  assert.equal(await attempt(server, { 'X-Forwarded-For': '198.51.100.3' }), 'HTTP 429', 'one budget: the socket address');
});

test('[S19] --max-connections-per-address: the next connection gets rate_limited and close 4430, no document byte', async (t) => {
  const server = await ServerProcess.start({ extraArgs: ['--max-connections-per-address', '2'] });
  t.after(() => server.cleanup());
  const { apiKey } = await server.createKey({ name: 'cap' });
  // The second client connects only once the first has seeded: whichever joins first is asked for the seed, and
  // the second has no content to give.
  const first = new TestClient({ url: server.url, apiKey, docId: 'cap', seedText: 'confidential' });
  t.after(() => first.close());
  await first.waitSynced();
  await first.waitAllAcked();
  const second = new TestClient({ url: server.url, apiKey, docId: 'cap' });
  t.after(() => second.close());
  await second.waitSynced();

  const third = new TestClient({ url: server.url, apiKey, docId: 'cap' });
  const closed = await third.waitClosed(5_000);
  assert.equal(closed.code, 4430);
  assert.deepEqual(third.errors.map((e) => [e.code, e.fatal]), [['rate_limited', false]]);
  assert.match(third.errors[0]!.detail, /already has 2 open connections/);
  assert.deepEqual(third.frames.map((f) => f.message?.type), [MessageType.Error], 'only the error, no document byte');

  // A closed connection frees its place once the server has seen it close (its connection gauge says so).
  await second.close();
  const connections = async (): Promise<number> => Number(/^wave_connections (\d+)$/m.exec(await (await fetch(`${server.url}/metrics`)).text())?.[1]);
  const deadline = Date.now() + 10_000;
  for (let open = await connections(); open !== 1; open = await connections()) {
    assert.ok(open === 2 && Date.now() < deadline, `open connections: ${open}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const fourth = new TestClient({ url: server.url, apiKey, docId: 'cap' });
  t.after(() => fourth.close());
  await fourth.waitSynced();
  assert.equal(fourth.text.toString(), 'confidential');
});
