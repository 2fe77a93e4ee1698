/**
 * The real client core (`Session`) over real WebSockets against the real server process, for what a refused client
 * sees: a read-only view reverts local changes to the shared document at once (RELIABILITY.md S17), and a page from
 * an origin outside the key's allow-list gets one fatal `validation_error` naming the origin, with no retry (S11).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { Session, type SessionEvents } from '../../src/core/session.js';
import type { CoeditError } from '../../src/core/errors.js';
import type { SocketLike } from '../../src/core/socket.js';
import { ServerProcess } from '../../../server/test/helpers/server-process.js';
import { mintToken } from '../../../server/test/helpers/tokens.js';
import { StringEditor } from '../helpers/string-editor.js';
import { turn, until } from '../helpers/util.js';

let server: ServerProcess | undefined;
after(() => server?.cleanup());

async function boot(): Promise<ServerProcess> {
  server ??= await ServerProcess.start();
  return server;
}

interface Peer {
  editor: StringEditor;
  session: Session;
  errors: CoeditError[];
  started: Promise<void>;
  /** WebSockets the session opened. */
  sockets: number;
}

function peer(url: string, apiKey: string, docId: string, options: { token?: string; origin?: string; initial?: string } = {}): Peer {
  const editor = new StringEditor(options.initial ?? '');
  const p: Peer = { editor, session: undefined as unknown as Session, errors: [], started: Promise.resolve(), sockets: 0 };
  p.session = new Session({
    wsUrl: `${url.replace(/^http/, 'ws')}/v2/ws`,
    apiKey,
    docId,
    user: { name: 'tester' },
    ...(options.token !== undefined ? { token: options.token } : {}),
    binding: editor,
    socketFactory: (wsUrl) => {
      p.sockets++;
      return new WebSocket(wsUrl, options.origin !== undefined ? { origin: options.origin } : {}) as unknown as SocketLike;
    },
    emit: <K extends keyof SessionEvents>(name: K, payload: SessionEvents[K]) => {
      if (name === 'error') p.errors.push(payload as CoeditError);
    },
  });
  p.started = p.session.start();
  return p;
}

test('[S17] a read-only view reverts its own changes at once and keeps showing the shared document', async (t) => {
  const s = await boot();
  const key = await s.createKey({ name: 'readonly-core', requireToken: true });
  const docId = 'readonly-core';
  const writer = peer(s.url, key.apiKey, docId, { initial: 'alpha beta gamma', token: await mintToken(key.secret, { docId, permission: 'edit' }) });
  await writer.started;
  const reader = peer(s.url, key.apiKey, docId, { token: await mintToken(key.secret, { docId, permission: 'read' }) });
  t.after(async () => {
    await reader.session.stop();
    await writer.session.stop();
  });
  await reader.started;
  assert.equal(reader.session.permission, 'read');
  assert.equal(reader.editor.value, 'alpha beta gamma');

  // The reader's editor (a script, say) inserts and deletes: both are reverted before the next task.
  reader.editor.edit(0, 0, 'hacked ');
  await turn();
  assert.equal(reader.editor.value, 'alpha beta gamma', 'an insertion is reverted at once');
  reader.editor.edit(6, 4, '');
  await turn();
  assert.equal(reader.editor.value, 'alpha beta gamma', 'a deletion is reverted at once');

  // The writer edits inside the text the reader had deleted: the reader shows exactly the writer's document.
  writer.editor.edit(8, 0, 'X');
  writer.editor.edit(6, 1, '');
  await until('the writer saved', () => writer.session.getStatus().saved);
  await until("the reader shows the writer's document", () => reader.editor.value === writer.editor.value);
  assert.equal(writer.editor.value, 'alpha eXta gamma');
  assert.deepEqual(reader.errors.map((e) => e.code), [], 'nothing was sent to be refused');
  assert.equal(reader.session.getStatus().saved, true, 'a refused change is not a pending edit');
});

