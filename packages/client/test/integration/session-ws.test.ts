/**
 * The real client core (`Session`) over real WebSockets (`ws`) against the real server process, with a
 * string-backed editor binding (STYLE.md §4: the contract's fake editor in Node). Covers seeding with many clients
 * at once, convergence of concurrent edits, acks/`saved`, reconnect after a server crash, and `stop()` delivery.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import * as Y from 'yjs';
import { Session, type DocBinding, type SessionEvents, type SessionStatus } from '../../src/core/session.js';
import type { SocketLike } from '../../src/core/socket.js';
import { ServerProcess } from '../../../server/test/helpers/server-process.js';
import { freePort, until } from '../helpers/util.js';

/** A fake editor: a string, edited through `edit()`, kept equal to the shared `Y.Text` while bound. */
class StringEditor implements DocBinding {
  readonly textName = 'text';
  value: string;
  private ytext: Y.Text | null = null;
  private readonly observer = () => {
    this.value = this.ytext?.toString() ?? this.value;
  };

  constructor(initial: string) {
    this.value = initial;
  }

  seed(doc: Y.Doc): void {
    doc.getText('text').insert(0, this.value);
  }

  bind(doc: Y.Doc): void {
    this.ytext = doc.getText('text');
    this.value = this.ytext.toString();
    this.ytext.observe(this.observer);
  }

  unbind(): void {
    this.ytext?.unobserve(this.observer);
    this.ytext = null;
  }

  /** A user edit: splice the string and write the same splice into the shared text. */
  edit(index: number, remove: number, insert: string): void {
    const at = Math.min(index, this.value.length);
    const del = Math.min(remove, this.value.length - at);
    this.value = this.value.slice(0, at) + insert + this.value.slice(at + del);
    const ytext = this.ytext;
    if (!ytext) return;
    ytext.doc?.transact(() => {
      if (del > 0) ytext.delete(at, del);
      if (insert) ytext.insert(at, insert);
    }, this);
  }
}

interface Client {
  editor: StringEditor;
  session: Session;
  statuses: SessionStatus[];
  events: Array<{ name: keyof SessionEvents; payload: unknown }>;
  started: Promise<void>;
}

let server: ServerProcess;
let apiKey: string;

async function boot(): Promise<void> {
  if (server) return;
  server = await ServerProcess.start();
  ({ apiKey } = await server.createKey({ name: 'client-core' }));
}

after(async () => {
  await server?.kill('SIGTERM');
  await server?.cleanup();
});

function connect(
  docId: string,
  initial: string,
  name: string,
  url = server.url,
  key = apiKey,
  fetchHostCopy?: () => Promise<string | null>,
): Client {
  const editor = new StringEditor(initial);
  const statuses: SessionStatus[] = [];
  const events: Client['events'] = [];
  const session = new Session({
    wsUrl: `${url.replace(/^http/, 'ws')}/v2/ws`,
    apiKey: key,
    docId,
    user: { name },
    binding: editor,
    socketFactory: (url) => new WebSocket(url) as unknown as SocketLike,
    ...(fetchHostCopy ? { fetchHostCopy } : {}),
    emit: (evName, payload) => {
      events.push({ name: evName, payload });
      if (evName === 'status') statuses.push(payload as SessionStatus);
    },
  });
  return { editor, session, statuses, events, started: session.start() };
}

/** Resolves when `check()` holds; fails after `ms` with `what`. Polls every 20 ms (a condition, not a sleep). */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

test('[P4][P5] ten sessions starting at once on an empty document: one seed, content once, all synced', async () => {
  await boot();
  const clients = Array.from({ length: 10 }, (_, i) => connect('race-core', `seed text from client ${i}\n`, `u${i}`));
  await Promise.all(clients.map((c) => c.started));
  const texts = new Set(clients.map((c) => c.editor.value));
  assert.equal(texts.size, 1, `all clients agree: ${[...texts].join(' | ')}`);
  const [text] = [...texts] as [string];
  assert.match(text, /^seed text from client \d\n$/, `exactly one seed, once: ${JSON.stringify(text)}`);
  await Promise.all(clients.map((c) => c.session.stop()));
});

