// Presence through the real server: presence fields reach peers with the identity the server stamped,
// a client cannot change its identity through presence, and stop() removes the user from peers at once.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import WebSocket from 'ws';
import { Session, type PresenceState, type SessionEvents } from '../../src/core/session.js';
import type { SocketLike } from '../../src/core/socket.js';
import { ServerProcess } from '../../../server/test/helpers/server-process.js';
import { StringEditor } from '../helpers/string-editor.js';

let server: ServerProcess | undefined;

after(async () => {
  await server?.kill('SIGTERM');
  await server?.cleanup();
});

interface Peer {
  session: Session;
  presence: PresenceState[][];
  started: Promise<void>;
}

function join(url: string, apiKey: string, docId: string, user: Record<string, unknown>): Peer {
  const presence: PresenceState[][] = [];
  const session = new Session({
    wsUrl: `${url.replace(/^http/, 'ws')}/v2/ws`,
    apiKey,
    docId,
    user,
    binding: new StringEditor('hello'),
    socketFactory: (u) => new WebSocket(u) as unknown as SocketLike,
    emit: <K extends keyof SessionEvents>(name: K, payload: SessionEvents[K]) => {
      if (name === 'presence') presence.push(payload as PresenceState[]);
    },
  });
  return { session, presence, started: session.start() };
}

async function until<T>(what: string, check: () => T | undefined | null | false, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) assert.fail(`timed out after ${ms} ms waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('[S4] presence fields reach peers with the server-stamped identity; identity in presence is ignored; stop() leaves at once', async () => {
  server = await ServerProcess.start();
  const { apiKey } = await server.createKey({ name: 'presence' });
  const ada = join(server.url, apiKey, 'presence-doc', { name: 'Ada', email: 'ada@example.com', color: '#e6550d' });
  await ada.started;
  const bob = join(server.url, apiKey, 'presence-doc', { name: 'Bob', avatar: 'javascript:alert(1)', color: 'url(x)' });
  await bob.started;

  // Bob publishes a caret and a pointer, and tries to claim Ada's name and colour on the way.
  bob.session.setPresence({ cursor: { anchor: { a: 1 }, head: { a: 2 } }, pointer: { x: 10, y: 20, c: 0 }, user: { name: 'Ada' }, color: 'red', joinTime: 1 });
  const seen = await until("Bob's presence for Ada", () =>
    ada.session.getPresence().find((p) => !p.self && (p.state['pointer'] as { x?: number } | undefined)?.x === 10),
  );
  assert.deepEqual(seen.state['cursor'], { anchor: { a: 1 }, head: { a: 2 } });
  assert.deepEqual(seen.state['user'], { name: 'Bob' }, 'name from the join, javascript: avatar dropped');
  assert.notEqual(seen.state['color'], 'red', 'colour from the join (a palette colour for an invalid one)');
  assert.notEqual(seen.state['joinTime'], 1);
  const adaForBob = await until("Ada's identity for Bob", () => bob.session.getPresence().find((p) => !p.self));
  assert.deepEqual(adaForBob.state['user'], { name: 'Ada', email: 'ada@example.com' });
  assert.equal(adaForBob.state['color'], '#e6550d');
  assert.ok(ada.presence.length > 0, 'presence changes are emitted');

  const t0 = Date.now();
  await bob.session.stop();
  await until('Bob gone for Ada', () => ada.session.getPresence().every((p) => p.self) || undefined, 5_000);
  assert.ok(Date.now() - t0 <= 2_000, `stop() left peers in ${Date.now() - t0} ms`);
  await ada.session.stop();
});
