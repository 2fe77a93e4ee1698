/**
 * Presence for CodeMirror 5 (`app: 'editorB'`), with CodeMirror's own geometry: `charCoords` for the caret and the
 * ends of a selection, the code area's edges for the lines in between. Lines CodeMirror has not rendered still have
 * coordinates (it measures them on demand), and the viewport clip hides what is scrolled away.
 */
import type * as Y from 'yjs';
import { TEXT_TYPE } from 'wave-protocol';
import { clientBox, intersect } from './geometry.js';
import type { PresenceHost, Rect, RelSelection, SelectionRects } from './types.js';
import { absoluteIndex, relativeAt, type IndexMap } from './text-positions.js';

interface Pos {
  line: number;
  ch: number;
}

/** The part of CodeMirror 5's API used here. */
export interface CodeMirrorForPresence {
  getWrapperElement(): HTMLElement;
  getScrollerElement(): HTMLElement;
  getGutterElement(): HTMLElement;
  hasFocus(): boolean;
  getCursor(which?: 'anchor' | 'head'): Pos;
  indexFromPos(pos: Pos): number;
  posFromIndex(index: number): Pos;
  charCoords(pos: Pos, mode: 'window'): { left: number; right: number; top: number; bottom: number };
  on(name: string, fn: (...args: never[]) => void): void;
  off(name: string, fn: (...args: never[]) => void): void;
}

/** `positions`: the adapter's mapping between CodeMirror's document and the `Y.Text` (its plain view). */
export function codemirrorPresence(cm: CodeMirrorForPresence, positions: IndexMap): PresenceHost {
  return new CodemirrorPresence(cm, positions);
}

class CodemirrorPresence implements PresenceHost {
  constructor(private readonly cm: CodeMirrorForPresence, private readonly positions: IndexMap) {}

  get container(): HTMLElement {
    return this.cm.getWrapperElement();
  }

  get surface(): HTMLElement {
    return this.cm.getWrapperElement();
  }

  localSelection(doc: Y.Doc): RelSelection | null {
    if (!this.cm.hasFocus()) return null;
    const ytext = doc.getText(TEXT_TYPE);
    const anchor = this.positions.toY(this.cm.indexFromPos(this.cm.getCursor('anchor')));
    const head = this.positions.toY(this.cm.indexFromPos(this.cm.getCursor('head')));
    return { anchor: relativeAt(ytext, anchor), head: relativeAt(ytext, head) };
  }

  onSelectionChange(fn: () => void): () => void {
    const handler = (): void => fn();
    this.cm.on('cursorActivity', handler);
    this.cm.on('focus', handler);
    return () => {
      this.cm.off('cursorActivity', handler);
      this.cm.off('focus', handler);
    };
  }

  rects(doc: Y.Doc, sel: RelSelection): SelectionRects | null {
    const ytext = doc.getText(TEXT_TYPE);
    const yAnchor = absoluteIndex(doc, ytext, sel.anchor);
    const yHead = absoluteIndex(doc, ytext, sel.head);
    if (yAnchor === null || yHead === null) return null;
    const anchor = this.positions.toEditor(yAnchor);
    const head = this.positions.toEditor(yHead);
    const h = this.cm.charCoords(this.cm.posFromIndex(head), 'window');
    const caret: Rect = { left: h.left, top: h.top, width: 0, height: h.bottom - h.top };
    if (anchor === head) return { caret, selection: [] };
    const a = this.cm.charCoords(this.cm.posFromIndex(Math.min(anchor, head)), 'window');
    const b = this.cm.charCoords(this.cm.posFromIndex(Math.max(anchor, head)), 'window');
    const code = this.code();
    const lineLeft = code.left;
    const lineRight = code.left + code.width;
    const selection: Rect[] = [];
    if (Math.abs(a.top - b.top) < 2) {
      selection.push({ left: a.left, top: a.top, width: Math.max(0, b.left - a.left), height: a.bottom - a.top });
    } else {
      selection.push({ left: a.left, top: a.top, width: Math.max(0, lineRight - a.left), height: a.bottom - a.top });
      if (b.top - a.bottom > 1) selection.push({ left: lineLeft, top: a.bottom, width: lineRight - lineLeft, height: b.top - a.bottom });
      selection.push({ left: lineLeft, top: b.top, width: Math.max(0, b.left - lineLeft), height: b.bottom - b.top });
    }
    return { caret, selection };
  }

  /** The text column (right of the gutters), in viewport coordinates. */
  private code(): Rect {
    const lines = this.cm.getWrapperElement().querySelector('.CodeMirror-lines');
    const r = (lines ?? this.cm.getScrollerElement()).getBoundingClientRect();
    return { left: r.left, top: r.top, width: r.width, height: r.height };
  }

  viewport(): Rect {
    const scroller = clientBox(this.cm.getScrollerElement());
    const gutter = this.cm.getGutterElement().getBoundingClientRect();
    const left = gutter.width > 0 ? gutter.right : scroller.left;
    return intersect(scroller, { left, top: scroller.top, width: scroller.left + scroller.width - left, height: scroller.height });
  }

  contentOrigin() {
    const r = this.code();
    return { x: r.left, y: r.top };
  }

  toTop(p: { x: number; y: number }) {
    return p;
  }

  scrollTargets(): EventTarget[] {
    return [this.cm.getScrollerElement()];
  }
}
