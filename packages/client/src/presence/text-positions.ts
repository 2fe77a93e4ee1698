/** Index ↔ Yjs relative position for editors bound to one `Y.Text` (text, B, C). */
import * as Y from 'yjs';

export function relativeAt(ytext: Y.Text, index: number): Y.RelativePosition {
  return Y.createRelativePositionFromTypeIndex(ytext, Math.max(0, Math.min(index, ytext.length)));
}

/** The index `rel` points at in `ytext` now, or null when it belongs elsewhere. */
export function absoluteIndex(doc: Y.Doc, ytext: Y.Text, rel: Y.RelativePosition): number | null {
  const abs = Y.createAbsolutePositionFromRelativePosition(rel, doc);
  if (!abs || abs.type !== ytext) return null;
  return abs.index;
}
