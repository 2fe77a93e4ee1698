/**
 * `content_changed` tells an integrator when to save (`source === 'local'`, API.md). Yjs itself makes local
 * transactions (origin null) when a remote update leaves redundant formatting marks (`Y.Text` formatting cleanup):
 * they must be sent like edits — the server's copy needs them — but reported as 'remote': nobody here typed anything.
 * Real server process, real sockets; the editor is the string-backed contract editor (STYLE.md §4).
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import WebSocket from 'ws';
import { Session, type SessionEvents } from '../../src/core/session.js';
import type { SocketLike } from '../../src/core/socket.js';
import { ServerProcess } from '../../../server/test/helpers/server-process.js';
import { StringEditor } from '../helpers/string-editor.js';
import { until } from '../helpers/util.js';

let server: ServerProcess | undefined;
after(async () => {
  await server?.kill('SIGTERM');
  await server?.cleanup();
});

interface Peer {
  editor: StringEditor;
  session: Session;
  sources: string[];
}

function connect(url: string, apiKey: string, docId: string, name: string): Peer {
  const editor = new StringEditor('abcdefghijklmnopqrstuvwxyz\n');
  const sources: string[] = [];
  const session = new Session({
    wsUrl: `${url.replace(/^http/, 'ws')}/v2/ws`,
    apiKey,
    docId,
    user: { name },
    binding: editor,
    socketFactory: (wsUrl) => new WebSocket(wsUrl) as unknown as SocketLike,
    emit: <K extends keyof SessionEvents>(event: K, payload: SessionEvents[K]) => {
      if (event === 'content_changed') sources.push((payload as SessionEvents['content_changed']).source);
    },
  });
  return { editor, session, sources };
}

test("Yjs' formatting cleanup after concurrent formatting is sent, and reported as remote, not local", async () => {
  server = await ServerProcess.start();
  const { apiKey } = await server.createKey({ name: 'content-changed' });
  const [a, b] = ['a', 'b'].map((n) => connect(server!.url, apiKey, 'cleanup-doc', n)) as [Peer, Peer];
  await Promise.all([a.session.start(), b.session.start()]);
  await until('both show the seed', () => a.editor.value === b.editor.value && b.editor.value.length > 0);
  const start = [a, b].map((p) => ({ local: p.sources.filter((s) => s === 'local').length, updates: p.editor.localUpdates.length }));
  // In one tick (neither has seen the other's edit), Ann makes a letter bold while Bob deletes the word around it:
  // each side's merge leaves format marks around deleted text, which Yjs removes in a transaction of its own.
  const ROUNDS = 4;
  for (let round = 0; round < ROUNDS; round++) {
    a.editor.format(1, 1, true);
    b.editor.edit(0, 3, '');
    await until(`round ${round} converged`, () => a.editor.delta() === b.editor.delta());
  }
  await until('both saved', () => a.session.getStatus().saved && b.session.getStatus().saved);
  const byYjs = [a, b].map((p, i) => p.editor.localUpdates.length - start[i]!.updates - ROUNDS);
  assert.ok(byYjs.some((n) => n > 0), `Yjs made cleanup transactions (${byYjs.join(', ')}), so the test exercises them`);
  const local = [a, b].map((p, i) => p.sources.filter((s) => s === 'local').length - start[i]!.local);
  assert.deepEqual(local, [ROUNDS, ROUNDS], 'exactly one local content_changed per own edit');

  // The cleanups were sent and stored: a third client reads the same formatted document.
  const c = connect(server.url, apiKey, 'cleanup-doc', 'c');
  await c.session.start();
  await until('the stored copy equals the editors', () => c.editor.delta() === a.editor.delta());
  await Promise.all([a, b, c].map((p) => p.session.stop()));
});
