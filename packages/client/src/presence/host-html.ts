/**
 * Presence for the contenteditable editors (Froala = A, TinyMCE = D). The HTML binding maps DOM points to Yjs
 * relative positions and back; rectangles come from DOM ranges (`Range.getClientRects`). TinyMCE's content is in an
 * iframe: its coordinates are shifted by the iframe's position so that everything is drawn in the top-level page.
 */
import type * as Y from 'yjs';
import { caretRect, clientBox, intersect, offset, rangeRects } from './geometry.js';
import type { Point, PresenceHost, Rect, RelSelection, SelectionRects } from './types.js';

/** What the HTML binding lends: its selection as relative positions and relative positions as DOM points. */
export interface HtmlMapping {
  selection(): RelSelection | null;
  toDom(rel: Y.RelativePosition): { node: Node; offset: number } | null;
}

export function htmlPresence(root: HTMLElement, container: HTMLElement, mapping: HtmlMapping): PresenceHost {
  return new HtmlPresence(root, container, mapping);
}

class HtmlPresence implements PresenceHost {
  constructor(
    private readonly root: HTMLElement,
    readonly container: HTMLElement,
    private readonly mapping: HtmlMapping,
  ) {}

  get surface(): HTMLElement {
    // In an iframe (TinyMCE) the body is only as tall as its content: below it, in the rest of the frame, the mouse
    // is over the frame's <html>, still the editor as the user sees it.
    return this.frame ? this.root.ownerDocument.documentElement : this.root;
  }

  private get frame(): HTMLElement | null {
    const win = this.root.ownerDocument.defaultView;
    return win && win !== window ? (win.frameElement as HTMLElement | null) : null;
  }

  localSelection(_doc: Y.Doc): RelSelection | null {
    const doc = this.root.ownerDocument;
    if (!this.root.contains(doc.activeElement)) return null;
    return this.mapping.selection();
  }

  onSelectionChange(fn: () => void): () => void {
    const doc = this.root.ownerDocument;
    const onSelection = (): void => {
      const sel = doc.getSelection();
      if (sel?.anchorNode && this.root.contains(sel.anchorNode)) fn();
    };
    // After the event's other listeners: the binding writes a held key's character at keyup (and flushes typing in
    // a microtask after input), and the caret is published as a place in the document's text.
    let timer: ReturnType<typeof setTimeout> | null = null;
    const afterEvent = (): void => {
      if (timer === null) timer = setTimeout(() => ((timer = null), fn()), 0);
    };
    doc.addEventListener('selectionchange', onSelection);
    this.root.addEventListener('input', afterEvent);
    this.root.addEventListener('keyup', afterEvent);
    return () => {
      if (timer !== null) clearTimeout(timer);
      doc.removeEventListener('selectionchange', onSelection);
      this.root.removeEventListener('input', afterEvent);
      this.root.removeEventListener('keyup', afterEvent);
    };
  }

  rects(_doc: Y.Doc, selection: RelSelection): SelectionRects | null {
    const head = this.mapping.toDom(selection.head);
    const anchor = selection.anchor === selection.head ? head : this.mapping.toDom(selection.anchor);
    if (!head || !anchor) return null;
    const shift = this.shift();
    const range = this.root.ownerDocument.createRange();
    range.setStart(head.node, head.offset);
    range.collapse(true);
    const caret = caretRect(range) ?? this.elementCaret(head.node, head.offset);
    let rects: Rect[] = [];
    if (anchor.node !== head.node || anchor.offset !== head.offset) {
      try {
        range.setStart(anchor.node, anchor.offset);
        range.setEnd(head.node, head.offset);
        if (range.collapsed) {
          range.setStart(head.node, head.offset);
          range.setEnd(anchor.node, anchor.offset);
        }
        rects = rangeRects(range);
      } catch {
        rects = [];
      }
    }
    return { caret: caret ? offset(caret, shift) : null, selection: rects.map((r) => offset(r, shift)) };
  }

  /** A caret between elements (an empty paragraph's `<br>`): the left edge of the element after it, one line high. */
  private elementCaret(node: Node, at: number): Rect | null {
    const el = (node.childNodes[at] ?? node) as Element;
    const target = el.nodeType === 1 ? el : (el.parentElement ?? this.root);
    const r = target.getBoundingClientRect();
    const view = this.root.ownerDocument.defaultView!;
    const lh = parseFloat(view.getComputedStyle(target.nodeType === 1 && target.localName !== 'br' ? target : target.parentElement ?? this.root).lineHeight);
    return { left: r.left, top: r.top, width: 0, height: Number.isFinite(lh) ? lh : Math.max(r.height, 16) };
  }

  private shift(): Point {
    const frame = this.frame;
    if (!frame) return { x: 0, y: 0 };
    const r = frame.getBoundingClientRect();
    return { x: r.left + frame.clientLeft, y: r.top + frame.clientTop };
  }

  viewport(): Rect {
    const frame = this.frame;
    if (frame) return clientBox(frame);
    let rect = this.root.getBoundingClientRect() as Rect;
    // Clip to the scrolling boxes between the content and the editor's outer box (Froala with a fixed height).
    for (let el = this.root.parentElement; el && el !== this.container.parentElement; el = el.parentElement) {
      const overflow = getComputedStyle(el).overflowY;
      if (overflow !== 'visible') rect = intersect(rect, clientBox(el));
    }
    // A toolbar that sticks over the content while the page scrolls (Froala's) hides what is under it: so do we.
    const toolbar = this.container.querySelector('.fr-toolbar');
    if (toolbar) {
      const t = toolbar.getBoundingClientRect();
      if (t.height > 0 && t.bottom > rect.top && t.top < rect.top + rect.height) {
        rect = intersect(rect, { left: rect.left, top: t.bottom, width: rect.width, height: rect.height });
      }
    }
    return rect;
  }

  contentOrigin(): Point {
    const r = this.root.getBoundingClientRect();
    const s = this.shift();
    return { x: r.left + s.x - this.root.scrollLeft, y: r.top + s.y - this.root.scrollTop };
  }

  toTop(p: Point): Point {
    const s = this.shift();
    return { x: p.x + s.x, y: p.y + s.y };
  }

  scrollTargets(): EventTarget[] {
    const win = this.root.ownerDocument.defaultView;
    return win && win !== window ? [win] : [];
  }
}
