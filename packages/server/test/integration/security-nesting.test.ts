/**
 * RELIABILITY.md D7 and S19 against the real server process: an update whose JSON-like value
 * or element tree is nested past the limits (rooms/depth-check.ts), or that has bytes after its end, is refused
 * (4400) before it touches the document: not relayed, not acked, not stored, and the document keeps saving,
 * relaying and acking honest edits, across a restart too.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as Y from 'yjs';
import { MessageType, SyncStep } from 'wave-protocol';
import { ServerProcess } from '../helpers/server-process.js';
import { TestClient } from '../helpers/test-client.js';
import { nestedElementsUpdate, nestedValueUpdate, withTrailingBytes } from '../helpers/hostile-updates.js';
import type { NestedValueKind } from '../helpers/hostile-updates.js';

/** Client id of the hostile items: one nobody else uses, so clock 0 follows no gap. */
const HOSTILE_CLIENT = 0x7fff0001;

/** Sends `update` from `attacker` and checks the refusal: 4400, no ack, nothing relayed to `watcher`. */
async function refused(attacker: TestClient, watcher: TestClient, update: Uint8Array, what: string): Promise<void> {
  const sentBefore = attacker.sent;
  const watcherFrames = watcher.frames.length;
  attacker.send({ type: MessageType.Sync, step: SyncStep.Update, update });
  const closed = await attacker.waitClosed();
  assert.equal(closed.code, 4400, `${what}: closed 4400 (${closed.reason})`);
  assert.equal(attacker.errors.at(-1)?.code, 'validation_error', what);
  assert.ok(attacker.lastAck <= sentBefore, `${what}: not acked`);
  // A ping round trip after the refusal: anything relayed would have reached the watcher before its pong.
  const pongs = watcher.pongs;
  watcher.send({ type: MessageType.Ping });
  await watcher.waitFor(() => watcher.pongs > pongs, 'pong');
  assert.equal(watcher.frames.slice(watcherFrames).filter((f) => f.message?.type === MessageType.Sync).length, 0, `${what}: not relayed`);
}

test('[D7] values nested 5,000 deep (embed, format value, JSON and Any content) are refused before they touch the document; honest edits keep being stored, relayed and acked', async (t) => {
  let server = await ServerProcess.start();
  t.after(() => server.cleanup());
  const { apiKey } = await server.createKey({ name: 'nesting' });
  const kinds: NestedValueKind[] = ['embed', 'format', 'json', 'any'];
  for (const kind of kinds) {
    const docId = `nested-${kind}`;
    const owner = new TestClient({ url: server.url, apiKey, docId, seedText: 'base' });
    await owner.waitSynced();
    await owner.waitAllAcked();
    const watcher = new TestClient({ url: server.url, apiKey, docId });
    await watcher.waitSynced();
    const attacker = new TestClient({ url: server.url, apiKey, docId });
    await attacker.waitSynced();
    await refused(attacker, watcher, nestedValueUpdate(kind, 5000, HOSTILE_CLIENT), `${kind} nested 5,000 deep`);

    owner.insert(0, 'after ');
    await owner.waitAllAcked();
    await watcher.waitFor(() => watcher.text.toString() === 'after base', `${kind}: the honest edit is relayed`);
    const fresh = new TestClient({ url: server.url, apiKey, docId });
    await fresh.waitSynced();
    assert.equal(fresh.text.toString(), 'after base', `${kind}: a new join gets the document`);
    await Promise.all([owner.close(), watcher.close(), fresh.close()]);
  }
  // Acked means stored: a new process on the same store has every acked edit.
  server = await server.restart();
  for (const kind of kinds) {
    const reader = new TestClient({ url: server.url, apiKey, docId: `nested-${kind}` });
    await reader.waitSynced();
    assert.equal(reader.text.toString(), 'after base', `${kind}: stored`);
    await reader.close();
  }
});