test('[P9][P10] concurrent edits converge and every session reports saved', async () => {
  await boot();
  const seed = Number(process.env['WAVE_SEED'] ?? Date.now() % 100_000);
  console.log(`seed ${seed} (replay with WAVE_SEED=${seed})`);
  const random = rng(seed);
  const clients = ['a', 'b', 'c'].map((n) => connect('converge-core', 'start\n', n));
  await Promise.all(clients.map((c) => c.started));
  for (let round = 0; round < 60; round++) {
    for (const [i, c] of clients.entries()) {
      const len = c.editor.value.length;
      if (random() < 0.7 || len < 5) c.editor.edit(Math.floor(random() * (len + 1)), 0, `w${i}.${round} `);
      else c.editor.edit(Math.floor(random() * len), 1 + Math.floor(random() * 3), '');
    }
    if (round % 10 === 0) await new Promise((r) => setImmediate(r));
  }
  await until('all three editors equal', () => new Set(clients.map((c) => c.editor.value)).size === 1);
  await until('every session saved', () => clients.every((c) => c.session.getStatus().saved));
  assert.ok(clients[0]!.editor.value.length > 50, 'the edits built a non-trivial document');
  for (const c of clients) {
    assert.ok(c.statuses.some((s) => !s.saved && s.pending > 0), 'pending edits were reported before their ack');
    assert.deepEqual(c.statuses.at(-1), { state: 'online', saved: true, pending: 0 });
  }
  const users = clients[0]!.session.getUsers();
  assert.deepEqual(users.map((u) => u.user.name).sort(), ['a', 'b', 'c']);
  assert.equal(users.filter((u) => u.self).length, 1);
  await Promise.all(clients.map((c) => c.session.stop()));
});

test('[P10] a server crash: sessions go offline, keep editing, reconnect and deliver every edit once', async () => {
  await boot();
  // A server of its own on a fixed port, so that the sessions can find it again after the restart.
  const port = await freePort();
  let crashy = await ServerProcess.start({ extraArgs: ['--port', String(port)] });
  const key = await crashy.createKey({ name: 'crash' });
  const make = (name: string, initial: string) => connect('crash-core', initial, name, crashy.url, key.apiKey);
  try {
    const a = make('a', 'base\n');
    const b = make('b', 'base\n');
    await Promise.all([a.started, b.started]);
    a.editor.edit(0, 0, 'before-crash ');
    await until('a saved before the crash', () => a.session.getStatus().saved);

    await crashy.kill('SIGKILL');
    await until('both sessions offline', () => [a, b].every((c) => c.session.getStatus().state === 'offline'));
    a.editor.edit(a.editor.value.length, 0, 'offline-a ');
    b.editor.edit(0, 0, 'offline-b ');
    assert.equal(a.session.getStatus().saved, false, 'offline edits are not saved');
    crashy = await crashy.restart();
    await until('both back online and saved', () => [a, b].every((c) => c.session.getStatus().state === 'online' && c.session.getStatus().saved), 20_000);
    await until('a and b converged', () => a.editor.value === b.editor.value);
    for (const word of ['before-crash', 'offline-a', 'offline-b', 'base']) {
      assert.equal(a.editor.value.split(word).length - 1, 1, `${word} once in ${JSON.stringify(a.editor.value)}`);
    }
    assert.ok(a.statuses.some((s) => s.state === 'offline') && a.statuses.at(-1)?.state === 'online');
    const c = make('c', 'ignored\n');
    await c.started;
    assert.equal(c.editor.value, a.editor.value, 'a new session loads the stored state');
    await Promise.all([a.session.stop(), b.session.stop(), c.session.stop()]);
  } finally {
    await crashy.kill('SIGTERM');
    await crashy.cleanup();
  }
});

