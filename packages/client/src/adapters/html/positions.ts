/**
 * Points in the editor's DOM and in the shared document, each as the other: a DOM point (node, offset) as a Yjs
 * relative position in the `Y.XmlText` it shows, and back. The rich-text binding saves the selection this way
 * before a foreign transaction and restores it after, publishes the caret to awareness, and finds where a key
 * press began.
 *
 * Only a top-level block shown by exactly one DOM node maps: one whose DOM is mid-change (an editor's split not
 * yet read) has no reliable point, and gives null.
 */
import * as Y from 'yjs';
import { isText, readNodes, type EditorDialect } from './dom.js';
import { plainText, type MText } from './model.js';
import { modelToPoint, pointToModel, textAtPath } from './selection.js';
import { caretText, tid, trace } from './trace.js';
import { offsetInDocument, plainOfY, type YNode } from './ydoc.js';

/** A point in the document: a relative position, and where it was in the model when it was made. */
export interface YPoint {
  rel: Y.RelativePosition;
  /** Child path to the text in the block's model, as `selection.ts` gives it (the block's own index, 0, first). */
  path: number[];
  /** Offset in that text (UTF-16 code units). */
  offset: number;
  /** The text the point is in, as it was found. */
  text: Y.XmlText;
}

/** A saved selection: anchor and focus (null where the DOM point had no place in the document). */
export interface Saved {
  anchor: YPoint | null;
  focus: YPoint | null;
}

/** A top-level Y node and the top-level DOM nodes that show it. */
export interface Placed {
  y: YNode;
  doms: Node[];
}

/** What the mapping reads of the binding, at the moment of each call. */
export interface PositionsHost {
  /** The contenteditable root. */
  readonly root: HTMLElement;
  readonly dialect: EditorDialect;
  /** The bound document's fragment; null when unbound. */
  fragment(): Y.XmlFragment | null;
  placedByDom(top: Node): Placed | undefined;
  placedByY(y: YNode): Placed | undefined;
}

/** The child of `root` that holds `node` (`node` itself when it is one); null when `node` is not under `root`. */
export function topOf(root: Node, node: Node | null): Node | null {
  while (node && node.parentNode !== root) node = node.parentNode;
  return node;
}

export class Positions {
  constructor(private readonly host: PositionsHost) {}

  /** A DOM point as a Yjs relative position (with its model path and offset at this moment). */
  domToY(node: Node, offset: number): YPoint | null {
    const found = this.textAtDom(node, offset);
    if (!found || found.offset > found.text.length) return null;
    return { rel: Y.createRelativePositionFromTypeIndex(found.text, found.offset, -1), path: found.path, offset: found.offset, text: found.text };
  }

  /**
   * A DOM point as peers are to see it: the place in the document's text. The DOM can differ from the document
   * there: a key's character is written at keyup, and a peer's edit of the block being typed in waits for it. The
   * DOM offset as it is would point one key further into the document's text, and past a split point a peer pairs
   * the block by carets (`SyncOptions.heldIn`): it took the text this user was typing for the other part and copied
   * it away, while this user's own Enter moved the same text (the Enter race doubled "ann2x608" in CI).
   * (`domToY` keeps the DOM offset: the selection it saves is put back into the same DOM.)
   */
  publishedPoint(node: Node, offset: number): Y.RelativePosition | null {
    const found = this.textAtDom(node, offset);
    if (!found) return null;
    const index = offsetInDocument(plainText(found.shown), plainOfY(found.text), found.offset);
    return Y.createRelativePositionFromTypeIndex(found.text, Math.min(index, found.text.length), -1);
  }

  /** A relative position as a DOM point; null when its text is deleted or not shown by one DOM node. */
  yToDom(rel: Y.RelativePosition): { node: Node; offset: number } | null {
    const doc = this.host.fragment()?.doc;
    if (!doc) return null;
    const abs = Y.createAbsolutePositionFromRelativePosition(rel, doc);
    const place = abs ? this.placeOfY(abs.type) : null;
    const entry = place ? this.host.placedByY(place.top) : undefined;
    if (!entry || entry.doms.length !== 1) return null;
    const blocks = readNodes(entry.doms, this.host.root, this.host.dialect);
    return modelToPoint(blocks, [0, ...place!.path], abs!.index);
  }

