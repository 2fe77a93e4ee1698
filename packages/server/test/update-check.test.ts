/**
 * `checkUpdate` (rooms/update-check.ts) on what Yjs itself lets through and a reader then breaks on: references to an
 * item's own client (earlier clocks only: Yjs would look later ones up without checking and throw midway through
 * the update), embeds that are not JSON objects, one client in two sections; and on its verdict that an update
 * changes the document, which must agree with what Yjs emits (a room takes a counted change that emits nothing for a
 * broken document).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as Y from 'yjs';
import { UpdateRejected, checkUpdate } from '../src/rooms/update-check.js';
import { deleteRangeUpdate, embedUpdate, ownFutureUpdate } from './helpers/hostile-updates.js';

const MAX_STRUCTS = 20_000;
const CLIENT = 0x7fff0004;

function base(): Y.Doc {
  const doc = new Y.Doc();
  doc.getText('text').insert(0, 'x');
  return doc;
}

describe('checkUpdate: references to the item\u2019s own client', () => {
  for (const reference of ['origin', 'rightOrigin', 'parent'] as const) {
    it(`refuses an item whose ${reference} is a later clock of its own client, before Yjs sees it`, () => {
      const doc = base();
      const update = ownFutureUpdate(doc, CLIENT, reference);
      assert.throws(() => checkUpdate(doc, update, MAX_STRUCTS), UpdateRejected);
      // What the refusal prevents: Yjs throws while integrating it, with the first item already in the document.
      const victim = base();
      Y.applyUpdate(victim, Y.encodeStateAsUpdate(doc));
      assert.throws(() => Y.applyUpdate(victim, update));
    });
  }

  it('accepts typing that goes on after its own client\u2019s last character', () => {
    const doc = base();
    const writer = new Y.Doc();
    writer.clientID = CLIENT;
    Y.applyUpdate(writer, Y.encodeStateAsUpdate(doc));
    const before = Y.encodeStateVector(writer);
    writer.getText('text').insert(1, 'a');
    writer.getText('text').insert(2, 'bc');
    writer.getText('text').insert(1, 'd');
    const update = Y.encodeStateAsUpdate(writer, before);
    assert.equal(checkUpdate(doc, update, MAX_STRUCTS).changes, true);
    Y.applyUpdate(doc, update);
    assert.equal(doc.getText('text').toString(), 'xdabc');
  });
});

describe('checkUpdate: embeds', () => {
  for (const embed of [null, 'abc', 5, true, [1, 2]]) {
    it(`refuses an embed of ${JSON.stringify(embed)}`, () => {
      const doc = base();
      assert.throws(() => checkUpdate(doc, embedUpdate(doc, CLIENT, embed), MAX_STRUCTS), UpdateRejected);
    });
  }

  it('accepts the embeds editors write (an image, a line break)', () => {
    const doc = base();
    const writer = new Y.Doc();
    writer.clientID = CLIENT;
    Y.applyUpdate(writer, Y.encodeStateAsUpdate(doc));
    const before = Y.encodeStateVector(writer);
    writer.getText('text').insertEmbed(1, { image: 'https://example.com/a.png' });
    writer.getText('text').insertEmbed(2, { break: true });
    assert.equal(checkUpdate(doc, Y.encodeStateAsUpdate(writer, before), MAX_STRUCTS).changes, true);
  });
});

/**
 * An update of two sections for one client: Yjs's reader keeps only the last section of a client it meets twice
 * (yjs `readClientsStructRefs` sets the client's entry again), while `Y.decodeUpdate` lists the structs of both.
 */
function twoSectionsOfOneClient(): { doc: Y.Doc; update: Uint8Array } {
  const writer = new Y.Doc();
  writer.clientID = CLIENT;
  writer.getText('text').insert(0, 'old');
  const known = Y.encodeStateAsUpdate(writer);
  const doc = new Y.Doc();
  Y.applyUpdate(doc, known);
  const before = Y.encodeStateVector(writer);
  writer.getText('text').insert(3, 'new');
  const fresh = Y.encodeStateAsUpdate(writer, before);
  // Both are [1 section][the section][0: no deletes]: the new section first, then the known one.
  assert.equal(fresh[0], 1);
  assert.equal(known[0], 1);
  assert.equal(fresh.at(-1), 0);
  assert.equal(known.at(-1), 0);
  const update = new Uint8Array([2, ...fresh.subarray(1, -1), ...known.subarray(1, -1), 0]);
  return { doc, update };
}

describe('checkUpdate: one client in two sections', () => {
  it('refuses it: the check would count structs that Yjs drops', () => {
    const { doc, update } = twoSectionsOfOneClient();
    assert.equal(Y.decodeUpdate(update).structs.length, 2, 'the decoder lists both sections');
    assert.throws(() => checkUpdate(doc, update, MAX_STRUCTS), UpdateRejected);
    // What the refusal prevents: Yjs applies only the known section and changes nothing, which the room took for
    // a broken document.
    const victim = new Y.Doc();
    Y.applyUpdate(victim, Y.encodeStateAsUpdate(doc));
    let emitted = 0;
    victim.on('update', () => emitted++);
    Y.applyUpdate(victim, update);
    assert.equal(emitted, 0);
    assert.equal(victim.getText('text').toString(), 'old');
  });

  it('accepts the structs of one client in one run, clock after clock, among other clients', () => {
    const doc = base();
    const writer = new Y.Doc();
    Y.applyUpdate(writer, Y.encodeStateAsUpdate(doc));
    const before = Y.encodeStateVector(writer);
    writer.getText('text').insert(0, 'ab');
    writer.getText('text').format(0, 1, { bold: true });
    writer.getText('text').insert(3, 'cd');
    const update = Y.encodeStateAsUpdate(writer, before);
    assert.deepEqual(checkUpdate(doc, update, MAX_STRUCTS).changes, true);
  });
});

describe('checkUpdate: delete ranges', () => {
  function typed(): Y.Doc {
    const doc = new Y.Doc();
    doc.clientID = CLIENT;
    doc.getText('text').insert(0, 'hello');
    return doc;
  }

  it('refuses an empty range inside a live item: Yjs would split the item and emit nothing', () => {
    const doc = typed();
    const update = deleteRangeUpdate(CLIENT, 2, 0);
    assert.throws(() => checkUpdate(doc, update, MAX_STRUCTS), (e) => e instanceof UpdateRejected && e.malformed);
    // What the refusal prevents: the room counted a change the document does not emit, and took the document for
    // a broken one.
    let emitted = 0;
    doc.on('update', () => emitted++);
    Y.applyUpdate(doc, update);
    assert.equal(emitted, 0);
  });

  it('refuses an empty range of a client the document lacks: Yjs would throw while applying it', () => {
    const doc = typed();
    const update = deleteRangeUpdate(CLIENT + 1, 0, 0);
    assert.throws(() => checkUpdate(doc, update, MAX_STRUCTS), (e) => e instanceof UpdateRejected && e.malformed);
    // What the refusal prevents: Yjs parks the range as pending and throws encoding it, after it applied the
    // update's structs.
    assert.throws(() => Y.applyUpdate(doc, update), /Unexpected case/);
  });

  it('counts a range of one clock inside a live item as a change, and the document emits it', () => {
    const doc = typed();
    const update = deleteRangeUpdate(CLIENT, 2, 1);
    assert.equal(checkUpdate(doc, update, MAX_STRUCTS).changes, true);
    let emitted = 0;
    doc.on('update', () => emitted++);
    Y.applyUpdate(doc, update);
    assert.equal(emitted, 1);
    assert.equal(doc.getText('text').toString(), 'helo');
  });
});
