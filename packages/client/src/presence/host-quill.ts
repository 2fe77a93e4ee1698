/**
 * Presence for Quill 2 (`app: 'editorC'`). The caret comes from `quill.getBounds(index)`; the selection from a DOM
 * range per line over Quill's leaves (the technique of quill-cursors), so wrapped lines give one rectangle per line box.
 */
import type * as Y from 'yjs';
import { TEXT_TYPE } from 'wave-protocol';
import { clientBox, rangeRects } from './geometry.js';
import type { PresenceHost, Rect, RelSelection, SelectionRects } from './types.js';
import { absoluteIndex, relativeAt } from './text-positions.js';

interface Blot {
  domNode: Node;
  length(): number;
  children?: unknown;
  path(index: number): Array<[Blot, number]>;
}

/** The part of Quill 2's API used here. */
export interface QuillForPresence {
  root: HTMLElement;
  container: HTMLElement;
  getSelection(focus?: boolean): { index: number; length: number } | null;
  getBounds(index: number, length?: number): { left: number; top: number; width: number; height: number } | null;
  getLength(): number;
  getLeaf(index: number): [Blot | null, number];
  getLines(index: number, length: number): Blot[];
  hasFocus(): boolean;
  getModule(name: string): unknown;
  on(name: string, fn: (...args: unknown[]) => void): unknown;
  off(name: string, fn: (...args: unknown[]) => void): unknown;
}

export function quillPresence(quill: QuillForPresence): PresenceHost {
  return new QuillPresence(quill);
}

class QuillPresence implements PresenceHost {
  /** The last selection Quill reported, with its direction (Quill keeps only index and length). */
  private backward = false;

  constructor(private readonly quill: QuillForPresence) {}

  /** The toolbar when Quill has one (the top of the editor as the user sees it), else the container. */
  get container(): HTMLElement {
    const toolbar = (this.quill.getModule('toolbar') as { container?: unknown } | undefined)?.container;
    return toolbar instanceof HTMLElement && toolbar.isConnected ? toolbar : this.quill.container;
  }

  get surface(): HTMLElement {
    // The container, not the root: below a short text the mouse is over the container only (see `viewport`).
    return this.quill.container;
  }

  localSelection(doc: Y.Doc): RelSelection | null {
    if (!this.quill.hasFocus()) return null;
    const range = this.quill.getSelection(false);
    if (!range) return null;
    const native = this.quill.root.ownerDocument.getSelection();
    this.backward = !!native && native.rangeCount > 0 && isBackward(native);
    const ytext = doc.getText(TEXT_TYPE);
    const start = relativeAt(ytext, range.index);
    const end = range.length === 0 ? start : relativeAt(ytext, range.index + range.length);
    return this.backward ? { anchor: end, head: start } : { anchor: start, head: end };
  }

  onSelectionChange(fn: () => void): () => void {
    const handler = (): void => fn();
    this.quill.on('editor-change', handler);
    return () => {
      this.quill.off('editor-change', handler);
    };
  }

  rects(doc: Y.Doc, sel: RelSelection): SelectionRects | null {
    const ytext = doc.getText(TEXT_TYPE);
    const anchor = absoluteIndex(doc, ytext, sel.anchor);
    const head = absoluteIndex(doc, ytext, sel.head);
    if (anchor === null || head === null) return null;
    const max = Math.max(0, this.quill.getLength() - 1);
    const clamp = (i: number): number => Math.max(0, Math.min(i, max));
    const box = this.quill.container.getBoundingClientRect();
    const b = this.quill.getBounds(clamp(head), 0);
    const caret: Rect | null = b ? { left: box.left + b.left, top: box.top + b.top, width: 0, height: b.height } : null;
    const from = clamp(Math.min(anchor, head));
    const to = clamp(Math.max(anchor, head));
    return { caret, selection: from === to ? [] : this.selectionRects(from, to) };
  }

  /** One DOM range per line between `from` and `to` (quill-cursors' `_lineRanges`). */
  private selectionRects(from: number, to: number): Rect[] {
    const start = this.quill.getLeaf(from);
    const end = this.quill.getLeaf(to);
    if (!start[0] || !end[0]) return [];
    const lines = this.quill.getLines(from, to - from);
    const doc = this.quill.root.ownerDocument;
    const out: Rect[] = [];
    lines.forEach((line, i) => {
      const range = doc.createRange();
      if (!line.children) {
        range.selectNode(line.domNode);
      } else {
        const [first, firstOffset] = i === 0 ? (start as [Blot, number]) : line.path(0).pop()!;
        const [last, lastOffset] = i === lines.length - 1 ? (end as [Blot, number]) : line.path(line.length() - 1).pop()!;
        if (first.domNode.nodeType === 3) range.setStart(first.domNode, firstOffset);
        else range.setStartBefore(first.domNode);
        if (last.domNode.nodeType === 3) range.setEnd(last.domNode, lastOffset);
        else range.setEndAfter(last.domNode);
      }
      out.push(...rangeRects(range));
    });
    return out;
  }

  viewport(): Rect {
    // Quill's root (.ql-editor) is only as tall as its text when the host gives the container a min-height and no
    // height (its `height: 100%` then resolves to auto): the blank part of the container below the text is still
    // the editor, where a collaborator's pointer and the label under a caret on the last line must show.
    const root = clientBox(this.quill.root);
    const container = clientBox(this.quill.container);
    return { ...root, height: Math.max(root.height, container.top + container.height - root.top) };
  }

  contentOrigin() {
    const box = clientBox(this.quill.root);
    return { x: box.left - this.quill.root.scrollLeft, y: box.top - this.quill.root.scrollTop };
  }

  toTop(p: { x: number; y: number }) {
    return p;
  }

  scrollTargets(): EventTarget[] {
    return [this.quill.root];
  }
}

function isBackward(sel: Selection): boolean {
  if (!sel.anchorNode || !sel.focusNode) return false;
  if (sel.anchorNode === sel.focusNode) return sel.focusOffset < sel.anchorOffset;
  return !!(sel.anchorNode.compareDocumentPosition(sel.focusNode) & Node.DOCUMENT_POSITION_PRECEDING);
}
