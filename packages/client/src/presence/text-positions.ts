/** Index ↔ Yjs relative position for editors bound to one `Y.Text` (text, B, C). */
import * as Y from 'yjs';

/**
 * Between an editor's indices and the `Y.Text`'s, for editors that do not show every position of it (the plain view
 * of a rich text, adapters/plain-view.ts): a caret at editor index i is at `toY(i)`, `Y.Text` index y shows at
 * `toEditor(y)`. Quill shows every position: its indices are the `Y.Text`'s.
 */
export interface IndexMap {
  toY(index: number): number;
  toEditor(y: number): number;
}

export function relativeAt(ytext: Y.Text, index: number): Y.RelativePosition {
  return Y.createRelativePositionFromTypeIndex(ytext, Math.max(0, Math.min(index, ytext.length)));
}

/** The index `rel` points at in `ytext` now, or null when it belongs elsewhere. */
export function absoluteIndex(doc: Y.Doc, ytext: Y.Text, rel: Y.RelativePosition): number | null {
  const abs = Y.createAbsolutePositionFromRelativePosition(rel, doc);
  if (!abs || abs.type !== ytext) return null;
  return abs.index;
}
