/**
 * RELIABILITY.md S1, S2, S3, S4, S11, S13 against the real server process. "0 document bytes" is asserted by
 * recording every frame the refused client received (TestClient.frames).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as Y from 'yjs';
import * as encoding from 'lib0/encoding';
import * as awarenessProtocol from 'y-protocols/awareness';
import { MessageType, SyncStep, encodeMessage } from 'wave-protocol';
import { ServerProcess } from '../helpers/server-process.js';
import { TestClient, messagesOfType } from '../helpers/test-client.js';
import type { TestClientOptions } from '../helpers/test-client.js';
import { mintToken } from '../helpers/tokens.js';

/** Message types that carry document content or presence: a refused client must receive none. */
const DOCUMENT_TYPES = new Set<number>([MessageType.Sync, MessageType.Awareness, MessageType.Welcome, MessageType.SeedRequest, MessageType.Ack]);

function assertNoDocumentBytes(client: TestClient): void {
  for (const frame of client.frames) {
    assert.ok(!DOCUMENT_TYPES.has(frame.bytes[0]!), `document byte received: type ${frame.bytes[0]}`);
  }
  assert.equal(client.text.toString(), '');
}

async function assertRefused(client: TestClient, code: string, close: number): Promise<void> {
  const started = Date.now();
  const closed = await client.waitClosed(5_000);
  const took = Date.now() - started;
  assert.equal(closed.code, close, `close code (${client.describe()})`);
  assert.ok(took <= 1_000, `refused in ${took} ms (bar: ≤ 1 s)`);
  assert.deepEqual(client.errors.map((e) => e.code), [code]);
  assertNoDocumentBytes(client);
}