test('stop() with 50 unsent edits delivers them before leaving', async () => {
  await boot();
  const a = connect('stop-core', '', 'a');
  await a.started;
  for (let i = 0; i < 50; i++) a.editor.edit(a.editor.value.length, 0, `e${i} `);
  await a.session.stop();
  const b = connect('stop-core', '', 'b');
  await b.started;
  const words = b.editor.value.trim().split(' ');
  assert.equal(words.length, 50);
  assert.deepEqual(words, Array.from({ length: 50 }, (_, i) => `e${i}`));
  await b.session.stop();
});

/**
 * RELIABILITY D3: the session ended (grace passed) while a client was offline with unsynced edits. Its old Yjs
 * history must not be merged (duplicated text); its own edits are re-applied on top of the new session.
 */
test('[P8][D3] session reset: unsynced edits re-applied once on the new session, session_reset reported', async () => {
  await boot();
  const port = await freePort();
  let srv = await ServerProcess.start({ sessionGrace: 1, extraArgs: ['--port', String(port)] });
  const key = await srv.createKey({ name: 'reset' });
  try {
    const a = connect('reset-core', 'shared base\n', 'a', srv.url, key.apiKey);
    await a.started;
    a.editor.edit(0, 0, 'acked ');
    await until('a saved', () => a.session.getStatus().saved);

    await srv.kill('SIGKILL');
    await until('a offline', () => a.session.getStatus().state === 'offline');
    a.editor.edit(a.editor.value.length - 1, 0, ' offline-edit');
    assert.equal(a.editor.value, 'acked shared base offline-edit\n');
    // Longer than the 1 s grace: the next join starts a new session (epoch + 1).
    await new Promise((r) => setTimeout(r, 1_500));
    srv = await srv.restart();
    // The host's copy (saved by the host while a was online) seeds the new session through another user.
    const b = connect('reset-core', 'acked shared base\nfrom b\n', 'b', srv.url, key.apiKey);
    await b.started;
    assert.equal(b.editor.value, 'acked shared base\nfrom b\n', 'b seeded the new session');

    await until('a back online and saved', () => a.session.getStatus().state === 'online' && a.session.getStatus().saved, 20_000);
    await until('a and b converged', () => a.editor.value === b.editor.value);
    assert.equal(a.editor.value, 'acked shared base offline-edit\nfrom b\n', 'offline edit once, nothing duplicated');
    const resets = a.events.filter((e) => e.name === 'error' && (e.payload as { code: string }).code === 'session_reset');
    assert.equal(resets.length, 1, 'one session_reset event');
    await Promise.all([a.session.stop(), b.session.stop()]);
  } finally {
    await srv.kill('SIGTERM');
    await srv.cleanup();
  }
});

test('[P8][D3] session reset as the seeder: the host copy (fetchDocOnNetworkReconnect) plus unsynced edits seed', async () => {
  await boot();
  const port = await freePort();
  let srv = await ServerProcess.start({ sessionGrace: 1, extraArgs: ['--port', String(port)] });
  const key = await srv.createKey({ name: 'reset-seed' });
  let asked = 0;
  const hostCopy = async () => {
    asked++;
    return 'title\nhost saved this line\n';
  };
  try {
    const a = connect('reset-seed-core', 'title\n', 'a', srv.url, key.apiKey, hostCopy);
    await a.started;
    await srv.kill('SIGKILL');
    await until('a offline', () => a.session.getStatus().state === 'offline');
    a.editor.edit(0, 0, 'draft: ');
    await new Promise((r) => setTimeout(r, 1_500));
    srv = await srv.restart();
    await until('a back online and saved', () => a.session.getStatus().state === 'online' && a.session.getStatus().saved, 20_000);
    assert.equal(asked, 1, 'the host copy was asked for once');
    assert.equal(a.editor.value, 'draft: title\nhost saved this line\n');
    const c = connect('reset-seed-core', 'ignored\n', 'c', srv.url, key.apiKey);
    await c.started;
    assert.equal(c.editor.value, a.editor.value, 'the server holds the merged seed');
    await Promise.all([a.session.stop(), c.session.stop()]);
  } finally {
    await srv.kill('SIGTERM');
    await srv.cleanup();
  }
});

