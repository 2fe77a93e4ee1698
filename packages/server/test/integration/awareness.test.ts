import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as encoding from 'lib0/encoding';
import * as decoding from 'lib0/decoding';
import { MessageType, PALETTE } from 'wave-protocol';
import { ServerProcess } from '../helpers/server-process.js';
import { TestClient, messagesOfType } from '../helpers/test-client.js';

function awarenessUpdate(entries: Array<{ clientId: number; clock: number; state: unknown }>): Uint8Array {
  const enc = encoding.createEncoder();
  encoding.writeVarUint(enc, entries.length);
  for (const e of entries) {
    encoding.writeVarUint(enc, e.clientId);
    encoding.writeVarUint(enc, e.clock);
    encoding.writeVarString(enc, JSON.stringify(e.state));
  }
  return encoding.toUint8Array(enc);
}

function clientIdsIn(update: Uint8Array): number[] {
  const dec = decoding.createDecoder(update);
  const ids: number[] = [];
  const n = decoding.readVarUint(dec);
  for (let i = 0; i < n; i++) {
    ids.push(decoding.readVarUint(dec));
    decoding.readVarUint(dec);
    decoding.readVarString(dec);
  }
  return ids;
}

test('[P11][S4] presence: foreign client ids dropped, identity stamped by the server, removed on close', async (t) => {
  const server = await ServerProcess.start();
  t.after(() => server.cleanup());
  const { apiKey } = await server.createKey({ name: 'presence' });

  const alice = await TestClient.connect({ url: server.url, apiKey, docId: 'p', seedText: 'text', user: { name: 'Alice' } });
  t.after(() => alice.close());
  await alice.waitSynced();
  const bob = await TestClient.connect({
    url: server.url,
    apiKey,
    docId: 'p',
    user: { name: 'Bob', color: 'url(javascript:alert(1))', avatar: 'javascript:alert(1)' },
  });
  await bob.waitSynced();
  assert.equal(bob.welcome?.user.name, 'Bob');
  assert.equal(bob.welcome?.user.avatar, undefined, 'unsafe avatar dropped');
  assert.ok((PALETTE as readonly string[]).includes(bob.welcome!.color), 'invalid colour replaced by a palette colour');

  const forgedId = 424242;
  assert.notEqual(forgedId, bob.clientId);
  // Presence for another client id, alone and mixed with Bob's own entry.
  bob.send({ type: MessageType.Awareness, update: awarenessUpdate([{ clientId: forgedId, clock: 1, state: { user: { name: 'Mallory' } } }]) });
  bob.send({
    type: MessageType.Awareness,
    update: awarenessUpdate([
      { clientId: forgedId, clock: 2, state: { user: { name: 'Mallory' } } },
      { clientId: alice.clientId, clock: 99, state: { user: { name: 'Not Alice' } } },
    ]),
  });
  // Then Bob's own presence, claiming another name.
  bob.setPresence({ cursor: { anchor: 1, head: 2 }, user: { name: 'Claimed Name' }, color: 'red', joinTime: 1 });

  const state = await alice.waitFor(() => alice.awareness.getStates().get(bob.clientId), "Bob's presence");
  assert.deepEqual(state['cursor'], { anchor: 1, head: 2 }, 'presence fields pass through');
  assert.equal(state['user'].name, 'Bob', 'user stamped from the join, not the claim');
  assert.equal(state['color'], bob.welcome!.color);
  assert.equal(state['joinTime'], bob.welcome!.joinTime);

  // Messages on one socket are handled in order: the forged entries came before Bob's own and must be gone.
  const seen = messagesOfType(alice, MessageType.Awareness).flatMap((m) => clientIdsIn(m.update));
  assert.ok(!seen.includes(forgedId), 'no entry for the forged client id was relayed');
  assert.ok(!alice.awareness.getStates().has(forgedId));
  assert.ok(seen.every((id) => id === bob.clientId), `only Bob's entries reached Alice: ${seen.join(',')}`);

  // A client joining now receives the current presence after its step2.
  const carol = await TestClient.connect({ url: server.url, apiKey, docId: 'p', user: { name: 'Carol' } });
  t.after(() => carol.close());
  await carol.waitSynced();
  const seenByCarol = await carol.waitFor(() => carol.awareness.getStates().get(bob.clientId), "Bob's presence for Carol");
  assert.equal(seenByCarol['user'].name, 'Bob');

  // When Bob leaves, his presence vanishes for the others.
  await bob.close();
  await alice.waitFor(() => !alice.awareness.getStates().has(bob.clientId), "Bob's presence removed");
  await carol.waitFor(() => !carol.awareness.getStates().has(bob.clientId), "Bob's presence removed for Carol");
});