test('[S1][S2][S3][S4][S11][S13] tokens, permissions and identity', async (t) => {
  const server = await ServerProcess.start({ extraArgs: ['--auth-failures-per-minute', '1000'] });
  t.after(() => server.cleanup());
  const open = await server.createKey({ name: 'open', account: 'acme', origins: ['http://site.example'] });
  const locked = await server.createKey({ name: 'locked', account: 'acme-locked', requireToken: true });
  const other = await server.createKey({ name: 'other', account: 'globex', requireToken: true });
  const clients: TestClient[] = [];
  t.after(async () => {
    await Promise.all(clients.map((c) => c.close()));
  });
  const client = (options: Partial<TestClientOptions> & { docId: string }): TestClient => {
    const c = new TestClient({ url: server.url, apiKey: locked.apiKey, ...options });
    clients.push(c);
    return c;
  };
  const withToken = (token: string, rest: Partial<TestClientOptions> & { docId: string }): TestClient =>
    client({ ...rest, helloOverride: { ...rest.helloOverride, token } });

  // Content that a leak would show.
  const owner = withToken(await mintToken(locked.secret, { docId: 'X', permission: 'edit', user: 'Owner' }), { docId: 'X', seedText: 'confidential' });
  await owner.waitSynced();
  await owner.waitAllAcked();

  await t.test('S1: a key that requires a token refuses a Hello without one (4401, 0 document bytes)', async () => {
    await assertRefused(client({ docId: 'X' }), 'validation_error', 4401);
  });

  await t.test('S1: forged, expired and malformed tokens are refused with 4401', async () => {
    const forged = await mintToken(other.secret, { docId: 'X', permission: 'edit' });
    const expired = await mintToken(locked.secret, { docId: 'X', permission: 'edit', expiresIn: -6 * 60 });
    const noPermission = await mintToken(locked.secret, { docId: 'X', permission: 'admin' as 'edit' });
    const [header, payload] = (await mintToken(locked.secret, { docId: 'X', permission: 'edit' })).split('.');
    const unsigned = `${header}.${payload}.`;
    const algNone = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.`;
    for (const token of [forged, expired, noPermission, unsigned, algNone, 'not-a-jwt']) {
      await assertRefused(withToken(token, { docId: 'X' }), 'validation_error', 4401);
    }
  });

  await t.test('S1: ±5 minutes of clock skew are tolerated', async () => {
    const late = await mintToken(locked.secret, { docId: 'X', permission: 'edit', expiresIn: -4 * 60 });
    const c = withToken(late, { docId: 'X' });
    await c.waitSynced();
    assert.equal(c.text.toString(), 'confidential');
    await c.close();
  });

  await t.test('S1: unknown and revoked apiKeys get 4401 and 0 document bytes', async () => {
    const revoked = await server.createKey({ name: 'gone' });
    await server.revokeKey(revoked.apiKey);
    for (const apiKey of ['wk_unknown00000000000000000', revoked.apiKey]) {
      await assertRefused(client({ docId: 'X', apiKey }), 'validation_error', 4401);
    }
  });

  await t.test('S2: a token for doc X does not open doc Y (4403); a prefix pattern opens only its prefix', async () => {
    await assertRefused(withToken(await mintToken(locked.secret, { docId: 'X', permission: 'edit' }), { docId: 'Y' }), 'access_denied', 4403);
    await assertRefused(withToken(await mintToken(locked.secret, { docId: 'X', permission: 'edit' }), { docId: 'X2' }), 'access_denied', 4403);
    const pattern = await mintToken(locked.secret, { docId: 'team-1/*', permission: 'edit' });
    const inside = withToken(pattern, { docId: 'team-1/notes', seedText: 'team' });
    await inside.waitSynced();
    await inside.close();
    await assertRefused(withToken(pattern, { docId: 'team-2/notes' }), 'access_denied', 4403);
  });

  await t.test("S2: another account's X is a different document; a token of one key does not open another's", async () => {
    // The same docId under another key's account: stored apart, starts empty (this client seeds it).
    const theirs = withToken(await mintToken(other.secret, { docId: 'X', permission: 'edit' }), { docId: 'X', apiKey: other.apiKey, seedText: 'globex' });
    await theirs.waitSynced();
    assert.equal(theirs.text.toString(), 'globex');
    await theirs.close();
    // A token signed by acme-locked's secret presented with globex's apiKey: signature mismatch.
    await assertRefused(
      withToken(await mintToken(locked.secret, { docId: 'X', permission: 'edit' }), { docId: 'X', apiKey: other.apiKey }),
      'validation_error',
      4401,
    );
    const again = withToken(await mintToken(locked.secret, { docId: 'X', permission: 'read' }), { docId: 'X' });
    await again.waitSynced();
    assert.equal(again.text.toString(), 'confidential');
    await again.close();
  });

  await t.test('S2/S10: docIds ../X, NUL, 10 KB are refused or namespaced; __proto__ is just a name', async () => {
    const c1 = client({ docId: '\u0000X', apiKey: open.apiKey, origin: 'http://site.example' });
    await assertRefused(c1, 'validation_error', 4400);
    const c2 = client({ docId: 'x'.repeat(10 * 1024), apiKey: open.apiKey, origin: 'http://site.example' });
    await assertRefused(c2, 'validation_error', 4400);
    for (const docId of ['../X', '__proto__', 'constructor']) {
      const c = client({ docId, apiKey: open.apiKey, origin: 'http://site.example', seedText: `doc ${docId}` });
      await c.waitSynced();
      assert.equal(c.text.toString(), `doc ${docId}`, `${docId} is its own document`);
      await c.close();
    }
    const { stdout } = await server.cli(['keys', 'list', '--json']);
    assert.ok(Array.isArray(JSON.parse(stdout)));
  });

  await t.test('S3: a read-only token: 100 updates rejected, nothing stored, peers get nothing', async () => {
    const editor = withToken(await mintToken(locked.secret, { docId: 'X', permission: 'edit' }), { docId: 'X' });
    await editor.waitSynced();
    const framesBefore = editor.frames.length;
    const reader = withToken(await mintToken(locked.secret, { docId: 'X', permission: 'read', user: 'Reader' }), { docId: 'X' });
    await reader.waitSynced();
    assert.equal(reader.welcome?.permission, 'read');
    await reader.waitAllAcked(); // its step2 reply carries nothing new: acked
    const ackedBefore = reader.lastAck;
    const sentBefore = reader.sent;
    for (let i = 0; i < 100; i++) reader.insert(0, `evil${i} `);
    assert.equal(reader.sent - sentBefore, 100);
    // A step1 is answered after every earlier message of the connection was handled (in order).
    reader.send({ type: MessageType.Sync, step: SyncStep.Step1, stateVector: Y.encodeStateVector(new Y.Doc()) });
    await reader.waitFor(() => messagesOfType(reader, MessageType.Sync).filter((m) => m.step === SyncStep.Step2).length >= 2, 'step2 reply');
    assert.equal(reader.lastAck, ackedBefore, 'no update of a read-only connection is acked');
    assert.deepEqual(reader.errors.map((e) => [e.code, e.fatal]), [['access_denied', false]]);
    assert.equal(reader.closeEvent, undefined, 'the connection stays open (read-only viewers keep watching)');
    // The editor (a peer) got no Sync frame from it; presence of the reader may arrive, content may not.
    const relayed = editor.frames.slice(framesBefore).filter((f) => f.bytes[0] === MessageType.Sync);
    assert.equal(relayed.length, 0, 'peers get nothing');
    assert.equal(editor.text.toString(), 'confidential');
    const fresh = withToken(await mintToken(locked.secret, { docId: 'X', permission: 'read' }), { docId: 'X' });
    await fresh.waitSynced();
    assert.equal(fresh.text.toString(), 'confidential', 'stored state unchanged');
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const rejected = /wave_rejections_total\{code="access_denied"\} (\d+)/.exec(metrics);
    assert.ok(rejected && Number(rejected[1]) >= 100, `access_denied rejections counted: ${rejected?.[1]}`);
    await Promise.all([editor.close(), reader.close(), fresh.close()]);
  });

  await t.test("S4: identity is stamped from the token; presence for another client's id is dropped", async () => {
    const alice = withToken(await mintToken(locked.secret, { docId: 'X', permission: 'edit', user: { name: 'Alice', id: 'u-1' } }), {
      docId: 'X',
      user: { name: 'Mallory (claims to be Alice)' },
    });
    await alice.waitSynced();
    assert.equal(alice.welcome?.user.name, 'Alice');
    const bob = withToken(await mintToken(locked.secret, { docId: 'X', permission: 'edit', user: 'Bob' }), { docId: 'X', user: { name: 'Alice' } });
    await bob.waitSynced();
    assert.equal(bob.welcome?.user.name, 'Bob');
    // Bob claims Alice's client id and name in presence, and publishes his own state claiming to be Alice.
    const forged = new awarenessProtocol.Awareness(new Y.Doc());
    forged.clientID = alice.clientId;
    forged.setLocalState({ user: { name: 'Alice' }, cursor: { anchor: 1 } });
    bob.send({ type: MessageType.Awareness, update: awarenessProtocol.encodeAwarenessUpdate(forged, [alice.clientId]) });
    forged.destroy();
    bob.setPresence({ user: { name: 'Alice' }, color: 'red', cursor: { anchor: 2 } });
    const seen = await alice.waitFor(() => alice.awareness.getStates().get(bob.clientId), "Bob's presence");
    assert.equal((seen as { user: { name: string } }).user.name, 'Bob', 'stamped by the server');
    assert.equal(alice.awareness.getStates().get(alice.clientId), undefined, "nobody published for Alice's id");
    await Promise.all([alice.close(), bob.close()]);
  });

  await t.test('S11: an Origin outside the allow-list gets one fatal validation_error naming it (4401), 0 document bytes', async () => {
    const c = client({ docId: 'X', apiKey: open.apiKey, origin: 'http://evil.example' });
    await assertRefused(c, 'validation_error', 4401);
    assert.equal(c.errors[0]!.fatal, true);
    assert.match(c.errors[0]!.detail, /"http:\/\/evil\.example" is not allowed for this apiKey.*keys create .*--origin "http:\/\/evil\.example"/);
  });

  await t.test('S13: server-only and reserved message types are dropped, never relayed, socket closed 4400', async () => {
    const token = await mintToken(locked.secret, { docId: 'X', permission: 'edit' });
    const watcher = withToken(token, { docId: 'X' });
    await watcher.waitSynced();
    const forgedFrames: Uint8Array[] = [
      encodeMessage({ type: MessageType.Welcome, welcome: { epoch: 1, permission: 'edit', user: {}, color: 'red', joinTime: 1, persistent: false } }),
      encodeMessage({ type: MessageType.Error, error: { code: 'server_error', detail: 'x', fatal: true } }),
      encodeMessage({ type: MessageType.Ack, count: 5 }),
      encodeMessage({ type: MessageType.SeedRequest, epoch: 1 }),
      encodeMessage({ type: MessageType.Pong }),
      (() => {
        const e = encoding.createEncoder();
        encoding.writeVarUint(e, 42); // reserved / unknown
        return encoding.toUint8Array(e);
      })(),
    ];
    for (const frame of forgedFrames) {
      const framesBefore = watcher.frames.length;
      const attacker = withToken(token, { docId: 'X' });
      await attacker.waitSynced();
      attacker.sendRaw(frame);
      const closed = await attacker.waitClosed();
      assert.equal(closed.code, 4400, `type ${frame[0]} closes 4400`);
      assert.equal(attacker.errors.at(-1)?.code, 'validation_error');
      const relayed = watcher.frames.slice(framesBefore).filter((f) => f.bytes[0] === frame[0]);
      assert.equal(relayed.length, 0, `type ${frame[0]} never relayed`);
    }
    await watcher.close();
  });
});

test('[S1] repeated authorisation failures from one address are throttled (HTTP 429)', async (t) => {
  const server = await ServerProcess.start({ extraArgs: ['--auth-failures-per-minute', '5'] });
  t.after(() => server.cleanup());
  const locked = await server.createKey({ name: 'locked', requireToken: true });
  const forged = await mintToken('wsk_not-the-secret', { docId: 'X', permission: 'edit' });
  for (let i = 0; i < 5; i++) {
    const c = new TestClient({ url: server.url, apiKey: locked.apiKey, docId: 'X', helloOverride: { token: forged } });
    assert.equal((await c.waitClosed()).code, 4401);
  }
  // Even a valid request from that address is now answered 429 before the upgrade, for the rest of the minute.
  const valid = await mintToken(locked.secret, { docId: 'X', permission: 'edit' });
  const c = new TestClient({ url: server.url, apiKey: locked.apiKey, docId: 'X', helloOverride: { token: valid } });
  await assert.rejects(c.opened, /HTTP 429/);
  assert.equal(c.frames.length, 0);
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  assert.match(metrics, /wave_rejections_total\{code="http_429"\} 1/);
});
