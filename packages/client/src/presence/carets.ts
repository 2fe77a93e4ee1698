/**
 * Remote carets and selections: per user a caret line in their colour with a name label, and translucent boxes
 * over the selected text. The label shows while the user is "active" (moved in the last ~2 s), on hover, or
 * always with `cursorAlwaysOn`. Hover is detected from the editor's own mousemove, so the overlay never takes
 * pointer events (clicks always reach the editor).
 */
import type { Rect, SelectionRects } from './types.js';

export interface CaretEntry {
  clientId: number;
  label: string;
  color: string;
  rects: SelectionRects;
  active: boolean;
}

interface Drawn {
  group: HTMLDivElement;
  caret: HTMLDivElement;
  label: HTMLSpanElement;
  boxes: HTMLDivElement[];
  rect: Rect | null;
}

/** How near (px) the mouse must be to a caret for its label to show. */
const HOVER_PX = 6;
/** Space the label needs above the caret; nearer the top of the editor it goes below. */
const LABEL_ROOM = 20;

export class Carets {
  private drawn = new Map<number, Drawn>();
  private hovered: number | null = null;

  constructor(private readonly parent: HTMLElement) {}

  render(entries: CaretEntry[], viewport: Rect, place: (el: HTMLElement, r: Rect, size?: boolean) => void): void {
    const seen = new Set<number>();
    for (const entry of entries) {
      seen.add(entry.clientId);
      const d = this.drawn.get(entry.clientId) ?? this.create(entry.clientId);
      if (d.label.textContent !== entry.label) d.label.textContent = entry.label;
      d.group.style.color = entry.color;
      d.label.style.backgroundColor = entry.color;
      d.group.classList.toggle('wave-cursor--active', entry.active);
      d.group.classList.toggle('wave-cursor--hover', this.hovered === entry.clientId);
      const caret = entry.rects.caret;
      d.rect = caret;
      d.caret.classList.toggle('wave-hidden', caret === null);
      if (caret) {
        place(d.caret, { ...caret, width: 2, left: caret.left - 1 });
        d.caret.classList.toggle('wave-caret--below', caret.top - viewport.top < LABEL_ROOM);
      }
      const boxes = entry.rects.selection;
      while (d.boxes.length > boxes.length) d.boxes.pop()!.remove();
      while (d.boxes.length < boxes.length) {
        const box = d.group.ownerDocument.createElement('div');
        box.className = 'wave-selection';
        d.group.insertBefore(box, d.caret);
        d.boxes.push(box);
      }
      boxes.forEach((r, i) => place(d.boxes[i]!, r));
    }
    for (const [id, d] of this.drawn) {
      if (seen.has(id)) continue;
      d.group.remove();
      this.drawn.delete(id);
    }
  }

  /** The mouse is at (x, y) (viewport): the caret near it shows its label. Returns true when that changed. */
  hover(x: number, y: number): boolean {
    let found: number | null = null;
    for (const [id, d] of this.drawn) {
      const r = d.rect;
      if (r && Math.abs(x - r.left) <= HOVER_PX && y >= r.top - 2 && y <= r.top + r.height + 2) found = id;
    }
    if (found === this.hovered) return false;
    this.hovered = found;
    for (const [id, d] of this.drawn) d.group.classList.toggle('wave-cursor--hover', id === found);
    return true;
  }

  clear(): void {
    for (const d of this.drawn.values()) d.group.remove();
    this.drawn.clear();
  }

  private create(clientId: number): Drawn {
    const doc = this.parent.ownerDocument;
    const group = doc.createElement('div');
    group.className = 'wave-cursor';
    group.dataset['waveClient'] = String(clientId);
    const caret = doc.createElement('div');
    caret.className = 'wave-caret';
    const label = doc.createElement('span');
    label.className = 'wave-caret-label';
    caret.appendChild(label);
    group.appendChild(caret);
    this.parent.appendChild(group);
    const d: Drawn = { group, caret, label, boxes: [], rect: null };
    this.drawn.set(clientId, d);
    return d;
  }
}
