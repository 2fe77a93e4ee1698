/**
 * RELIABILITY.md S16 against the real server process: a connection ends when its token's `exp` plus the 300 s clock
 * skew passes, unless the client sent a fresh token in-band (`Token`, PROTOCOL.md P2b); tokens whose `iat` is more
 * than the skew ahead are refused like those whose `nbf` is.
 *
 * Short lives without waiting minutes: a token whose `exp` lies 300 − N seconds in the past is still inside the skew
 * when the connection joins, and expires for the server N seconds later.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MessageType } from 'wave-protocol';
import { ServerProcess } from '../helpers/server-process.js';
import { TestClient } from '../helpers/test-client.js';
import type { TestClientOptions } from '../helpers/test-client.js';
import { mintToken } from '../helpers/tokens.js';

const SKEW_SECONDS = 300;
/** Seconds of life the short tokens have left on the server when minted. */
const LIFE_SECONDS = 6;

test('[S16] a token expiring during a session ends it at exp + skew unless a fresh token was sent in-band', async (t) => {
  const server = await ServerProcess.start({ extraArgs: ['--auth-failures-per-minute', '1000'] });
  t.after(() => server.cleanup());
  const key = await server.createKey({ name: 'expiring', requireToken: true });
  const clients: TestClient[] = [];
  t.after(() => Promise.all(clients.map((c) => c.close())));
  const connect = async (token: string, options: Partial<TestClientOptions> = {}): Promise<TestClient> => {
    const client = new TestClient({ url: server.url, apiKey: key.apiKey, docId: 'd', helloOverride: { token }, ...options });
    clients.push(client);
    await client.waitSynced();
    return client;
  };
  const short = await mintToken(key.secret, { docId: 'd', permission: 'edit', expiresIn: LIFE_SECONDS - SKEW_SECONDS });
  const fresh = await mintToken(key.secret, { docId: 'd', permission: 'edit', expiresIn: 3600 });
  const forged = await mintToken('not the secret', { docId: 'd', permission: 'edit', expiresIn: 3600 });
  const reader = await mintToken(key.secret, { docId: 'd', permission: 'read', expiresIn: 3600 });

  const expiring = await connect(short, { seedText: 'start' });
  const renewed = await connect(short);
  const badRenewal = await connect(short);
  const demoted = await connect(short);
  renewed.send({ type: MessageType.Token, token: fresh });
  badRenewal.send({ type: MessageType.Token, token: forged });
  demoted.send({ type: MessageType.Token, token: reader });

  // A fresh token with another permission: the client must rejoin to get it (1012, reconnect; not an error).
  assert.equal((await demoted.waitClosed()).code, 1012);
  assert.deepEqual(demoted.errors, []);

  // A forged renewal ends the connection at once, like a forged Hello token.
  const forgedClose = await badRenewal.waitClosed();
  assert.equal(forgedClose.code, 4401);
  assert.match(badRenewal.errors[0]?.detail ?? '', /signature/);

  // Same exp for both: the one that did not renew is closed, with the reason named …
  const closed = await expiring.waitClosed((LIFE_SECONDS + 10) * 1000);
  assert.equal(closed.code, 4401, expiring.describe());
  assert.deepEqual(expiring.errors.map((e) => [e.code, e.fatal]), [['validation_error', true]]);
  assert.match(expiring.errors[0]!.detail, /token expired/);
  // … and the renewed one, past the same deadline, goes on editing.
  renewed.insert(renewed.text.length, ' after the first exp');
  await renewed.waitAllAcked();
  assert.equal(renewed.closeEvent, undefined);
  assert.deepEqual(renewed.errors, []);
});

test('[S16] a Token message on a connection opened without a token is refused (4400)', async (t) => {
  const server = await ServerProcess.start();
  t.after(() => server.cleanup());
  const key = await server.createKey({ name: 'open' });
  const token = await mintToken(key.secret, { docId: 'd', permission: 'edit' });
  const plain = new TestClient({ url: server.url, apiKey: key.apiKey, docId: 'd', seedText: 'x' });
  t.after(() => plain.close());
  await plain.waitSynced();
  plain.send({ type: MessageType.Token, token });
  assert.equal((await plain.waitClosed()).code, 4400);
  assert.match(plain.errors[0]?.detail ?? '', /opened with a token/);
});

test('[S16] tokens issued in the future (iat beyond the skew) are refused; within the skew accepted', async (t) => {
  const server = await ServerProcess.start({ extraArgs: ['--auth-failures-per-minute', '1000'] });
  t.after(() => server.cleanup());
  const key = await server.createKey({ name: 'iat', requireToken: true });
  const attempt = async (issuedIn: number): Promise<TestClient> => {
    const token = await mintToken(key.secret, { docId: 'd', permission: 'edit', issuedIn, expiresIn: issuedIn + 3600 });
    const client = new TestClient({ url: server.url, apiKey: key.apiKey, docId: 'd', seedText: 'x', helloOverride: { token } });
    t.after(() => client.close());
    return client;
  };
  for (const issuedIn of [10 * 60, 365 * 24 * 3600]) {
    const client = await attempt(issuedIn);
    assert.equal((await client.waitClosed()).code, 4401, `iat +${issuedIn} s`);
    assert.equal(client.errors[0]?.code, 'validation_error');
    assert.match(client.errors[0]!.detail, /iat is in the future/);
    assert.equal(client.synced, false);
  }
  const withinSkew = await attempt(4 * 60);
  await withinSkew.waitSynced();
});
