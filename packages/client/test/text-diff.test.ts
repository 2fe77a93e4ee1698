import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diffAtCursor, mapIndex } from '../src/adapters/text-diff.js';
import { AckTracker } from '../src/core/ack-tracker.js';

function apply(s: string, d: { index: number; remove: number; insert: string }): string {
  return s.slice(0, d.index) + d.insert + s.slice(d.index + d.remove);
}

test('diffAtCursor places ambiguous insertions and deletions at the caret', () => {
  assert.deepEqual(diffAtCursor('aa', 'aaa', 1), { index: 0, remove: 0, insert: 'a' });
  assert.deepEqual(diffAtCursor('aa', 'aaa', 3), { index: 2, remove: 0, insert: 'a' });
  assert.deepEqual(diffAtCursor('abba', 'aba', 1), { index: 1, remove: 1, insert: '' });
  assert.deepEqual(diffAtCursor('hello world', 'hello brave world', 12), { index: 6, remove: 0, insert: 'brave ' });
  assert.deepEqual(diffAtCursor('abc', 'aXc', -1), { index: 1, remove: 1, insert: 'X' });
});

test('diffAtCursor never splits a surrogate pair', () => {
  const d = diffAtCursor('a😀b', 'a😃b', -1);
  assert.equal(d.insert, '😃');
  assert.equal(apply('a😀b', d), 'a😃b');
});

test('diffAtCursor result always transforms before into after (random)', () => {
  const seed = 1234;
  let x = seed;
  const rnd = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const alphabet = 'ab😀\n';
  const randStr = (n: number) => Array.from({ length: n }, () => alphabet[Math.floor(rnd() * alphabet.length)]).join('');
  for (let i = 0; i < 2000; i++) {
    const before = randStr(Math.floor(rnd() * 8));
    const after = randStr(Math.floor(rnd() * 8));
    const cursor = Math.floor(rnd() * (after.length + 2)) - 1;
    assert.equal(apply(before, diffAtCursor(before, after, cursor)), after, `seed ${seed} case ${i}: ${JSON.stringify([before, after, cursor])}`);
  }
});

test('mapIndex moves an index through a text delta', () => {
  assert.equal(mapIndex(5, [{ retain: 2 }, { insert: 'xyz' }], false), 8);
  assert.equal(mapIndex(2, [{ retain: 2 }, { insert: 'xyz' }], false), 2);
  assert.equal(mapIndex(2, [{ retain: 2 }, { insert: 'xyz' }], true), 5);
  assert.equal(mapIndex(5, [{ retain: 1 }, { delete: 2 }], false), 3);
  assert.equal(mapIndex(2, [{ retain: 1 }, { delete: 3 }], false), 1);
  assert.equal(mapIndex(1, [{ retain: 4 }, { delete: 1 }], false), 1);
});

test('AckTracker counts pending edits until the covering message is acked', () => {
  const t = new AckTracker();
  t.localEdit();
  t.localEdit();
  assert.equal(t.pending, 2);
  assert.ok(t.hasUnsent());
  t.sent(); // covers 2
  assert.ok(!t.hasUnsent());
  t.localEdit();
  t.sent(); // covers 3
  assert.equal(t.acked(1), true);
  assert.equal(t.pending, 1);
  t.connectionLost(); // message 2 may be lost
  assert.ok(t.hasUnsent());
  t.sent(); // the next connection's step2 covers 3
  t.acked(1);
  assert.equal(t.pending, 0);
});

