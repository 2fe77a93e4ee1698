// Presence (rooms/presence.ts): a peer's stamped update is relayed as it was stamped, the same bytes the awareness
// would encode for it; anything else (several entries, a departure) is encoded from the awareness.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as awarenessProtocol from 'y-protocols/awareness';
import * as encoding from 'lib0/encoding';
import * as Y from 'yjs';
import { MessageType, decodeMessage, stampAwarenessUpdate, type StampedPresence } from 'wave-protocol';
import { Presence } from '../src/rooms/presence.js';
import type { RoomPeer } from '../src/rooms/peer.js';

const STAMP: StampedPresence = { user: { name: 'Ann' }, color: '#336699', joinTime: 1_700_000_000_000 } as StampedPresence;

function peer(clientId: number): RoomPeer {
  return { id: `p${clientId}`, clientId, open: true, send() {}, sendFrame() {}, fail() {}, close() {} };
}

function awarenessUpdate(entries: Array<[clientId: number, clock: number, json: string]>): Uint8Array {
  const enc = encoding.createEncoder();
  encoding.writeVarUint(enc, entries.length);
  for (const [clientId, clock, json] of entries) {
    encoding.writeVarUint(enc, clientId);
    encoding.writeVarUint(enc, clock);
    encoding.writeVarString(enc, json);
  }
  return encoding.toUint8Array(enc);
}

function relayed(frames: Uint8Array[]): Uint8Array[] {
  return frames.map((frame) => {
    const message = decodeMessage(frame);
    assert.equal(message.type, MessageType.Awareness);
    return (message as { update: Uint8Array }).update;
  });
}

/** What a y-protocols Awareness that applied `updates` encodes for `clientIds`. */
function encodedBy(updates: Uint8Array[], ...clientIds: number[]): Uint8Array {
  const awareness = new awarenessProtocol.Awareness(new Y.Doc());
  awareness.setLocalState(null);
  for (const update of updates) awarenessProtocol.applyAwarenessUpdate(awareness, update, null);
  const encoded = awarenessProtocol.encodeAwarenessUpdate(awareness, clientIds);
  awareness.destroy();
  return encoded;
}

test('a peer\'s stamped update is relayed and published as stamped: the bytes the awareness would encode', () => {
  const frames: Uint8Array[] = [];
  const published: Uint8Array[] = [];
  const presence = new Presence((frame) => frames.push(frame), (update) => published.push(update));
  const sent = awarenessUpdate([[7, 1, JSON.stringify({ cursor: { anchor: 3, head: 5 }, user: { name: 'forged' } })]]);
  presence.apply(peer(7), STAMP, sent);
  const stamped = stampAwarenessUpdate(sent, 7, STAMP)!;
  assert.deepEqual(relayed(frames), [stamped]);
  assert.deepEqual(published, [stamped]);
  assert.deepEqual(stamped, encodedBy([stamped], 7), 'the same bytes the awareness encodes');
  const state = JSON.parse(new TextDecoder().decode(stamped).slice(stamped.indexOf(123))) as { user: { name: string } };
  assert.equal(state.user.name, 'Ann', 'the identity is the server\'s');
  presence.destroy();
});

test('an update the awareness does not take (an older clock) relays nothing', () => {
  const frames: Uint8Array[] = [];
  const presence = new Presence((frame) => frames.push(frame));
  presence.apply(peer(7), STAMP, awarenessUpdate([[7, 3, '{"a":1}']]));
  presence.apply(peer(7), STAMP, awarenessUpdate([[7, 2, '{"a":2}']]));
  assert.equal(frames.length, 1);
  presence.destroy();
});

test('two entries of its own in one update: relayed as the awareness encodes the result (added, then updated)', () => {
  const frames: Uint8Array[] = [];
  const presence = new Presence((frame) => frames.push(frame));
  const sent = awarenessUpdate([
    [7, 1, '{"a":1}'],
    [7, 2, '{"a":2}'],
  ]);
  presence.apply(peer(7), STAMP, sent);
  const stamped = stampAwarenessUpdate(sent, 7, STAMP)!;
  assert.deepEqual(relayed(frames), [encodedBy([stamped], 7, 7)]);
  presence.destroy();
});

test('a departure is encoded from the awareness (a null state at the last clock)', () => {
  const frames: Uint8Array[] = [];
  const presence = new Presence((frame) => frames.push(frame));
  presence.apply(peer(7), STAMP, awarenessUpdate([[7, 4, '{"a":1}']]));
  presence.remove(7);
  const [, departure] = relayed(frames);
  assert.deepEqual(departure, awarenessUpdate([[7, 4, 'null']]));
  presence.destroy();
});
