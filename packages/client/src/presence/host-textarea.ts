/**
 * Presence for `app: 'text'`. A textarea exposes no geometry for its characters, so a hidden "mirror" div with the
 * textarea's computed text styles and width lays out the same text; a DOM range in the mirror gives the caret and
 * selection rectangles, shifted by the textarea's position and scroll.
 */
import * as Y from 'yjs';
import { TEXT_TYPE } from 'wave-protocol';
import { caretRect, clientBox, rangeRects } from './geometry.js';
import type { PresenceHost, Rect, RelSelection, SelectionRects } from './types.js';
import { absoluteIndex, relativeAt, type IndexMap } from './text-positions.js';

/** Computed properties that decide where text wraps and how high lines are. */
const COPIED = [
  'direction', 'boxSizing', 'borderTopWidth', 'borderRightWidth', 'borderBottomWidth', 'borderLeftWidth', 'borderStyle',
  'paddingTop', 'paddingRight', 'paddingBottom', 'paddingLeft', 'fontStyle', 'fontVariant', 'fontWeight', 'fontStretch',
  'fontSize', 'fontSizeAdjust', 'lineHeight', 'fontFamily', 'fontFeatureSettings', 'fontKerning', 'textAlign', 'textTransform', 'textIndent',
  'letterSpacing', 'wordSpacing', 'tabSize', 'whiteSpace', 'wordBreak', 'overflowWrap',
] as const;

/** `positions`: the adapter's mapping between the textarea's value and the `Y.Text` (its plain view). */
export function textareaPresence(el: HTMLTextAreaElement, positions: IndexMap): PresenceHost {
  return new TextareaPresence(el, positions);
}

class TextareaPresence implements PresenceHost {
  private mirror: HTMLDivElement | null = null;
  private text: Text | null = null;

  constructor(private readonly el: HTMLTextAreaElement, private readonly positions: IndexMap) {}

  get container(): HTMLElement {
    return this.el;
  }

  get surface(): HTMLElement {
    return this.el;
  }

  localSelection(doc: Y.Doc): RelSelection | null {
    const el = this.el;
    if (el.ownerDocument.activeElement !== el) return null;
    const backward = el.selectionDirection === 'backward';
    const ytext = doc.getText(TEXT_TYPE);
    const anchor = this.positions.toY(backward ? el.selectionEnd : el.selectionStart);
    const head = this.positions.toY(backward ? el.selectionStart : el.selectionEnd);
    return { anchor: relativeAt(ytext, anchor), head: relativeAt(ytext, head) };
  }

  onSelectionChange(fn: () => void): () => void {
    const el = this.el;
    const events = ['select', 'keyup', 'mouseup', 'input', 'focus'] as const;
    const onDocSelection = (): void => {
      if (el.ownerDocument.activeElement === el) fn();
    };
    for (const name of events) el.addEventListener(name, fn);
    el.ownerDocument.addEventListener('selectionchange', onDocSelection);
    return () => {
      for (const name of events) el.removeEventListener(name, fn);
      el.ownerDocument.removeEventListener('selectionchange', onDocSelection);
    };
  }

  rects(doc: Y.Doc, sel: RelSelection): SelectionRects | null {
    const ytext = doc.getText(TEXT_TYPE);
    const yAnchor = absoluteIndex(doc, ytext, sel.anchor);
    const yHead = absoluteIndex(doc, ytext, sel.head);
    if (yAnchor === null || yHead === null) return null;
    const anchor = this.positions.toEditor(yAnchor);
    const head = this.positions.toEditor(yHead);
    const value = this.el.value;
    const at = (i: number): number => Math.max(0, Math.min(i, value.length));
    const { text, mirror } = this.layout(value);
    const box = mirror.getBoundingClientRect();
    const shift = this.shift(box);
    const range = mirror.ownerDocument.createRange();
    range.setStart(text, at(head));
    range.collapse(true);
    const caret = caretRect(range) ?? lineStartCaret(text, at(head));
    let selection: Rect[] = [];
    if (anchor !== head) {
      range.setStart(text, at(Math.min(anchor, head)));
      range.setEnd(text, at(Math.max(anchor, head)));
      selection = rangeRects(range).map(shift);
    }
    return { caret: caret ? shift(caret) : null, selection };
  }

  viewport(): Rect {
    return clientBox(this.el);
  }

  contentOrigin() {
    const box = clientBox(this.el);
    return { x: box.left - this.el.scrollLeft, y: box.top - this.el.scrollTop };
  }

  toTop(p: { x: number; y: number }) {
    return p;
  }

  scrollTargets(): EventTarget[] {
    return [this.el];
  }

  destroy(): void {
    this.mirror?.remove();
    this.mirror = null;
  }

  /** Mirror coordinates → viewport coordinates: same padding-box origin, minus the textarea's scroll. */
  private shift(mirrorBox: DOMRect): (r: Rect) => Rect {
    const box = clientBox(this.el);
    const mirrorLeft = mirrorBox.left + (this.mirror?.clientLeft ?? 0);
    const mirrorTop = mirrorBox.top + (this.mirror?.clientTop ?? 0);
    return (r) => ({
      left: r.left - mirrorLeft + box.left - this.el.scrollLeft,
      top: r.top - mirrorTop + box.top - this.el.scrollTop,
      width: r.width,
      height: r.height,
    });
  }

  private layout(value: string): { text: Text; mirror: HTMLDivElement } {
    const doc = this.el.ownerDocument;
    if (!this.mirror || !this.mirror.isConnected) {
      this.mirror = doc.createElement('div');
      this.mirror.className = 'wave-mirror';
      this.mirror.setAttribute('aria-hidden', 'true');
      this.text = doc.createTextNode('');
      this.mirror.appendChild(this.text);
      // A zero-width space after the text gives a trailing empty line a line box to measure.
      this.mirror.appendChild(doc.createTextNode('\u200b'));
      doc.body.appendChild(this.mirror);
    }
    const mirror = this.mirror;
    const style = doc.defaultView!.getComputedStyle(this.el);
    for (const key of COPIED) mirror.style[key] = style[key];
    // Same width for the text as the textarea's, whose vertical scrollbar (if any) takes room.
    mirror.style.boxSizing = 'content-box';
    const padX = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
    mirror.style.width = `${Math.max(0, this.el.clientWidth - padX)}px`;
    mirror.style.borderWidth = '0';
    mirror.style.whiteSpace = 'pre-wrap';
    mirror.style.overflowWrap = style.overflowWrap === 'normal' ? 'break-word' : style.overflowWrap;
    if (this.text!.data !== value) this.text!.data = value;
    return { text: this.text!, mirror };
  }
}

/**
 * A caret at the start of an empty line, where a collapsed range has no box in Chromium: the left edge of the
 * character after it, that line's own "\n" (or the mirror's trailing zero-width space after a final "\n").
 */
function lineStartCaret(text: Text, at: number): Rect | null {
  const range = text.ownerDocument.createRange();
  if (at < text.length) range.setStart(text, at);
  else range.setStart(text.nextSibling!, 0);
  range.setEnd(range.startContainer, range.startOffset + 1);
  return caretRect(range);
}
