/** ConfirmedState: the server-confirmed copy, applied at once or deferred off the first sync's critical path. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as Y from 'yjs';
import { ConfirmedState } from '../src/core/confirmed.js';

function edit(text: string, at = 0, base?: Y.Doc): { doc: Y.Doc; update: Uint8Array } {
  const doc = base ?? new Y.Doc();
  const before = Y.encodeStateVector(doc);
  doc.getText('t').insert(at, text);
  return { doc, update: Y.encodeStateAsUpdate(doc, before) };
}

test('immediate: remote and acked local updates are in the copy at once, unacked ones are not', () => {
  const confirmed = new ConfirmedState(false);
  const remote = edit('remote ');
  confirmed.remote(remote.update);
  const mine = edit('mine ', 0, remote.doc);
  confirmed.local(1, mine.update);
  assert.equal(confirmed.text('t'), 'remote ');
  confirmed.acked(1);
  assert.equal(confirmed.text('t'), 'mine remote ');
  confirmed.destroy();
});

test('deferred: nothing is decoded during the call; the copy is complete when read and after an idle turn', async () => {
  const confirmed = new ConfirmedState(true);
  const remote = edit('remote ');
  const mine = edit('mine ', 0, remote.doc);
  confirmed.remote(remote.update);
  confirmed.local(1, mine.update);
  confirmed.acked(1);
  // Reading through `doc` applies what is queued, in order.
  assert.equal(confirmed.doc.getText('t').toString(), 'mine remote ');

  const later = edit('later ', 0, mine.doc);
  confirmed.remote(later.update);
  const copy = confirmed['copy'] as Y.Doc; // the raw copy, read without bringing it up to date
  assert.equal(copy.getText('t').toString(), 'mine remote ', 'deferred: not applied during remote()');
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(copy.getText('t').toString(), 'later mine remote ', 'applied once the event loop is idle');
  confirmed.destroy();
});

test('deferred: destroy drops queued updates without applying them', async () => {
  const confirmed = new ConfirmedState(true);
  confirmed.remote(edit('x').update);
  confirmed.destroy();
  await new Promise((r) => setTimeout(r, 10));
  assert.equal((confirmed['copy'] as Y.Doc).getText('t').length, 0);
});
