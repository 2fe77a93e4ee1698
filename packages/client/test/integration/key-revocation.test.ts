/**
 * RELIABILITY.md S15 with the real client core (`Session`) against the real server process: a key revoked by the
 * CLI while the session is online ends it with one fatal `validation_error` naming the reason; the session stops
 * and opens no other socket (no retry loop).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { Session, type SessionEvents } from '../../src/core/session.js';
import type { SocketLike } from '../../src/core/socket.js';
import { ServerProcess } from '../../../server/test/helpers/server-process.js';
import { StringEditor } from '../helpers/string-editor.js';
import { until } from '../helpers/util.js';

test('[S15] a session whose key is revoked stops with a fatal validation_error and does not retry', async (t) => {
  const server = await ServerProcess.start();
  t.after(() => server.cleanup());
  const { apiKey } = await server.createKey({ name: 'revoked-while-online' });
  const errors: Array<SessionEvents['error']> = [];
  let sockets = 0;
  const editor = new StringEditor('hello');
  const session = new Session({
    wsUrl: `${server.url.replace(/^http/, 'ws')}/v2/ws`,
    apiKey,
    docId: 'd',
    user: { name: 'u' },
    binding: editor,
    socketFactory: (url) => {
      sockets++;
      return new WebSocket(url) as unknown as SocketLike;
    },
    emit: <K extends keyof SessionEvents>(name: K, payload: SessionEvents[K]) => {
      if (name === 'error') errors.push(payload as SessionEvents['error']);
    },
  });
  t.after(() => session.stop());
  await session.start();
  await server.revokeKey(apiKey);
  await until('the session stops', () => session.getStatus().state === 'stopped', 5_000);
  assert.deepEqual(errors.map((e) => [e.code, e.fatal]), [['validation_error', true]]);
  assert.match(errors[0]!.detail, /revoked/);
  assert.equal(sockets, 1, 'no reconnect after the fatal error');
});
