/**
 * Comparing and splicing lines, DOM-free: whether the editor's reading of a range equals the document's, the ids
 * of table rows and multi-line cells kept from the document (the parser makes new ones), and the one splice an IME
 * composition made in its block, for when peers changed the document while it was open.
 */
import * as Y from 'yjs';
import { attrsEqual, lineUnits, type Line, type Op } from 'wave-richtext';

function opsEqual(a: readonly Op[], b: readonly Op[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (typeof x.insert === 'string' ? x.insert !== y.insert : JSON.stringify(x.insert) !== JSON.stringify(y.insert)) return false;
    if (!attrsEqual(x.attributes, y.attributes)) return false;
  }
  return true;
}

/** Same text, embeds and attributes, line by line. */
export function sameLines(a: readonly Line[], b: readonly Line[]): boolean {
  return a.length === b.length && a.every((l, i) => attrsEqual(l.attrs, b[i]!.attrs) && opsEqual(l.ops, b[i]!.ops));
}

/**
 * Gives the `cell` ids the parser invented the document's ids of the same cells: within each row (same `table`
 * value), the n-th multi-line cell of `read` takes the id of the n-th multi-line cell of `doc`.
 */
export function keepCellIds(read: Line[], doc: readonly Line[]): void {
  const docCells = new Map<string, string[]>();
  for (const l of doc) {
    const row = l.attrs['table'];
    const cell = l.attrs['cell'];
    if (typeof row !== 'string' || typeof cell !== 'string') continue;
    const list = docCells.get(row) ?? [];
    if (list[list.length - 1] !== cell) list.push(cell);
    docCells.set(row, list);
  }
  const seen = new Map<string, { last: unknown; n: number }>();
  for (const l of read) {
    const row = l.attrs['table'];
    const cell = l.attrs['cell'];
    if (typeof row !== 'string' || typeof cell !== 'string') continue;
    const s = seen.get(row) ?? { last: undefined, n: -1 };
    if (s.last !== cell) s.n++;
    s.last = cell;
    seen.set(row, s);
    const id = docCells.get(row)?.[s.n];
    if (id !== undefined) l.attrs = { ...l.attrs, cell: id };
  }
}


/**
 * Writes what changed from `before` to `after` (one block's lines, before and after a composition) as one splice
 * at `caret`, a relative position taken where the composition began, `caretOffset` units into `before`. The
 * document around it may have changed meanwhile; only the composed splice is written, so peers' edits stay.
 * Returns the text index right after what it wrote (the caret), or null when the place is gone.
 */
export function writeSplice(ytext: Y.Text, before: readonly Line[], after: readonly Line[], caret: Y.RelativePosition, caretOffset: number, origin: unknown): number | null {
  const a = lineUnits(before);
  const b = lineUnits(after);
  let p = 0;
  while (p < caretOffset && p < a.length && p < b.length && a[p]!.key === b[p]!.key) p++;
  let s = 0;
  while (s < a.length - p && s < b.length - p && a[a.length - 1 - s]!.key === b[b.length - 1 - s]!.key) s++;
  const doc = ytext.doc;
  const abs = doc ? Y.createAbsolutePositionFromRelativePosition(caret, doc) : null;
  if (!doc || !abs || abs.type !== ytext) return null;
  const at = Math.max(0, abs.index - (caretOffset - p));
  const remove = Math.min(a.length - p - s, ytext.length - at);
  doc.transact(() => {
    // The composed units go in right after the ones they replace, which are deleted after that (wave-richtext
    // [RT-E7]): a collaborator's word ending where the splice begins keeps its next letter.
    let k = at + remove;
    for (const u of b.slice(p, b.length - s)) {
      if (typeof u.insert === 'string') ytext.insert(k, u.insert, { ...u.attrs });
      else ytext.insertEmbed(k, u.insert, { ...u.attrs });
      k++;
    }
    if (remove > 0) ytext.delete(at, remove);
  }, origin);
  return at + b.length - s - p;
}
