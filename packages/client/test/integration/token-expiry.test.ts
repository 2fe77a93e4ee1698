/**
 * RELIABILITY.md S16 with the real client core (`Session`) against the real server process: three sessions join
 * with the same short-lived token.
 * - a token function that keeps working: the session continues past the token's expiry on the same socket, with no
 *   `connection_lost`, no status change and no lost edit (the fresh token goes in-band, PROTOCOL.md P2b);
 * - a string token: at expiry a fatal `validation_error` naming the reason, `stopped`, no retry;
 * - a token function that fails after the first token: the same fatal end at expiry.
 *
 * Short lives without waiting minutes: the token's `exp` lies 300 − LIFE_SECONDS seconds in the past, inside the
 * server's clock skew, so the server accepts it at join and ends it LIFE_SECONDS later.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { Session, type SessionEvents, type SessionStatus } from '../../src/core/session.js';
import type { SocketLike } from '../../src/core/socket.js';
import { ServerProcess } from '../../../server/test/helpers/server-process.js';
import { mintToken } from '../../../server/test/helpers/tokens.js';
import { StringEditor } from '../helpers/string-editor.js';
import { freePort, hold, until } from '../helpers/util.js';

const SKEW_SECONDS = 300;
const LIFE_SECONDS = 8;

interface Client {
  editor: StringEditor;
  session: Session;
  statuses: SessionStatus[];
  errors: Array<{ code: string; detail: string; fatal: boolean }>;
  sockets: number;
  tokenCalls: number;
  started: Promise<void>;
}

/** `route` rewrites each socket's URL (a dead port stands for a lost network). */
function join(url: string, apiKey: string, token: string, refreshToken?: () => Promise<string>, initial = '', route = (u: string) => u): Client {
  const editor = new StringEditor(initial);
  const client: Client = { editor, session: undefined as unknown as Session, statuses: [], errors: [], sockets: 0, tokenCalls: 0, started: Promise.resolve() };
  client.session = new Session({
    wsUrl: `${url.replace(/^http/, 'ws')}/v2/ws`,
    apiKey,
    docId: 'd',
    user: { name: 'u' },
    token,
    ...(refreshToken
      ? {
          refreshToken: () => {
            client.tokenCalls++;
            return refreshToken();
          },
        }
      : {}),
    binding: editor,
    socketFactory: (socketUrl) => {
      client.sockets++;
      return new WebSocket(route(socketUrl)) as unknown as SocketLike;
    },
    emit: <K extends keyof SessionEvents>(name: K, payload: SessionEvents[K]) => {
      if (name === 'status') client.statuses.push(payload as SessionStatus);
      if (name === 'error') {
        const error = payload as SessionEvents['error'];
        client.errors.push({ code: error.code, detail: error.detail, fatal: error.fatal });
      }
    },
  });
  client.started = client.session.start();
  return client;
}

