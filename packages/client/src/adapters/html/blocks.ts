/**
 * The line index: which lines of the document each top-level block of the editor shows. DOM-free.
 *
 * The renderer (wave-richtext `renderHtml`) writes one top-level element per paragraph or heading line, per run of
 * quoted lines (one `<blockquote>`), per run of table lines (one `<table>`), per run of code lines (one `<pre>`),
 * and per top-level list of a run of list lines (a change of list kind at level 0 starts a new list). `blocksOf`
 * cuts the lines the same way. Invariant, checked by the unit tests: the blocks' HTML, each rendered alone,
 * concatenates to `renderHtml` of the whole document; so one block can be re-rendered without the others.
 */
import { canonicalLines, renderHtml, type CanonicalLine, type Line, type RenderOptions } from 'wave-richtext';

/** One top-level block: how many lines of the document it covers, and its canonical HTML. */
export interface Block {
  count: number;
  html: string;
}

const quoted = (l: CanonicalLine) => l.attrs.blockquote === true;
const listGroup = (kind: string | undefined) => (kind === 'ordered' ? 'ol' : kind === 'checked' || kind === 'unchecked' ? 'check' : 'ul');

/** Whether canonical line `next` belongs to the same top-level block as `prev`, the line before it. */
function continues(prev: CanonicalLine, next: CanonicalLine, listKind: string): boolean {
  const a = prev.attrs;
  const b = next.attrs;
  if (quoted(prev) || quoted(next)) return quoted(prev) && quoted(next);
  if (a.table !== undefined || b.table !== undefined) return a.table !== undefined && b.table !== undefined;
  if (a.list !== undefined || b.list !== undefined) {
    if (a.list === undefined || b.list === undefined) return false;
    // A new item at level 0 of another kind starts a new top-level list.
    return (b.indent ?? 0) > 0 || b['list-cont'] === true || listGroup(b.list) === listKind;
  }
  if (a['code-block'] !== undefined || b['code-block'] !== undefined) return a['code-block'] !== undefined && b['code-block'] !== undefined;
  return false;
}

/** Cuts `lines` into top-level blocks, in order; the counts sum to `lines.length`. */
export function blocksOf(lines: readonly Line[], options: RenderOptions = {}): Block[] {
  const canonical = canonicalLines(lines);
  const counts: number[] = [];
  let prev: CanonicalLine | null = null;
  let listKind = '';
  for (const line of canonical) {
    if (prev === null || !continues(prev, line, listKind)) {
      counts.push(0);
      if (line.attrs.list !== undefined) listKind = listGroup(line.attrs.list);
    }
    // Cells that pad a short row are shown by the table but are no line of the document.
    if (line.source !== undefined) counts[counts.length - 1]!++;
    prev = line;
  }
  const out: Block[] = [];
  let at = 0;
  for (const count of counts) {
    out.push({ count, html: renderHtml(lines.slice(at, at + count), options) });
    at += count;
  }
  return out;
}

/** Index of the first line of each block, plus the number of lines as a last entry. */
export function blockStarts(blocks: readonly { count: number }[]): number[] {
  const starts = [0];
  for (const b of blocks) starts.push(starts[starts.length - 1]! + b.count);
  return starts;
}

/**
 * The blocks that differ between `before` and `after` (two cuts of a document): `before[from..to)` became
 * `after[from..to + after.length - before.length)`. Blocks of equal line count and HTML at both ends are kept.
 */
export function changedBlocks(before: readonly Block[], after: readonly Block[]): { from: number; to: number; toAfter: number } {
  const same = (a: Block, b: Block) => a.count === b.count && a.html === b.html;
  let from = 0;
  while (from < before.length && from < after.length && same(before[from]!, after[from]!)) from++;
  let end = 0;
  while (end < before.length - from && end < after.length - from && same(before[before.length - 1 - end]!, after[after.length - 1 - end]!)) end++;
  return { from, to: before.length - end, toAfter: after.length - end };
}