  /** A `Y.XmlText` in the document as its top-level node and its child path below it; null for anything else. */
  placeOfY(type: Y.AbstractType<unknown>): { top: YNode; path: number[] } | null {
    if (!(type instanceof Y.XmlText)) return null;
    const frag = this.host.fragment();
    const path: number[] = [];
    let t: Y.AbstractType<unknown> = type as Y.AbstractType<unknown>;
    while (t.parent && t.parent !== frag) {
      const parent = t.parent as Y.XmlElement;
      path.unshift(parent.toArray().indexOf(t as Y.XmlElement | Y.XmlText));
      t = parent as Y.AbstractType<unknown>;
    }
    return t.parent === frag ? { top: t as YNode, path } : null;
  }

  /** The window's selection, when it is inside the root, as relative positions. */
  captureSelection(): Saved | null {
    const root = this.host.root;
    const sel = root.ownerDocument.getSelection();
    if (!sel || sel.rangeCount === 0 || !sel.anchorNode || !sel.focusNode) return null;
    if (!root.contains(sel.anchorNode) || !root.contains(sel.focusNode)) return null;
    const anchor = this.domToY(sel.anchorNode, sel.anchorOffset);
    const focus = sel.anchorNode === sel.focusNode && sel.anchorOffset === sel.focusOffset ? anchor : this.domToY(sel.focusNode, sel.focusOffset);
    return { anchor, focus };
  }

  /** Puts a saved selection back where its relative positions resolve now (left alone where they have no place). */
  restoreSelection(saved: Saved): void {
    const sel = this.host.root.ownerDocument.getSelection();
    if (!sel || !saved.anchor || !saved.focus) {
      trace('caret', () => `not restored: ${sel ? 'no saved point' : 'no selection'}`);
      return;
    }
    const a = this.yToDom(saved.anchor.rel);
    const f = saved.focus === saved.anchor ? a : this.yToDom(saved.focus.rel);
    if (!a || !f) {
      // The TinyMCE fuzz's "ann15q": after a rescue the caret stayed in the old paragraph, with no trace of why.
      trace('caret', () => `not restored: ${this.traceRel(saved.anchor!.rel)} has no place in the DOM`);
      return;
    }
    if (sel.anchorNode === a.node && sel.anchorOffset === a.offset && sel.focusNode === f.node && sel.focusOffset === f.offset) return;
    trace('caret', () => `${caretText(sel.focusNode, sel.focusOffset)} -> ${caretText(f.node, f.offset)} (${this.traceRel(saved.anchor!.rel)}, ${this.traceRel(saved.focus!.rel)})`);
    try {
      sel.setBaseAndExtent(a.node, a.offset, f.node, f.offset);
    } catch {
      /* a point the browser refuses (a detached node): leave the selection where the browser put it */
    }
  }

  /** For the trace: where a relative position resolves now (text and index), and its JSON. */
  traceRel(rel: Y.RelativePosition): string {
    const doc = this.host.fragment()?.doc;
    const abs = doc ? Y.createAbsolutePositionFromRelativePosition(rel, doc) : null;
    return `${abs ? `${tid(abs.type)}@${abs.index}` : 'nowhere'} ${JSON.stringify(Y.relativePositionToJSON(rel))}`;
  }

  /** The text a DOM point is in: as the editor shows it (`shown`), its `Y.XmlText`, and the point's model path and offset. */
  private textAtDom(node: Node, offset: number): { shown: MText; text: Y.XmlText; path: number[]; offset: number } | null {
    const { root, dialect } = this.host;
    if (node === root) {
      const child = root.childNodes[Math.min(offset, root.childNodes.length - 1)];
      if (!child) return null;
      return this.textAtDom(child, offset >= root.childNodes.length ? (isText(child) ? child.data.length : child.childNodes.length) : 0);
    }
    const top = topOf(root, node);
    const entry = top ? this.host.placedByDom(top) : undefined;
    if (!entry || entry.doms.length !== 1) return null;
    const blocks = readNodes(entry.doms, root, dialect);
    const point = pointToModel(blocks, node, offset);
    if (!point || point.path[0] !== 0) return null;
    const text = yTextAt(entry.y, point.path.slice(1));
    const shown = textAtPath(blocks, point.path);
    return text && shown ? { shown, text, path: point.path, offset: point.offset } : null;
  }
}

/** The `Y.XmlText` at child `path` under `y`; null when the path leads elsewhere. */
function yTextAt(y: YNode, path: readonly number[]): Y.XmlText | null {
  let node: unknown = y;
  for (const i of path) {
    if (!(node instanceof Y.XmlElement)) return null;
    node = node.get(i);
  }
  return node instanceof Y.XmlText ? node : null;
}
