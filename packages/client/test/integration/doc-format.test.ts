/**
 * PROTOCOL.md [P2d] from the client's side: the real client core (`Session`) over real WebSockets against the real
 * server process. The session's own Hello carries `DOC_FORMAT` and joins; a client of another document format (its
 * Hello rewritten on the way out, as an older or newer build would send it) gets one fatal `protocol_mismatch` that
 * names both formats: `start()` rejects with it, the `error` event fires once with `fatal: true`, no retry, and the
 * shared document never reaches the editor.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { DOC_FORMAT, MessageType, decodeMessage, encodeMessage } from 'wave-protocol';
import { Session, type SessionEvents } from '../../src/core/session.js';
import type { CoeditError } from '../../src/core/errors.js';
import type { SocketLike } from '../../src/core/socket.js';
import { ServerProcess } from '../../../server/test/helpers/server-process.js';
import { StringEditor } from '../helpers/string-editor.js';

let server: ServerProcess | undefined;
after(() => server?.cleanup());

interface Peer {
  editor: StringEditor;
  session: Session;
  errors: CoeditError[];
  started: Promise<void>;
  sockets: number;
  /** `Hello.format` of every Hello that left the session, after any rewrite. */
  sentFormats: Array<string | undefined>;
}

/** `format`: what the Hello carries on the wire (`'own'`: untouched; `null`: no field at all). */
function peer(url: string, apiKey: string, docId: string, initial: string, format: 'own' | string | null): Peer {
  const editor = new StringEditor(initial);
  const p: Peer = { editor, session: undefined as unknown as Session, errors: [], started: Promise.resolve(), sockets: 0, sentFormats: [] };
  p.session = new Session({
    wsUrl: `${url.replace(/^http/, 'ws')}/v2/ws`,
    apiKey,
    docId,
    user: { name: 'tester' },
    binding: editor,
    socketFactory: (wsUrl) => {
      p.sockets++;
      const socket = new WebSocket(wsUrl);
      const send = socket.send.bind(socket);
      socket.send = ((data: Uint8Array) => {
        const message = decodeMessage(data);
        if (message.type === MessageType.Hello) {
          const hello = { ...message.hello };
          if (format === null) delete hello.format;
          else if (format !== 'own') hello.format = format;
          p.sentFormats.push(hello.format);
          send(encodeMessage({ type: MessageType.Hello, hello }));
          return;
        }
        send(data);
      }) as typeof socket.send;
      return socket as unknown as SocketLike;
    },
    emit: <K extends keyof SessionEvents>(name: K, payload: SessionEvents[K]) => {
      if (name === 'error') p.errors.push(payload as CoeditError);
    },
  });
  p.started = p.session.start();
  return p;
}

test('[P2d] the session sends DOC_FORMAT and joins; a client of another format, or of none, stops with one fatal protocol_mismatch', async (t) => {
  server ??= await ServerProcess.start();
  const { apiKey } = await server.createKey({ name: 'doc-format' });
  const docId = 'doc-format';
  const current = peer(server.url, apiKey, docId, 'shared words', 'own');
  t.after(() => current.session.stop());
  await current.started;
  assert.deepEqual(current.sentFormats, [DOC_FORMAT]);
  assert.equal(current.session.getStatus().state, 'online');

  for (const [format, named] of [
    [null, /no document format/],
    ['tree/0', /document format "tree\/0"/],
  ] as const) {
    const other = peer(server.url, apiKey, docId, 'local text', format);
    t.after(() => other.session.stop());
    const error = await other.started.then(
      () => assert.fail('start() resolved for a client of another format'),
      (e: CoeditError) => e,
    );
    assert.equal(error.code, 'protocol_mismatch');
    assert.equal(error.fatal, true);
    assert.match(error.detail, named);
    assert.ok(error.detail.includes(`"${DOC_FORMAT}"`), error.detail);
    assert.match(error.detail, /update the client/);
    assert.deepEqual(other.errors.map((e) => [e.code, e.fatal]), [['protocol_mismatch', true]], 'one error event, no connection_lost');
    assert.equal(other.session.getStatus().state, 'stopped');
    assert.equal(other.sockets, 1, 'no retry');
    assert.equal(other.editor.value, 'local text', 'no document byte reached the editor');
  }
  assert.equal(current.editor.value, 'shared words', 'the refused clients wrote nothing');
});
