/**
 * What a key press or IME composition typed, written where it began: the rich-text binding holds a block while a
 * key is down or a composition is open, and a peer's edits of it can arrive meanwhile. The typed text is the one
 * splice between the block before and after, written at the relative position where the typing began, so the
 * peer's edits stay.
 */
import * as Y from 'yjs';
import { diffAtCursor } from '../text-diff.js';
import { plainText, type MElement, type TextOp } from './model.js';
import type { Positions, YPoint } from './positions.js';
import { keyOf, type YNode } from './ydoc.js';
import { textsOf } from './selection.js';

/** One key press's or composition's change to one block. */
export interface Typing {
  /** The top-level node the block was. */
  top: YNode;
  /** The block before the typing; null when it was not in normal form (then nothing is written). */
  before: MElement | null;
  /** What the editor shows now in its place. */
  now: MElement[];
  /** Where the typing began: `path` and `offset` in `before`; `rel` where that place is in the document now. */
  start: YPoint;
  /** Whether `start.rel` may be in another block: a peer's write moved the text there (the binding's `rescue`). */
  moved: boolean;
}

/**
 * Writes `typing` in one transaction with `origin`. Afterwards `typing.start.rel` is where the caret belongs.
 * Returns the top-level node written into; null, writing nothing, when the change is not one splice of one text,
 * or its place is gone.
 */
export function writeTyping(doc: Y.Doc, positions: Positions, typing: Typing, origin: unknown): YNode | null {
  const { before, now, start } = typing;
  if (!before || now.length !== 1) return null;
  const oldTexts = textsOf([before]);
  const newTexts = textsOf(now);
  if (oldTexts.length !== newTexts.length) return null;
  let changedAt = -1;
  for (let k = 0; k < oldTexts.length; k++) {
    if (keyOf(oldTexts[k]!.text) === keyOf(newTexts[k]!.text)) continue;
    if (changedAt >= 0) return null;
    changedAt = k;
  }
  if (changedAt < 0) return null;
  const path = oldTexts[changedAt]!.path;
  if (path.join() !== start.path.join()) return null;
  const a = plainText(oldTexts[changedAt]!.text);
  const b = plainText(newTexts[changedAt]!.text);
  const splice = diffAtCursor(a, b, start.offset + Math.max(0, b.length - a.length));
  // The text is found where the caret's relative position resolves, not by its path: a remote edit of the same
  // block (a list item inserted above, in the same list) may have moved it to another index meanwhile.
  const abs = Y.createAbsolutePositionFromRelativePosition(start.rel, doc);
  const place = abs ? positions.placeOfY(abs.type) : null;
  if (!abs || !place || (place.top !== typing.top && !typing.moved)) return null;
  const ytext = abs.type as Y.XmlText;
  const at = abs.index + (splice.index - start.offset);
  if (at < 0 || at + splice.remove > ytext.length) return null;
  const marks = marksAt(newTexts[changedAt]!.text.ops, splice.index);
  doc.transact(() => {
    if (splice.remove > 0) ytext.delete(at, splice.remove);
    if (splice.insert) ytext.insert(at, splice.insert, marks);
  }, origin);
  start.rel = Y.createRelativePositionFromTypeIndex(ytext, at + splice.insert.length, -1);
  return place.top;
}

/**
 * The formatting of the text at `index` (of the run it ends, at a run boundary): what typed text takes on. A copy:
 * Yjs writes into the attributes object it is given (see ydoc.ts `insertSlice`), and this one belongs to the model.
 */
function marksAt(ops: readonly TextOp[], index: number): Record<string, unknown> {
  let pos = 0;
  for (const op of ops) {
    const len = typeof op.insert === 'string' ? op.insert.length : 1;
    if (index < pos + len || index === pos + len) return { ...op.attributes };
    pos += len;
  }
  return {};
}
