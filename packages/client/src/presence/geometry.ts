/** Small rectangle helpers for the presence UI (viewport coordinates). */
import type { Point, Rect } from './types.js';

export function toRect(r: { left: number; top: number; width: number; height: number }): Rect {
  return { left: r.left, top: r.top, width: r.width, height: r.height };
}

export function intersect(a: Rect, b: Rect): Rect {
  const left = Math.max(a.left, b.left);
  const top = Math.max(a.top, b.top);
  const right = Math.min(a.left + a.width, b.left + b.width);
  const bottom = Math.min(a.top + a.height, b.top + b.height);
  return { left, top, width: Math.max(0, right - left), height: Math.max(0, bottom - top) };
}

export function offset(r: Rect, by: Point): Rect {
  return { left: r.left + by.x, top: r.top + by.y, width: r.width, height: r.height };
}

/** The padding box of `el` (inside borders and scrollbars), in its own document's viewport. */
export function clientBox(el: Element): Rect {
  const r = el.getBoundingClientRect();
  return { left: r.left + el.clientLeft, top: r.top + el.clientTop, width: el.clientWidth, height: el.clientHeight };
}

/** The rectangles of a DOM range, merged per line box and without the zero-width ones a range reports at line ends. */
export function rangeRects(range: Range): Rect[] {
  const out: Rect[] = [];
  for (const r of Array.from(range.getClientRects())) {
    if (r.width < 0.5 && r.height < 0.5) continue;
    const same = out.find((o) => Math.abs(o.top - r.top) < 2 && Math.abs(o.height - r.height) < 2 && r.left <= o.left + o.width + 1 && r.left + r.width >= o.left - 1);
    if (same) {
      const right = Math.max(same.left + same.width, r.right);
      same.left = Math.min(same.left, r.left);
      same.width = right - same.left;
    } else if (r.width >= 0.5) out.push(toRect(r));
  }
  return out;
}

/** The caret rectangle of a collapsed DOM range (a 0-width rectangle of the line's height), or null. */
export function caretRect(range: Range): Rect | null {
  const rects = Array.from(range.getClientRects());
  const r = rects[rects.length - 1] ?? range.getBoundingClientRect();
  if (!r || (r.height === 0 && r.top === 0 && r.left === 0)) return null;
  return { left: r.left, top: r.top, width: 0, height: r.height };
}
