// LocalUndo (core/undo.ts): undo reverts only transactions whose origin the adapter declared, never the seed or a
// remote update, and a new doc starts with nothing to undo.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as Y from 'yjs';
import { SEED_ORIGIN } from '../src/core/session.js';
import { LocalUndo } from '../src/core/undo.js';

function peers(): { mine: Y.Doc; theirs: Y.Doc } {
  const mine = new Y.Doc();
  const theirs = new Y.Doc();
  // Updates cross synchronously, with the remote doc as origin (as the session applies them).
  mine.on('update', (u: Uint8Array, origin: unknown) => origin !== theirs && Y.applyUpdate(theirs, u, mine));
  theirs.on('update', (u: Uint8Array, origin: unknown) => origin !== mine && Y.applyUpdate(mine, u, theirs));
  return { mine, theirs };
}

test('undo reverts my tracked edits only; the seed and a peer\'s edits stay', () => {
  const { mine, theirs } = peers();
  const adapter = { name: 'adapter' };
  const text = mine.getText('text');
  mine.transact(() => text.insert(0, 'seed.'), SEED_ORIGIN);
  const undo = new LocalUndo(mine);
  undo.track(adapter);
  mine.transact(() => text.insert(text.length, ' mine'), adapter);
  undo.stopCapturing();
  theirs.transact(() => theirs.getText('text').insert(theirs.getText('text').length, ' theirs'));
  mine.transact(() => text.insert(0, '>'), { name: 'untracked origin' });
  assert.equal(text.toString(), '>seed. mine theirs');

  assert.equal(undo.undo(), true);
  assert.equal(text.toString(), '>seed. theirs');
  assert.equal(theirs.getText('text').toString(), '>seed. theirs', 'the undo reached the peer');
  assert.equal(undo.undo(), false, 'nothing else is mine to undo');
  assert.equal(text.toString(), '>seed. theirs');
  assert.equal(undo.redo(), true);
  assert.equal(text.toString(), '>seed. mine theirs');
});

test('after untrack, the adapter\'s edits are no longer undoable; a new doc has empty stacks', () => {
  const doc = new Y.Doc();
  const adapter = {};
  const undo = new LocalUndo(doc);
  const untrack = undo.track(adapter);
  doc.transact(() => doc.getText('text').insert(0, 'a'), adapter);
  assert.equal(undo.canUndo, true);
  untrack();
  undo.stopCapturing();
  doc.transact(() => doc.getText('text').insert(1, 'b'), adapter);
  assert.equal(undo.undo(), true);
  assert.equal(doc.getText('text').toString(), 'b', 'only the tracked edit was undone');
  undo.destroy();
  const fresh = new LocalUndo(new Y.Doc());
  assert.equal(fresh.canUndo, false);
  assert.equal(fresh.canRedo, false);
});

test('undoStep gives what the undone step had deleted, which the undo restored; null when there is no step', () => {
  const doc = new Y.Doc();
  const adapter = { name: 'adapter' };
  const text = doc.getText('text');
  doc.transact(() => text.insert(0, 'abc'), SEED_ORIGIN);
  const undo = new LocalUndo(doc);
  undo.track(adapter);
  const b = Y.createRelativePositionFromTypeIndex(text, 1).item!;
  doc.transact(() => text.delete(1, 1), adapter);
  const step = undo.undoStep();
  assert.ok(step, 'there was a step');
  assert.equal(text.toString(), 'abc');
  assert.ok(Y.isDeleted(step.deletions, b), 'the deleted "b" is in the step\'s deletions');
  assert.ok(!Y.isDeleted(step.deletions, Y.createID(b.client, b.clock + 1)), '"c" was not deleted');
  assert.equal(undo.undoStep(), null);
});

// A known limit of undo in any Yjs text (README, "Rich text under concurrent edits"; the rich-text fuzz counts such a
// word apart): a peer's undo of a deletion can put the text back inside a word that is being typed.
test("a peer's undo of a deletion right after a word being typed puts the text back inside that word", () => {
  const ann = new Y.Doc();
  const bob = new Y.Doc();
  const annText = ann.getText('text');
  const bobText = bob.getText('text');
  annText.insert(0, 'foo \nseed x');
  Y.applyUpdate(bob, Y.encodeStateAsUpdate(ann));
  const bobsUndo = new LocalUndo(bob);
  const bobsEdits = { name: "Bob's adapter" };
  bobsUndo.track(bobsEdits);
  // Ann starts a word at the end of the first line; Bob, not having seen it, deletes from "foo" across the line
  // break to the end of "seed".
  annText.insert(4, 'an');
  bob.transact(() => bobText.delete(0, 9), bobsEdits);
  const exchange = () => {
    Y.applyUpdate(bob, Y.encodeStateAsUpdate(ann, Y.encodeStateVector(bob)), ann);
    Y.applyUpdate(ann, Y.encodeStateAsUpdate(bob, Y.encodeStateVector(ann)), bob);
  };
  exchange();
  assert.equal(annText.toString(), 'an x');
  // Ann types the rest of her word at her caret: a Y.Text insert skips the deleted characters to its right
  // (yjs src/types/YText.js, `minimizeAttributeChanges`), so these letters go after Bob's deleted text.
  annText.insert(2, 'n12q');
  assert.equal(annText.toString(), 'ann12q x');
  exchange();
  // Bob's undo restores each deleted character before its deleted original (yjs src/structs/Item.js, `redoItem`):
  // between Ann's first letters and the rest.
  assert.equal(bobsUndo.undo(), true);
  exchange();
  assert.equal(bobText.toString(), 'foo an\nseedn12q x');
  assert.equal(annText.toString(), bobText.toString());
});
