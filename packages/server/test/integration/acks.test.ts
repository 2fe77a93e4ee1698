import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import * as Y from 'yjs';
import { MessageType, decodeMessage } from 'wave-protocol';
import { ServerProcess } from '../helpers/server-process.js';
import { TestClient } from '../helpers/test-client.js';

test('[P7][P9] acks: monotone, after commit, one count per update-bearing message', async (t) => {
  const server = await ServerProcess.start();
  t.after(() => server.cleanup());
  const { apiKey } = await server.createKey({ name: 'acks', account: 'acks-account' });
  const writer = await TestClient.connect({ url: server.url, apiKey, docId: 'a', seedText: '#' });
  t.after(() => writer.close());
  await writer.waitSynced();
  const peer = await TestClient.connect({ url: server.url, apiKey, docId: 'a' });
  t.after(() => peer.close());
  await peer.waitSynced();

  // On every ack, read the store from this process: everything acked must already be committed.
  const db = new Database(server.dbPath, { readonly: true });
  t.after(() => db.close());
  const tokenOf = new Map<number, string>();
  const violations: string[] = [];
  const readStored = (): string => {
    const doc = new Y.Doc();
    const rows = db
      .prepare('SELECT data FROM updates WHERE account = ? AND doc_id = ? ORDER BY seq')
      .all('acks-account', 'a') as Array<{ data: Buffer }>;
    for (const row of rows) Y.applyUpdate(doc, row.data);
    return doc.getText('text').toString();
  };
  writer.ws.prependListener('message', (data: Buffer) => {
    let message;
    try {
      message = decodeMessage(new Uint8Array(data));
    } catch {
      return;
    }
    if (message.type !== MessageType.Ack) return;
    const stored = readStored();
    for (const [n, token] of tokenOf) {
      if (n <= message.count && !stored.includes(token)) violations.push(`Ack{${message.count}} arrived before edit #${n} ${token} was stored`);
    }
  });

  const edit = (i: number): void => {
    const token = `<${i}>`;
    const n = writer.insert(writer.text.length, token);
    tokenOf.set(n, token);
  };
  // 40 edits sent in one tick (one batch), 40 spread over event-loop turns.
  for (let i = 0; i < 40; i++) edit(i);
  for (let i = 40; i < 80; i++) {
    edit(i);
    await new Promise((r) => setImmediate(r));
  }
  // P7: a Seed from a connection that does not hold the lease is ignored but still counted.
  writer.send({ type: MessageType.Seed, epoch: writer.welcome!.epoch, update: Y.encodeStateAsUpdate(new Y.Doc()) });
  writer.sent++;
  for (let i = 80; i < 100; i++) edit(i);
  // A step1 is not update-bearing: answered, not counted.
  writer.send({ type: MessageType.Sync, step: 0, stateVector: Y.encodeStateVector(writer.doc) });

  await writer.waitAllAcked();
  assert.equal(writer.lastAck, writer.sent, 'the last ack covers every update-bearing message');
  for (let i = 1; i < writer.acks.length; i++) {
    assert.ok(writer.acks[i]! > writer.acks[i - 1]!, `strictly increasing: ${writer.acks.join(',')}`);
  }
  assert.deepEqual(violations, []);
  assert.equal(readStored(), writer.text.toString(), 'the store holds exactly the writer\'s text');
  await peer.waitFor(() => peer.text.toString() === writer.text.toString(), 'peer converged');
  await peer.waitAllAcked();
  assert.equal(peer.lastAck, peer.sent, 'the peer\'s step2 reply is acked too');
  const ignoredSeedStored = readStored().split('#').length - 1;
  assert.equal(ignoredSeedStored, 1, 'the ignored Seed stored nothing');
});