test('[D7] an element tree nested 3,000 deep is refused (4400); one at an editor-like depth is stored and relayed', async (t) => {
  const server = await ServerProcess.start();
  t.after(() => server.cleanup());
  const { apiKey } = await server.createKey({ name: 'tree' });
  const docId = 'tree';
  const owner = new TestClient({ url: server.url, apiKey, docId, seedText: '' });
  await owner.waitSynced();
  await owner.waitAllAcked();
  const watcher = new TestClient({ url: server.url, apiKey, docId });
  await watcher.waitSynced();
  const attacker = new TestClient({ url: server.url, apiKey, docId });
  await attacker.waitSynced();
  await refused(attacker, watcher, nestedElementsUpdate(attacker.doc, 3000), 'elements nested 3,000 deep');

  // 40 levels: deeper than any editor writes (nested lists add two per level), well inside the limit.
  Y.applyUpdate(owner.doc, nestedElementsUpdate(owner.doc, 40, 'inside'));
  await owner.waitAllAcked();
  await watcher.waitFor(() => watcher.doc.getXmlFragment('html').toString().includes('inside'), 'the tree is relayed');
  // Stored: a client that joins later receives it from the server.
  const late = new TestClient({ url: server.url, apiKey, docId });
  await late.waitSynced();
  assert.match(late.doc.getXmlFragment('html').toString(), /inside/, 'the tree is stored');
  await Promise.all([owner.close(), watcher.close(), late.close()]);
});

test('[S19] an update followed by trailing bytes is refused (4400), not relayed, acked or stored', async (t) => {
  const server = await ServerProcess.start();
  t.after(() => server.cleanup());
  const { apiKey } = await server.createKey({ name: 'trailing' });
  const docId = 'trailing';
  const owner = new TestClient({ url: server.url, apiKey, docId, seedText: 'base' });
  await owner.waitSynced();
  await owner.waitAllAcked();
  const attacker = new TestClient({ url: server.url, apiKey, docId });
  await attacker.waitSynced();
  const copy = new Y.Doc();
  Y.applyUpdate(copy, Y.encodeStateAsUpdate(attacker.doc));
  const before = Y.encodeStateVector(copy);
  copy.getText('text').insert(0, 'smuggled ');
  const update = Y.encodeStateAsUpdate(copy, before);
  await refused(attacker, owner, withTrailingBytes(update, [0x00, 0x07, 0x41, 0x41]), 'trailing bytes');
  const fresh = new TestClient({ url: server.url, apiKey, docId });
  await fresh.waitSynced();
  assert.equal(fresh.text.toString(), 'base', 'not stored');
  // The same update without the trailing bytes is taken.
  const honest = new TestClient({ url: server.url, apiKey, docId });
  await honest.waitSynced();
  Y.applyUpdate(honest.doc, update);
  await honest.waitAllAcked();
  await fresh.waitFor(() => fresh.text.toString() === 'smuggled base', 'the update alone is relayed');
  await Promise.all([owner.close(), fresh.close(), honest.close()]);
});

test('[D7] a REST PUT whose delta nests a value past the limit (100 deep) is refused (400), as the same value from a client would be; the document keeps saving', async (t) => {
  const server = await ServerProcess.start();
  t.after(() => server.cleanup());
  const { apiKey, secret } = await server.createKey({ name: 'rest-nesting' });
  const docId = 'rest-nested';
  const owner = new TestClient({ url: server.url, apiKey, docId, seedText: 'base' });
  t.after(() => owner.close());
  await owner.waitSynced();
  await owner.waitAllAcked();
  const body = `{"delta":[{"insert":"x","attributes":{"bold":${'['.repeat(100)}${']'.repeat(100)}}}]}`;
  const put = await fetch(`${server.url}/api/v2/docs/${docId}?apiKey=${apiKey}`, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${secret}`, 'Content-Type': 'application/json' },
    body,
  });
  assert.equal(put.status, 400, await put.text());
  owner.insert(0, 'after ');
  await owner.waitAllAcked();
  const fresh = new TestClient({ url: server.url, apiKey, docId });
  await fresh.waitSynced();
  assert.equal(fresh.text.toString(), 'after base');
  await fresh.close();
});
