/**
 * RELIABILITY.md S15: a key revoked, or whose origins or token rule are tightened, by the `keys` CLI (another
 * process) while its clients are connected: every connection that lost its access, on every server, is closed with
 * a fatal `validation_error` (4401) within 1 s of the CLI's commit; connections that kept their access, and other
 * keys of the account, go on editing.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Cluster } from '../helpers/cluster.js';
import { ServerProcess } from '../helpers/server-process.js';
import { services, uniqueDocId } from '../helpers/services.js';
import { TestClient } from '../helpers/test-client.js';
import type { TestClientOptions } from '../helpers/test-client.js';
import { mintToken } from '../helpers/tokens.js';

/** The contract's bar (issue S15), measured from the CLI's exit, i.e. after its change is committed. */
const CLOSE_BAR_MS = 1_000;

async function joined(options: TestClientOptions): Promise<TestClient> {
  const client = new TestClient(options);
  await client.waitSynced();
  return client;
}

/** Waits for the close and checks it is the fatal refusal, with `detail` matching `reason`. */
async function assertWithdrawn(client: TestClient, since: number, reason: RegExp): Promise<void> {
  const closed = await client.waitClosed(5_000);
  const took = Date.now() - since;
  assert.equal(closed.code, 4401, client.describe());
  assert.equal(client.errors.length, 1, client.describe());
  const error = client.errors[0]!;
  assert.equal(error.code, 'validation_error');
  assert.equal(error.fatal, true);
  assert.match(error.detail, reason);
  assert.ok(took <= CLOSE_BAR_MS, `closed ${took} ms after the CLI committed (bar: ≤ ${CLOSE_BAR_MS} ms)`);
}

/** An edit from `writer` is acked and reaches `reader`: both connections still work. */
async function assertStillEditing(writer: TestClient, reader: TestClient, mark: string): Promise<void> {
  writer.insert(writer.text.length, mark);
  await writer.waitAllAcked();
  await reader.waitFor(() => reader.text.toString().includes(mark), `${mark} relayed`);
}

async function cli(server: ServerProcess, args: string[]): Promise<number> {
  await server.cli(args);
  return Date.now();
}

test('[S15] SQLite: keys revoke and keys update close the connections that lost access', async (t) => {
  const server = await ServerProcess.start();
  t.after(() => server.cleanup());
  const clients: TestClient[] = [];
  t.after(() => Promise.all(clients.map((c) => c.close())));
  const connect = async (options: TestClientOptions): Promise<TestClient> => {
    const client = await joined(options);
    clients.push(client);
    return client;
  };
  const base = { url: server.url, docId: 'shared' };

  // Two keys of one account: the second one's clients watch the document while the first key changes.
  const doomed = await server.createKey({ name: 'doomed', account: 'acme' });
  const tightened = await server.createKey({ name: 'tightened', account: 'acme', origins: ['http://a.example', 'http://b.example'] });
  const other = await server.createKey({ name: 'other', account: 'acme' });
  const watcher = await connect({ ...base, apiKey: other.apiKey, seedText: 'start' });

  await t.test('revoke: every connection of the key is closed, other keys go on', async () => {
    const first = await connect({ ...base, apiKey: doomed.apiKey });
    const second = await connect({ ...base, apiKey: doomed.apiKey, docId: 'elsewhere', seedText: 'x' });
    await assertStillEditing(first, watcher, '[before revoke]');
    const committed = await cli(server, ['keys', 'revoke', doomed.apiKey]);
    await Promise.all([first, second].map((c) => assertWithdrawn(c, committed, /revoked/)));
    await assertStillEditing(watcher, watcher, '[watcher after revoke]');
  });

  await t.test('update --origin: connections from an origin no longer listed are closed, the others stay', async () => {
    const fromA = await connect({ ...base, apiKey: tightened.apiKey, origin: 'http://a.example' });
    const fromB = await connect({ ...base, apiKey: tightened.apiKey, origin: 'http://b.example' });
    const committed = await cli(server, ['keys', 'update', tightened.apiKey, '--origin', 'http://a.example']);
    await assertWithdrawn(fromB, committed, /origin http:\/\/b\.example is no longer allowed/);
    await assertStillEditing(fromA, watcher, '[a after origin update]');
  });

  await t.test('update --require-token: connections without a token are closed, those with one stay', async () => {
    const withoutToken = await connect({ ...base, apiKey: tightened.apiKey, origin: 'http://a.example' });
    const token = await mintToken(tightened.secret, { docId: 'shared', permission: 'edit' });
    const withToken = await connect({ ...base, apiKey: tightened.apiKey, origin: 'http://a.example', helloOverride: { token } });
    const earlier = clients.filter((c) => c.options.apiKey === tightened.apiKey && c !== withToken && c.closeEvent === undefined);
    assert.ok(earlier.includes(withoutToken), 'the connection from the origin test is still open too');
    const committed = await cli(server, ['keys', 'update', tightened.apiKey, '--require-token']);
    await Promise.all(earlier.map((c) => assertWithdrawn(c, committed, /requires a token/)));
    await assertStillEditing(withToken, watcher, '[token holder after update]');
    // The refusal is also what a new connection without a token gets.
    const late = new TestClient({ ...base, apiKey: tightened.apiKey, origin: 'http://a.example' });
    clients.push(late);
    assert.equal((await late.waitClosed()).code, 4401);
  });
});

