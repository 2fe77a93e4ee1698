/**
 * The presence overlay: one `div.wave-presence` appended to the page's body, holding a clip box over the editor's
 * visible content (carets, selections, pointers) and the avatar bar. Nothing is inserted into the editor, so its
 * layout and its content are never touched. Positions are set through CSSOM (`el.style.left = …`), which a strict
 * CSP (`style-src 'self'`) allows.
 */
import type { Rect } from './types.js';

export class Layer {
  readonly root: HTMLDivElement;
  readonly clip: HTMLDivElement;
  private origin = { x: 0, y: 0 };

  constructor(doc: Document) {
    this.root = doc.createElement('div');
    this.root.className = 'wave-presence';
    this.clip = doc.createElement('div');
    this.clip.className = 'wave-clip';
    this.root.appendChild(this.clip);
    doc.body.appendChild(this.root);
  }

  /** Reads where the overlay's (0, 0) is in the viewport; call once per frame before `place`. */
  measure(): void {
    const r = this.root.getBoundingClientRect();
    this.origin = { x: r.left, y: r.top };
  }

  /** Puts `el` (a child of the root) at the viewport rectangle `r`. */
  place(el: HTMLElement, r: Rect, size = true): void {
    setBox(el, r.left - this.origin.x, r.top - this.origin.y, size ? r : null);
  }

  /** Puts the clip box over `viewport`; returns the function mapping viewport rectangles into it. */
  placeClip(viewport: Rect): (el: HTMLElement, r: Rect, size?: boolean) => void {
    this.place(this.clip, viewport);
    return (el, r, size = true) => setBox(el, r.left - viewport.left, r.top - viewport.top, size ? r : null);
  }

  destroy(): void {
    this.root.remove();
  }
}

function setBox(el: HTMLElement, x: number, y: number, size: Rect | null): void {
  el.style.transform = `translate(${round(x)}px, ${round(y)}px)`;
  if (size) {
    el.style.width = `${round(size.width)}px`;
    el.style.height = `${round(size.height)}px`;
  }
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}