test('[S16] a token function refreshes in-band with no visible gap; a string token and a failing function end fatally at expiry', async (t) => {
  const server = await ServerProcess.start();
  t.after(() => server.cleanup());
  const key = await server.createKey({ name: 'expiring', requireToken: true });
  const short = await mintToken(key.secret, { docId: 'd', permission: 'edit', expiresIn: LIFE_SECONDS - SKEW_SECONDS });
  const fresh = (): Promise<string> => mintToken(key.secret, { docId: 'd', permission: 'edit', expiresIn: 3600 });

  const refreshing = join(server.url, key.apiKey, short, fresh, 'start');
  await refreshing.started;
  const fixed = join(server.url, key.apiKey, short);
  const failing = join(server.url, key.apiKey, short, () => Promise.reject(new Error('backend down')));
  await Promise.all([fixed.started, failing.started]);
  t.after(() => Promise.all([refreshing, fixed, failing].map((c) => c.session.stop())));

  // The string token's session ends at expiry: fatal, the reason named, no reconnect.
  await until('the string-token session stops', () => fixed.session.getStatus().state === 'stopped', (LIFE_SECONDS + 10) * 1000);
  const fatal = fixed.errors.filter((e) => e.fatal);
  assert.equal(fatal.length, 1, JSON.stringify(fixed.errors));
  assert.equal(fatal[0]!.code, 'validation_error');
  assert.match(fatal[0]!.detail, /token expired/);
  assert.equal(fixed.sockets, 1, 'no retry after the fatal error');

  // The failing function's session ends the same way (its failures before that are reported, not fatal).
  await until('the failing-function session stops', () => failing.session.getStatus().state === 'stopped');
  const failingFatal = failing.errors.filter((e) => e.fatal);
  assert.equal(failingFatal.length, 1, JSON.stringify(failing.errors));
  assert.equal(failingFatal[0]!.code, 'validation_error');
  assert.match(failingFatal[0]!.detail, /token expired/);
  assert.ok(failing.errors.some((e) => !e.fatal && /token function failed: backend down/.test(e.detail)), JSON.stringify(failing.errors));
  assert.equal(failing.sockets, 1);

  // Past the same expiry, the refreshing session goes on: same socket, always online, edits saved.
  refreshing.editor.edit(refreshing.editor.value.length, 0, ' after expiry');
  await until('the edit made after expiry is saved', () => refreshing.session.getStatus().saved);
  const reader = join(server.url, key.apiKey, await fresh());
  t.after(() => reader.session.stop());
  await reader.started;
  assert.equal(reader.editor.value, 'start after expiry');
  assert.ok(refreshing.tokenCalls >= 1);
  assert.equal(refreshing.sockets, 1, 'no reconnect');
  assert.deepEqual(refreshing.errors, []);
  const online = refreshing.statuses.findIndex((s) => s.state === 'online');
  assert.ok(online >= 0);
  assert.deepEqual(refreshing.statuses.slice(online).filter((s) => s.state !== 'online'), [], 'status stays online');
  assert.equal(refreshing.session.getStatus().state, 'online');
});

test('[S16] a reconnect after the token expired (the page was offline past exp) asks the token function first', async (t) => {
  const server = await ServerProcess.start();
  t.after(() => server.cleanup());
  const key = await server.createKey({ name: 'offline-past-exp', requireToken: true });
  const deadline = Date.now() + LIFE_SECONDS * 1000;
  const short = await mintToken(key.secret, { docId: 'd', permission: 'edit', expiresIn: LIFE_SECONDS - SKEW_SECONDS });
  // The token backend is unreachable until the network comes back: its scheduled calls fail and are retried.
  let networkUp = true;
  let backendUp = false;
  const fresh = (): Promise<string> =>
    backendUp ? mintToken(key.secret, { docId: 'd', permission: 'edit', expiresIn: 3600 }) : Promise.reject(new Error('network down'));
  const deadPort = await freePort();
  const client = join(server.url, key.apiKey, short, fresh, 'start', (u) => (networkUp ? u : u.replace(`:${server.port}/`, `:${deadPort}/`)));
  t.after(() => client.session.stop());
  await client.started;
  networkUp = false;
  client.session.networkLost();
  await until('offline', () => client.session.getStatus().state === 'offline');
  client.editor.edit(client.editor.value.length, 0, ' offline edit');
  // Kept down past the token's deadline on the server (exp + skew), then back.
  await hold(deadline - Date.now() + 500);
  networkUp = backendUp = true;
  client.session.retryNow();
  const status = (): ReturnType<Session['getStatus']> => client.session.getStatus();
  await until('online again with the offline edit saved, or stopped', () => (status().state === 'online' && status().saved) || status().state === 'stopped', 15_000);
  assert.deepEqual(client.errors.filter((e) => e.fatal), [], 'the reconnect carried a fresh token');
  assert.equal(status().state, 'online');
  assert.ok(client.errors.some((e) => /token function failed: network down/.test(e.detail)), 'the scheduled refresh failed while offline');
  const reader = join(server.url, key.apiKey, await fresh());
  t.after(() => reader.session.stop());
  await reader.started;
  assert.equal(reader.editor.value, 'start offline edit');
});
