/**
 * RELIABILITY.md S17 against the real server process: a read-only connection that sends 100 updates and a Seed
 * gets exactly one `access_denied` and no ack that covers any of them (acks are cumulative, P9: an Ack{n} with n
 * past the first refused message would claim it stored).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as Y from 'yjs';
import { MessageType, SyncStep } from 'wave-protocol';
import { ServerProcess } from '../helpers/server-process.js';
import { TestClient, messagesOfType } from '../helpers/test-client.js';
import { mintToken } from '../helpers/tokens.js';

test('[S17] a read-only connection: 100 refused updates and a Seed get one access_denied and no ack', async (t) => {
  const server = await ServerProcess.start();
  t.after(() => server.cleanup());
  const key = await server.createKey({ name: 'locked', requireToken: true });
  const docId = 'readonly-acks';
  const writer = new TestClient({
    url: server.url,
    apiKey: key.apiKey,
    docId,
    seedText: 'shared',
    helloOverride: { token: await mintToken(key.secret, { docId, permission: 'edit', user: 'Writer' }) },
  });
  const reader = new TestClient({
    url: server.url,
    apiKey: key.apiKey,
    docId,
    helloOverride: { token: await mintToken(key.secret, { docId, permission: 'read', user: 'Reader' }) },
  });
  t.after(() => Promise.all([writer.close(), reader.close()]));
  await writer.waitSynced();
  await writer.waitAllAcked();
  await reader.waitSynced();
  assert.equal(reader.welcome?.permission, 'read');
  // Its step2 reply carries nothing new and nothing was refused yet: that one is acked.
  await reader.waitAllAcked();
  const acksBefore = reader.acks.length;
  const acked = reader.lastAck;

  for (let i = 0; i < 100; i++) reader.insert(0, `evil${i} `);
  reader.send({ type: MessageType.Seed, epoch: reader.welcome!.epoch, update: Y.encodeStateAsUpdate(reader.doc) });
  reader.sent++;
  assert.equal(reader.sent - acked, 101);

  // Fences: a step1 is answered after every earlier message of the connection was handled (in order); the writer's
  // next edit is committed after anything those messages could have queued, and relayed to the reader.
  reader.send({ type: MessageType.Sync, step: SyncStep.Step1, stateVector: Y.encodeStateVector(new Y.Doc()) });
  await reader.waitFor(() => messagesOfType(reader, MessageType.Sync).filter((m) => m.step === SyncStep.Step2).length >= 2, 'step2 reply');
  writer.insert(writer.text.length, ' more');
  await writer.waitAllAcked();
  await reader.waitFor(() => reader.text.toString().includes(' more'), "the writer's edit relayed to the reader");

  assert.deepEqual(reader.acks.slice(acksBefore), [], 'no ack after a refused message');
  assert.deepEqual(reader.errors.map((e) => [e.code, e.fatal]), [['access_denied', false]], 'exactly one access_denied');
  assert.equal(reader.closeEvent, undefined, 'the reader keeps watching');
  assert.equal(writer.text.toString(), 'shared more', 'nothing of the reader reached the writer');
});
