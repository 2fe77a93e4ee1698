// The patcher's pairing of live nodes with rendered ones (adapters/html/align.ts): pairs keep their order, only
// compatible nodes are paired, and as many as possible, so an element the editor holds on to survives a change
// beside it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { alignNodes } from '../src/adapters/html/align.ts';
import { seededRandom } from './helpers/random.js';

const sameKind = (x: string, y: string) => x[0] === y[0];

/** The largest number of in-order pairs, by trying every subset of `a` (small inputs only). */
function bestCount(a: string[], b: string[], same: (x: string, y: string) => boolean): number {
  let best = 0;
  for (let mask = 0; mask < 1 << a.length; mask++) {
    const picked = a.filter((_, i) => mask & (1 << i));
    // Greedy pairing of the picked nodes in order is optimal for a fixed subset that must all be paired.
    let j = 0;
    let ok = true;
    for (const x of picked) {
      while (j < b.length && !same(x, b[j]!)) j++;
      if (j === b.length) {
        ok = false;
        break;
      }
      j++;
    }
    if (ok) best = Math.max(best, picked.length);
  }
  return best;
}

function check(a: string[], b: string[], same = sameKind): number[] {
  const pair = alignNodes(a, b, same);
  assert.equal(pair.length, b.length);
  let last = -1;
  for (let j = 0; j < b.length; j++) {
    const k = pair[j]!;
    if (k < 0) continue;
    assert.ok(k > last, `pairs in order: ${JSON.stringify(pair)}`);
    assert.ok(same(a[k]!, b[j]!), `${a[k]} paired with ${b[j]}`);
    last = k;
  }
  assert.equal(pair.filter((k) => k >= 0).length, bestCount(a, b, same), `as many pairs as possible: ${JSON.stringify({ a, b, pair })}`);
  return pair;
}

describe('rich-text binding: pairing live nodes with rendered ones', () => {
  it('keeps an image when the text before it goes, and when text is typed after it', () => {
    // t = a text node, i = an <img>.
    assert.deepEqual(check(['t1', 'i', 't2'], ['i', 't2']), [1, 2]);
    assert.deepEqual(check(['i', 't2'], ['i', 't3', 'b', 't4']), [0, 1, -1, -1]);
    assert.deepEqual(check(['t', 'b', 't', 'i'], ['t', 'i']), [0, 3]);
  });

  it('pairs as many nodes as possible, in order, from every seeded draw of small lists', () => {
    const rand = seededRandom(12345);
    const kinds = ['t', 'i', 'b', 'a'];
    for (let n = 0; n < 2000; n++) {
      const a = Array.from({ length: Math.floor(rand() * 8) }, (_, k) => kinds[Math.floor(rand() * 4)]! + k);
      const b = Array.from({ length: Math.floor(rand() * 8) }, (_, k) => kinds[Math.floor(rand() * 4)]! + k);
      check(a, b);
    }
  });

  it('pairs position by position past the table size, still in order and compatible only', () => {
    const a = Array.from({ length: 100 }, (_, k) => (k % 3 === 0 ? 'i' : 't') + k);
    const b = Array.from({ length: 90 }, (_, k) => (k % 2 === 0 ? 'i' : 't') + k);
    const pair = alignNodes(a, b, sameKind);
    let last = -1;
    pair.forEach((k, j) => {
      if (k < 0) return;
      assert.ok(k > last && sameKind(a[k]!, b[j]!));
      last = k;
    });
  });
});
