/**
 * Plain-string diffs for the plain-text adapters: a single splice that places an ambiguous change at the caret, and
 * index mapping through a Yjs text delta.
 */
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
