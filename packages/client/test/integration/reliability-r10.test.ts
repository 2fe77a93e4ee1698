/**
 * RELIABILITY.md R10: frames a hostile server (or a broken proxy) could send — cut short, of an unknown type, with a
 * length past their bytes, a state vector or an update that does not decode whole, presence that does not decode.
 * Real `Session` cores over real WebSockets against the real server process; the hostile frames are handed to the
 * session at its socket (`ClientLink.deliver`), because the real server never sends them. Each must give one
 * non-fatal `error` event, leave the local document as it was, and end in a reconnect that syncs again; editing goes
 * on afterwards. The long-task bar of R10 is a timing and is not asserted here (STYLE: numbers live in the bench).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as Y from 'yjs';
import * as encoding from 'lib0/encoding';
import { MessageType, SyncStep, encodeMessage } from 'wave-protocol';
import { ServerProcess } from '../../../server/test/helpers/server-process.js';
import { labClient } from '../helpers/clients.js';
import { until } from '../helpers/util.js';
import { WsLab } from '../helpers/ws-lab.js';

let srv: ServerProcess | undefined;

after(async () => {
  await srv?.kill('SIGKILL');
  await srv?.cleanup();
});

/** A whole update from a client the session has never seen: "hello" inserted into the shared text. */
function foreignUpdate(): Uint8Array {
  const doc = new Y.Doc();
  doc.getText('text').insert(0, 'hello');
  return Y.encodeStateAsUpdate(doc);
}

function syncUpdate(update: Uint8Array): Uint8Array {
  return encodeMessage({ type: MessageType.Sync, step: SyncStep.Update, update });
}

/** Each hostile frame, named. */
function hostileFrames(): Array<{ name: string; frame: Uint8Array }> {
  const update = foreignUpdate();
  const whole = syncUpdate(update);
  const hugeLength = encoding.createEncoder();
  encoding.writeVarUint(hugeLength, MessageType.Sync);
  encoding.writeVarUint(hugeLength, SyncStep.Update);
  encoding.writeVarUint(hugeLength, 2 ** 40);
  encoding.writeUint8Array(hugeLength, new Uint8Array([1, 2, 3]));
  return [
    { name: 'a frame cut short', frame: whole.subarray(0, whole.length - 4) },
    { name: 'a frame of an unknown type', frame: new Uint8Array([0x7f, 1, 2, 3]) },
    { name: 'a frame whose length is past its bytes', frame: encoding.toUint8Array(hugeLength) },
    // Yjs would integrate the structs ("hello") of an update cut short in its delete set, then throw.
    { name: 'an update cut short in its delete set', frame: syncUpdate(update.subarray(0, update.length - 1)) },
    { name: 'an update with bytes after its end', frame: syncUpdate(new Uint8Array([...update, 0, 0])) },
    { name: 'a state vector cut short', frame: encodeMessage({ type: MessageType.Sync, step: SyncStep.Step1, stateVector: new Uint8Array([1, 0x80]) }) },
    { name: 'presence that does not decode', frame: encodeMessage({ type: MessageType.Awareness, update: new Uint8Array([5, 1]) }) },
  ];
}

test('[R10] hostile server frames: one non-fatal error each, the local document unchanged, a reconnect that syncs again', { timeout: 120_000 }, async () => {
  srv = await ServerProcess.start();
  const { apiKey } = await srv.createKey({ name: 'reliability-r10' });
  const lab = new WsLab();
  const docId = 'r10-hostile-frames';
  const a = labClient({ lab, name: 'r10a', url: srv.url, apiKey, docId, initial: 'R10 base\n' });
  const b = labClient({ lab, name: 'r10b', url: srv.url, apiKey, docId, initial: 'R10 base\n' });
  try {
    await Promise.all([a.started, b.started]);
    await until('both saved', () => a.session.getStatus().saved && b.session.getStatus().saved);
    const link = lab.link(a.name);

    for (const { name, frame } of hostileFrames()) {
      const value = a.editor.value;
      const stateVector = a.editor.stateVector();
      const errors = a.errors.length;
      const connections = link.connections;
      link.deliver(frame);
      assert.deepEqual(a.errors.slice(errors).map((e) => e.code), ['server_error'], `${name}: one server_error`);
      assert.equal(a.editor.value, value, `${name}: the editor shows what it showed`);
      assert.deepEqual(a.editor.stateVector(), stateVector, `${name}: the document took nothing`);
      await until(`${name}: a reconnect that syncs again`, () => link.connections > connections && link.isOpen && a.session.getStatus().state === 'online');
      assert.equal(a.errors.length, errors + 1, `${name}: no other error while reconnecting (${JSON.stringify(a.errors.slice(errors))})`);
      assert.notEqual(a.session.getStatus().state, 'stopped', `${name}: the session goes on`);
    }

    // Editing goes on both ways, and nothing of the hostile frames reached the peer.
    a.editor.edit(a.editor.value.length, 0, 'from a ');
    b.editor.edit(0, 0, 'from b ');
    await until('both edits on both sides', () => a.editor.value === b.editor.value && a.editor.value.includes('from a') && a.editor.value.startsWith('from b'));
    assert.equal(a.editor.value, 'from b R10 base\nfrom a ');
    await until('both saved after the edits', () => a.session.getStatus().saved && b.session.getStatus().saved);
  } finally {
    a.session.stop();
    b.session.stop();
  }
});
