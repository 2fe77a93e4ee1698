/**
 * The local selection as text indices (through the line index) and back, and the diff bounds it gives a local edit.
 */
import { EDITOR_DIALECT, type EditBounds, type Line } from 'wave-richtext';
import { topOf } from './dom.js';
import { LineIndex } from './index-map.js';
import { unitsOf } from './points.js';

export interface Indices {
  a: number;
  b: number;
}

/** The DOM selection as text indices, when it is in `root` and touches `region` (or lies between its blocks). */
export function selectionIn(root: HTMLElement, index: LineIndex, region: readonly Node[]): Indices | null {
  const sel = root.ownerDocument.getSelection();
  if (!sel?.anchorNode || !sel.focusNode || !root.contains(sel.anchorNode) || !root.contains(sel.focusNode)) return null;
  const tops = [topOf(root, sel.anchorNode), topOf(root, sel.focusNode)];
  if (!tops.some((t) => t === null || region.includes(t)) && sel.anchorNode !== root && sel.focusNode !== root) return null;
  const a = index.indexOf(sel.anchorNode, sel.anchorOffset);
  const b = index.indexOf(sel.focusNode, sel.focusOffset);
  return a === null || b === null ? null : { a, b };
}

/** Puts the DOM selection at text indices `sel`. */
export function restoreSelection(root: HTMLElement, index: LineIndex | null, sel: Indices): void {
  const a = index?.pointOf(sel.a);
  const b = sel.b === sel.a ? a : index?.pointOf(sel.b);
  if (!a || !b) return;
  try {
    root.ownerDocument.getSelection()?.setBaseAndExtent(a.node, a.offset, b.node, b.offset);
  } catch {
    /* a point the browser refuses: the selection stays where the patch left it */
  }
}

/** Diff bounds from the selection an input replaced (`from`..`to`, text indices), when it lies in lines `first`..`last`. */
export function inputBounds(lines: readonly Line[], first: number, last: number, sel: { from: number; to: number }): EditBounds {
  const start = unitsOf(lines.slice(0, first));
  const end = start + unitsOf(lines.slice(first, last));
  if (sel.from < start || sel.to > end) return {};
  return { maxPrefix: sel.from - start, maxSuffix: end - sel.to };
}

/**
 * Diff bounds for a change no `beforeinput` announced (an editor command: TinyMCE handles Backspace over a selection
 * across blocks and Enter itself): it changed lines `first`.. by `grown` units to `size` units and left the caret,
 * collapsed, at the end of what it inserted (`grown` > 0) or where it deleted (`grown` < 0). Without bounds the
 * diff keeps the longest common start first, which can pair kept text with equal deleted text: deleting
 * ` seed1 b seed2` from `x seed1 b seed2 seed3` would keep the `seed` of `seed1` and the `3` of `seed3`, and a
 * peer's concurrent typing inside the deleted range would land between them. Bounds that a pure insertion or
 * deletion at the caret does not explain are set aside by `replaceLines`. `nodes`, `counts`, `lines`: the index as
 * the DOM is now.
 */
export function insertionBounds(root: HTMLElement, nodes: Node[], counts: number[], lines: Line[], first: number, grown: number, size: number): EditBounds {
  const sel = root.ownerDocument.getSelection();
  if (grown === 0 || !sel?.anchorNode || !sel.isCollapsed) return {};
  const caret = new LineIndex(root, nodes, counts, lines, EDITOR_DIALECT).indexOf(sel.anchorNode, sel.anchorOffset);
  const start = unitsOf(lines.slice(0, first));
  const inserted = Math.max(grown, 0);
  if (caret === null || caret - inserted < start || caret > start + size) return {};
  return { maxPrefix: caret - inserted - start, maxSuffix: start + size - caret };
}