test('[D4] SIGTERM during edits: edits stored, sockets closed 1012/1001 within 5 s, clients reconnect, nothing lost', async () => {
  await boot();
  const port = await freePort();
  let srv = await ServerProcess.start({ extraArgs: ['--port', String(port)] });
  const key = await srv.createKey({ name: 'sigterm' });
  const closeCodes: number[] = [];
  const factory = (url: string) => {
    const ws = new WebSocket(url);
    ws.on('close', (code) => closeCodes.push(code));
    return ws as unknown as SocketLike;
  };
  try {
    // Sessions built here rather than with connect(): they use the socket factory that records close codes.
    const editors = ['a', 'b', 'c'].map(() => new StringEditor(''));
    const sessions = editors.map((editor, i) => new Session({
      wsUrl: `${srv.url.replace(/^http/, 'ws')}/v2/ws`, apiKey: key.apiKey, docId: 'sigterm-core', user: { name: `s${i}` },
      binding: editor, socketFactory: factory, emit: () => {},
    }));
    await Promise.all(sessions.map((s) => s.start()));
    let n = 0;
    const tokens: string[] = [];
    const typeOne = () => {
      const i = n % 3;
      const token = `t${n++}`;
      tokens.push(token);
      editors[i]!.edit(editors[i]!.value.length, 0, `${token} `);
    };
    for (let k = 0; k < 60; k++) typeOne();
    const termAt = Date.now();
    const exit = srv.kill('SIGTERM');
    for (let k = 0; k < 30; k++) typeOne(); // edits racing the shutdown
    await exit;
    const shutdownMs = Date.now() - termAt;
    assert.ok(shutdownMs < 5_000, `graceful shutdown took ${shutdownMs} ms`);
    await until('every socket closed', () => closeCodes.length >= 3);
    // The three open sockets close gracefully; a reconnect attempt racing the exit may fail with 1006 (refused).
    const graceful = closeCodes.filter((code) => code === 1012 || code === 1001);
    assert.ok(graceful.length >= 3 && closeCodes.every((code) => code === 1012 || code === 1001 || code === 1006), `close codes ${closeCodes.join(', ')}`);
    for (let k = 0; k < 30; k++) typeOne(); // offline edits
    srv = await srv.restart();
    await until('all sessions online and saved', () => sessions.every((s) => s.getStatus().state === 'online' && s.getStatus().saved), 20_000);
    await until('converged', () => new Set(editors.map((e) => e.value)).size === 1);
    const words = editors[0]!.value.trim().split(' ');
    assert.deepEqual([...words].sort(), [...tokens].sort(), 'every edit exactly once');
    await Promise.all(sessions.map((s) => s.stop()));
  } finally {
    await srv.kill('SIGTERM');
    await srv.cleanup();
  }
});

test('a persistent document is never re-seeded, even after the grace period', async () => {
  await boot();
  const srv = await ServerProcess.start({ sessionGrace: 1 });
  const key = await srv.createKey({ name: 'persistent', persistent: true });
  try {
    const a = connect('persistent-core', 'the stored copy\n', 'a', srv.url, key.apiKey);
    await a.started;
    a.editor.edit(0, 0, 'edited ');
    await until('a saved', () => a.session.getStatus().saved);
    await a.session.stop();
    await new Promise((r) => setTimeout(r, 1_500)); // longer than the grace: a normal session would end
    const b = connect('persistent-core', 'stale host content\n', 'b', srv.url, key.apiKey);
    await b.started;
    assert.equal(b.editor.value, 'edited the stored copy\n');
    await b.session.stop();
  } finally {
    await srv.kill('SIGTERM');
    await srv.cleanup();
  }
});
