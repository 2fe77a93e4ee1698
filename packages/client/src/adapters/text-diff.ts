/**
 * Plain-string diffs for the adapters: a single splice that places an ambiguous change at the caret (textarea, a
 * key press in rich text), minimal splices that keep every unchanged character (rich-text writes), and index
 * mapping through a Yjs text delta.
 */
import DiffMatchPatch from 'diff-match-patch';

export interface Splice {
  index: number;
  remove: number;
  insert: string;
}

/**
 * The one splice turning `before` into `after`. When the change is a pure insertion or deletion that could sit at
 * several places (typing "a" into "aa"), it is placed where the caret (`cursor`, an index in `after`) says.
 */
export function diffAtCursor(before: string, after: string, cursor: number): Splice {
  return spliceAtCursor(before, after, cursor) ?? outerSplice(before, after);
}

/** The insertion or deletion that ends (insertion) or starts (deletion) at `cursor` in `after`, if that is the change. */
function spliceAtCursor(before: string, after: string, cursor: number): Splice | null {
  const grow = after.length - before.length;
  if (grow > 0 && cursor >= grow && cursor <= after.length) {
    const at = cursor - grow;
    if (before.startsWith(after.slice(0, at)) && before.slice(at) === after.slice(cursor)) {
      return { index: at, remove: 0, insert: after.slice(at, cursor) };
    }
  } else if (grow < 0 && cursor >= 0 && cursor <= after.length) {
    if (after.slice(0, cursor) === before.slice(0, cursor) && after.slice(cursor) === before.slice(cursor - grow)) {
      return { index: cursor, remove: -grow, insert: '' };
    }
  }
  return null;
}

/** From the first to the last changed character, as one splice. */
function outerSplice(before: string, after: string): Splice {
  let start = 0;
  const max = Math.min(before.length, after.length);
  while (start < max && before.charCodeAt(start) === after.charCodeAt(start)) start++;
  let end = 0;
  while (end < max - start && before.charCodeAt(before.length - 1 - end) === after.charCodeAt(after.length - 1 - end)) end++;
  // Never split a UTF-16 surrogate pair: Yjs would store half a character.
  if (start > 0 && isHighSurrogate(before.charCodeAt(start - 1))) start--;
  if (end > 0 && isLowSurrogate(before.charCodeAt(before.length - end))) end--;
  return { index: start, remove: before.length - start - end, insert: after.slice(start, after.length - end) };
}

const dmp = new DiffMatchPatch();
// A diff that runs out of time is coarser (larger splices), never wrong; a keystroke must not wait a second.
dmp.Diff_Timeout = 0.05;

/**
 * The splices turning `before` into `after`, ascending and non-overlapping, with `index` in `before`: the runs the
 * two share stay out of them (diff-match-patch's character diff with its semantic cleanup), so that text written
 * from an editor does not delete and re-insert characters it did not change — in a shared document those may be a
 * collaborator's word still being typed. A change at the caret (`cursor`, an index in `after`; -1 for none) that
 * is one insertion or deletion is placed there. Surrogate pairs are never split.
 */
export function minimalSplices(before: string, after: string, cursor = -1): Splice[] {
  if (before === after) return [];
  const atCursor = spliceAtCursor(before, after, cursor);
  if (atCursor) return widenToCodePoints(before, [atCursor]);
  const diffs = dmp.diff_main(before, after, false);
  // Semantic cleanup drops short coincidental matches between larger changes ("ann4" of "ann48q" kept as the start
  // of "ann41q" when a paste removes what lies between them: a concurrent insertion there would land inside the
  // word). A word between two one-character changes, such as re-spelled spaces, is longer than both and stays.
  dmp.diff_cleanupSemantic(diffs);
  const out: Splice[] = [];
  let index = 0;
  for (const [op, text] of diffs) {
    if (op === DiffMatchPatch.DIFF_EQUAL) {
      index += text.length;
      continue;
    }
    let last = out[out.length - 1];
    if (!last || last.index + last.remove < index) out.push((last = { index, remove: 0, insert: '' }));
    if (op === DiffMatchPatch.DIFF_DELETE) {
      last.remove += text.length;
      index += text.length;
    } else last.insert += text;
  }
  return widenToCodePoints(before, out);
}

/**
 * Grows splices whose edge falls inside a surrogate pair by that unchanged unit (a text holds whole pairs, so a high
 * surrogate right before a splice or a low one right after it belongs to a character the splice cuts), joining
 * splices that then touch.
 */
function widenToCodePoints(before: string, splices: readonly Splice[]): Splice[] {
  const out: Splice[] = [];
  for (const s of splices) {
    let { index, remove, insert } = s;
    if (index > 0 && isHighSurrogate(before.charCodeAt(index - 1))) {
      index--;
      remove++;
      insert = before[index]! + insert;
    }
    const end = index + remove;
    if (end < before.length && isLowSurrogate(before.charCodeAt(end))) {
      remove++;
      insert += before[end]!;
    }
    const prev = out[out.length - 1];
    if (prev && prev.index + prev.remove === index) {
      prev.remove += remove;
      prev.insert += insert;
    } else out.push({ index, remove, insert });
  }
  return out;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** One op of a Yjs text event delta (`Y.YTextEvent.delta`). */
export interface DeltaOp {
  insert?: unknown;
  retain?: number;
  delete?: number;
}

/**
 * Where `index` ends up after `delta` is applied. An insertion exactly at `index` pushes it right when
 * `assocRight`, else leaves it before the inserted text.
 */
export function mapIndex(index: number, delta: readonly DeltaOp[], assocRight: boolean): number {
  let pos = 0;
  let out = index;
  for (const op of delta) {
    if (pos > index || (pos === index && !assocRight && op.insert !== undefined)) break;
    if (op.retain !== undefined) pos += op.retain;
    else if (op.insert !== undefined) {
      const len = typeof op.insert === 'string' ? op.insert.length : 1;
      out += len;
    } else if (op.delete !== undefined) {
      const removed = Math.min(op.delete, Math.max(0, index - pos));
      out -= removed;
      pos += op.delete;
      if (pos > index) break;
    }
  }
  return Math.max(0, out);
}