if (await services('postgres', 'redis')) {
  test('[S15] two servers on Postgres + Redis: a revoked or tightened key loses its connections on every server', async (t) => {
    const cluster = await Cluster.start(2);
    t.after(() => cluster.cleanup());
    const clients: TestClient[] = [];
    t.after(() => Promise.all(clients.map((c) => c.close())));
    const connect = async (server: number, options: Omit<TestClientOptions, 'url'>): Promise<TestClient> => {
      const client = await joined({ url: cluster.urls[server]!, ...options });
      clients.push(client);
      return client;
    };
    const docId = uniqueDocId('s15');
    const doomed = await cluster.createKey({ name: 'doomed', account: 'acme' });
    const tightened = await cluster.createKey({ name: 'tightened', account: 'acme' });
    const other = await cluster.createKey({ name: 'other', account: 'acme' });
    const watchers = [await connect(0, { apiKey: other.apiKey, docId, seedText: 'start' }), await connect(1, { apiKey: other.apiKey, docId })];

    const onFirst = await connect(0, { apiKey: doomed.apiKey, docId });
    const onSecond = await connect(1, { apiKey: doomed.apiKey, docId });
    await assertStillEditing(onSecond, watchers[0]!, '[relayed across servers]');
    const revoked = await cli(cluster.servers[0]!, ['keys', 'revoke', doomed.apiKey]);
    await Promise.all([onFirst, onSecond].map((c) => assertWithdrawn(c, revoked, /revoked/)));
    await assertStillEditing(watchers[1]!, watchers[0]!, '[watchers after revoke]');

    const token = await mintToken(tightened.secret, { docId, permission: 'edit' });
    const plain = [await connect(0, { apiKey: tightened.apiKey, docId }), await connect(1, { apiKey: tightened.apiKey, docId })];
    const holder = await connect(1, { apiKey: tightened.apiKey, docId, helloOverride: { token } });
    const updated = await cli(cluster.servers[1]!, ['keys', 'update', tightened.apiKey, '--require-token']);
    await Promise.all(plain.map((c) => assertWithdrawn(c, updated, /requires a token/)));
    await assertStillEditing(holder, watchers[0]!, '[token holder after update]');

    // Edits the closed clients saw stay; nothing of theirs arrives after their close.
    const stored = await cluster.storedText({ account: 'acme', docId });
    assert.equal(stored, watchers[0]!.text.toString());
  });
}
