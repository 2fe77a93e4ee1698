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
