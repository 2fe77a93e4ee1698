/**
 * Pairing a live node list with a freshly rendered one, so the patcher keeps the nodes that can stay. DOM-free.
 */

/** Above this many node pairs, the middle between the common ends is paired position by position. */
const MAX_ALIGN_CELLS = 4096;

/**
 * For each of `b`, the index of the node of `a` it is paired with, or -1: a longest common subsequence under
 * `same`, so pairs keep their order. Common ends are paired first; a middle too large for the table is paired
 * position by position.
 */
export function alignNodes<A, B>(a: readonly A[], b: readonly B[], same: (x: A, y: B) => boolean): number[] {
  const pair: number[] = b.map(() => -1);
  let lo = 0;
  while (lo < a.length && lo < b.length && same(a[lo]!, b[lo]!)) {
    pair[lo] = lo;
    lo++;
  }
  let ha = a.length;
  let hb = b.length;
  while (ha > lo && hb > lo && same(a[ha - 1]!, b[hb - 1]!)) pair[--hb] = --ha;
  const n = ha - lo;
  const m = hb - lo;
  if (n === 0 || m === 0) return pair;
  if (n * m > MAX_ALIGN_CELLS) {
    for (let k = 0; k < Math.min(n, m); k++) if (same(a[lo + k]!, b[lo + k]!)) pair[lo + k] = lo + k;
    return pair;
  }
  // len[i][j]: the longest pairing of a[lo+i..ha) with b[lo+j..hb).
  const w = m + 1;
  const len = new Uint16Array((n + 1) * w);
  const eq = new Uint8Array(n * m);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      const e = same(a[lo + i]!, b[lo + j]!);
      eq[i * m + j] = e ? 1 : 0;
      len[i * w + j] = e ? len[(i + 1) * w + j + 1]! + 1 : Math.max(len[(i + 1) * w + j]!, len[i * w + j + 1]!);
    }
  }
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (eq[i * m + j] && len[i * w + j] === len[(i + 1) * w + j + 1]! + 1) pair[lo + j++] = lo + i++;
    else if (len[(i + 1) * w + j]! >= len[i * w + j + 1]!) i++;
    else j++;
  }
  return pair;
}
