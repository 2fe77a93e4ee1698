/**
 * What an editor adapter offers the presence UI (DESIGN.md: adapters report caret rectangles for presence).
 * Every rectangle is in the top-level window's viewport coordinates (an editor inside an iframe converts).
 */
import type * as Y from 'yjs';

export interface Rect {
  left: number;
  top: number;
  width: number;
  height: number;
}

export interface Point {
  x: number;
  y: number;
}

/** A selection as Yjs relative positions: it stays on the same characters while others edit. */
export interface RelSelection {
  anchor: Y.RelativePosition;
  head: Y.RelativePosition;
}

export interface SelectionRects {
  /** The caret at `head`; null when it cannot be placed (e.g. a line the editor has not rendered). */
  caret: Rect | null;
  /** The selected text, one rectangle per line box (empty for a caret). */
  selection: Rect[];
}

export interface PresenceHost {
  /** Where avatars are placed (the editor's outer box, in the top-level document). */
  readonly container: HTMLElement;
  /** Where the local pointer is read and hover is detected (may be inside an iframe). */
  readonly surface: HTMLElement;
  /** The local selection, or null when the editor has none (not focused). */
  localSelection(doc: Y.Doc): RelSelection | null;
  /** Calls `fn` whenever the local selection may have changed; returns the unsubscribe function. */
  onSelectionChange(fn: () => void): () => void;
  /** Rectangles of a remote selection; null when its positions do not resolve in this document. */
  rects(doc: Y.Doc, selection: RelSelection): SelectionRects | null;
  /** The visible part of the editor's content: remote carets and pointers are clipped to it. */
  viewport(): Rect;
  /** Where the content's (0, 0) is now: pointers are exchanged relative to it, so scrolling does not move them. */
  contentOrigin(): Point;
  /** Converts a point in the surface's own viewport (an event's clientX/Y) to the top-level viewport. */
  toTop(p: Point): Point;
  /** Targets whose `scroll` events move the content (beyond the top-level document, which is always watched). */
  scrollTargets(): EventTarget[];
  destroy?(): void;
}
