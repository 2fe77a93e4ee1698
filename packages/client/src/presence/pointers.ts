/**
 * Remote pointers: each user's mouse over the editor, drawn with the configured shape and their name; a click is
 * a short ripple. Shapes are SVG built with DOM calls (no markup strings); their colour is `currentColor`.
 */
import type { Point, Rect } from './types.js';

export type PointerShape = 'arrow' | 'hand' | 'pointer' | 'pointerSolid';

export interface PointerEntry {
  clientId: number;
  label: string;
  color: string;
  /** Viewport coordinates of the hot spot. */
  at: Point;
  /** Increments on every click of that user. */
  clicks: number;
}

const SVG = 'http://www.w3.org/2000/svg';
const HAND = 'M9 11V4.5a1.5 1.5 0 0 1 3 0V10h.5V8.5a1.5 1.5 0 0 1 3 0V10h.5V9.5a1.5 1.5 0 0 1 3 0V15c0 3.3-2.2 6-5.5 6h-1c-2 0-3.3-.8-4.4-2.3L5 14.6a1.4 1.4 0 0 1 2.1-1.9L9 14.5Z';
const OPEN_HAND = 'M7 12V6.5a1.5 1.5 0 0 1 3 0V11h.5V4.5a1.5 1.5 0 0 1 3 0V11h.5V5.5a1.5 1.5 0 0 1 3 0V11h.5V8.5a1.5 1.5 0 0 1 3 0V15c0 3.3-2.7 6-6 6h-1.5c-2 0-3.3-.8-4.4-2.3L3.5 14a1.4 1.4 0 0 1 2.1-1.9L7 13.5Z';
/** Path, fill, stroke and hot spot (in the 24×24 box) of each shape. */
const SHAPES: Record<PointerShape, { d: string; fill: string; stroke: string; hot: Point }> = {
  arrow: { d: 'M4 2.5v17l4.6-4.3 3 6.6 2.9-1.3-3-6.5H18Z', fill: 'currentColor', stroke: '#fff', hot: { x: 4, y: 2.5 } },
  hand: { d: OPEN_HAND, fill: '#fff', stroke: 'currentColor', hot: { x: 12, y: 9 } },
  pointer: { d: HAND, fill: '#fff', stroke: 'currentColor', hot: { x: 10.5, y: 3 } },
  pointerSolid: { d: HAND, fill: 'currentColor', stroke: '#fff', hot: { x: 10.5, y: 3 } },
};

interface Drawn {
  el: HTMLDivElement;
  label: HTMLSpanElement;
  clicks: number;
}

/** How long a click ripple lasts (matches the CSS animation). */
const RIPPLE_MS = 600;

export class Pointers {
  private drawn = new Map<number, Drawn>();
  /** Ripples on screen and when each ends: removed by a timer, and by the next render if that timer was late. */
  private ripples: Array<{ el: HTMLElement; ends: number }> = [];

  constructor(private readonly parent: HTMLElement, private readonly shape: PointerShape) {}

  render(entries: PointerEntry[], place: (el: HTMLElement, r: Rect, size?: boolean) => void): void {
    const seen = new Set<number>();
    this.sweep();
    for (const entry of entries) {
      seen.add(entry.clientId);
      let d = this.drawn.get(entry.clientId);
      if (!d) {
        d = this.create(entry.clientId);
        d.clicks = entry.clicks;
      }
      if (d.label.textContent !== entry.label) d.label.textContent = entry.label;
      d.el.style.color = entry.color;
      d.label.style.backgroundColor = entry.color;
      // The element's origin is the hot spot; the CSS shifts the shape by its hot spot.
      place(d.el, { left: entry.at.x, top: entry.at.y, width: 0, height: 0 }, false);
      if (entry.clicks !== d.clicks) {
        d.clicks = entry.clicks;
        this.ripple(entry, place);
      }
    }
    for (const [id, d] of this.drawn) {
      if (seen.has(id)) continue;
      d.el.remove();
      this.drawn.delete(id);
    }
  }

  clear(): void {
    for (const d of this.drawn.values()) d.el.remove();
    this.drawn.clear();
    for (const r of this.ripples) r.el.remove();
    this.ripples = [];
  }

  private ripple(entry: PointerEntry, place: (el: HTMLElement, r: Rect, size?: boolean) => void): void {
    const ripple = this.parent.ownerDocument.createElement('div');
    ripple.className = 'wave-ripple';
    ripple.style.color = entry.color;
    this.parent.appendChild(ripple);
    place(ripple, { left: entry.at.x, top: entry.at.y, width: 0, height: 0 }, false);
    this.ripples.push({ el: ripple, ends: Date.now() + RIPPLE_MS });
    ripple.addEventListener('animationend', () => ripple.remove());
    setTimeout(() => this.sweep(), RIPPLE_MS + 50);
  }

  private sweep(): void {
    const now = Date.now();
    this.ripples = this.ripples.filter((r) => {
      if (r.el.isConnected && r.ends > now) return true;
      r.el.remove();
      return false;
    });
  }

  private create(clientId: number): Drawn {
    const doc = this.parent.ownerDocument;
    const el = doc.createElement('div');
    el.className = `wave-pointer wave-pointer--${this.shape}`;
    el.dataset['waveClient'] = String(clientId);
    const spec = SHAPES[this.shape];
    const svg = doc.createElementNS(SVG, 'svg');
    svg.setAttribute('class', 'wave-pointer-shape');
    svg.setAttribute('viewBox', '0 0 24 24');
    svg.setAttribute('width', '24');
    svg.setAttribute('height', '24');
    svg.setAttribute('aria-hidden', 'true');
    const path = doc.createElementNS(SVG, 'path');
    path.setAttribute('d', spec.d);
    path.setAttribute('fill', spec.fill);
    path.setAttribute('stroke', spec.stroke);
    path.setAttribute('stroke-width', '1.5');
    path.setAttribute('stroke-linejoin', 'round');
    svg.appendChild(path);
    el.appendChild(svg);
    const label = doc.createElement('span');
    label.className = 'wave-pointer-label';
    el.appendChild(label);
    this.parent.appendChild(el);
    const d: Drawn = { el, label, clicks: 0 };
    this.drawn.set(clientId, d);
    return d;
  }
}