test('[S17] edits kept from before the connection became read-only are discarded: the editor shows the shared document', async (t) => {
  const s = await boot();
  const key = await s.createKey({ name: 'readonly-kept', requireToken: true });
  const docId = 'readonly-kept';
  const writer = peer(s.url, key.apiKey, docId, { initial: 'shared', token: await mintToken(key.secret, { docId, permission: 'edit' }) });
  await writer.started;
  const user = peer(s.url, key.apiKey, docId, { token: await mintToken(key.secret, { docId, permission: 'edit' }) });
  t.after(async () => {
    await user.session.stop();
    await writer.session.stop();
  });
  await user.started;
  // Offline, the user edits; before it reconnects, its token changes to a read-only one (all in one task: the
  // backoff's reconnect must not run in between).
  const readToken = await mintToken(key.secret, { docId, permission: 'read' });
  user.session.networkLost();
  user.editor.edit(6, 0, ' offline edit');
  assert.equal(user.session.getStatus().pending, 1);
  user.session.setToken(readToken);
  user.session.retryNow();
  await until('the read-only reconnect discarded the kept edit', () => user.editor.value === 'shared' && user.session.getStatus().saved).catch((e: Error) => {
    throw new Error(`${e.message}: ${JSON.stringify({ value: user.editor.value, status: user.session.getStatus(), permission: user.session.permission, errors: user.errors.map((x) => `${x.code}: ${x.detail}`) })}`);
  });
  assert.equal(user.session.permission, 'read');
  assert.deepEqual(user.errors.map((e) => e.code).filter((c) => c !== 'connection_lost'), ['access_denied'], 'the discard is reported once');
  writer.editor.edit(6, 0, ' more');
  await until("the writer's edit arrives", () => user.editor.value === 'shared more');
});

test('[S17] a writer that becomes read-only keeps its client id when a refused change is reverted, its own saved edits included', async (t) => {
  const s = await boot();
  const key = await s.createKey({ name: 'readonly-own-edits', requireToken: true });
  const docId = 'readonly-own-edits';
  const writer = peer(s.url, key.apiKey, docId, { initial: 'shared', token: await mintToken(key.secret, { docId, permission: 'edit' }) });
  await writer.started;
  const user = peer(s.url, key.apiKey, docId, { token: await mintToken(key.secret, { docId, permission: 'edit' }) });
  t.after(async () => {
    await user.session.stop();
    await writer.session.stop();
  });
  await user.started;
  user.editor.edit(6, 0, ' saved');
  await until("the user's edit is saved", () => user.session.getStatus().saved && writer.editor.value === 'shared saved');
  const self = (): number => user.session.getUsers().filter((u) => u.self).length;
  assert.equal(self(), 1);
  // The shared document now holds structs of the user's own client id; the user rejoins read-only.
  user.session.networkLost();
  user.session.setToken(await mintToken(key.secret, { docId, permission: 'read' }));
  user.session.retryNow();
  await until('the user is read-only', () => user.session.permission === 'read' && user.session.getStatus().state === 'online');
  user.editor.edit(0, 0, 'script ');
  await until('the refused change is reverted', () => user.editor.value === 'shared saved');
  assert.equal(self(), 1, 'the session still knows itself among the users (its doc kept its client id)');
  writer.editor.edit(0, 0, 'more ');
  await until("the writer's edit arrives", () => user.editor.value === 'more shared saved');
});

test('[S11] a page from an origin outside the key allow-list: one fatal validation_error naming the origin, start() rejects, no retry', async (t) => {
  const s = await boot();
  const key = await s.createKey({ name: 'origin-core', origins: ['https://app.example'] });
  const page = peer(s.url, key.apiKey, 'origin-core', { origin: 'https://elsewhere.example', initial: 'local text' });
  // Ends a retry loop, should there be one (the test then fails on its assertions, not by hanging).
  t.after(() => page.session.stop());
  // S11's bar is 5 s; a refused start must not hang on retries.
  const outcome = await Promise.race([
    page.started.then(
      () => 'resolved',
      (error: CoeditError) => error,
    ),
    new Promise<string>((r) => setTimeout(() => r('still pending after 5 s'), 5_000)),
  ]);
  assert.equal(typeof outcome, 'object', `start() settled: ${String(outcome)}`);
  const error = outcome as CoeditError;
  assert.equal(error.code, 'validation_error');
  assert.equal(error.fatal, true);
  assert.match(error.detail, /"https:\/\/elsewhere\.example" is not allowed for this apiKey/);
  assert.match(error.detail, /wave-server keys create .*--origin "https:\/\/elsewhere\.example"/);
  assert.deepEqual(page.errors.map((e) => e.code), ['validation_error'], 'one error event, no connection_lost');
  assert.equal(page.session.getStatus().state, 'stopped');
  assert.equal(page.sockets, 1, 'no retry');
  assert.equal(page.editor.value, 'local text', 'the editor keeps its content');
});
