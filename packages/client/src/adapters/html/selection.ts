/**
 * Mapping between DOM points (node, offset) and model points (path of an `MText` inside a block, offset in it),
 * using the DOM provenance the reader records. The binding turns model points into Yjs relative positions, which
 * survive concurrent edits, so a local selection is kept through remote patches.
 */
import type { MNode, MText } from './model.js';
import { isText } from './dom.js';

export interface TextAt {
  text: MText;
  path: number[];
}

/** Every `MText` in `nodes`, in document order, with its child-index path. */
export function textsOf(nodes: readonly MNode[], prefix: number[] = [], out: TextAt[] = []): TextAt[] {
  nodes.forEach((node, i) => {
    if (node.kind === 'text') out.push({ text: node, path: [...prefix, i] });
    else textsOf(node.children, [...prefix, i], out);
  });
  return out;
}

export function textAtPath(nodes: readonly MNode[], path: readonly number[]): MText | null {
  let list = nodes;
  let node: MNode | undefined;
  for (const i of path) {
    node = list[i];
    if (!node) return null;
    if (node.kind === 'el') list = node.children;
  }
  return node?.kind === 'text' ? node : null;
}

/** True when the DOM point (container, offset) is at or before the start of `node`. */
function atOrBefore(container: Node, offset: number, node: Node): boolean {
  const doc = container.ownerDocument ?? (container as Document);
  const range = doc.createRange();
  try {
    range.setStart(container, offset);
    range.collapse(true);
    return range.comparePoint(node, 0) >= 0;
  } catch {
    return false;
  } finally {
    range.detach();
  }
}

function keptBefore(map: number[] | null, domOffset: number, length: number): number {
  if (!map) return Math.max(0, Math.min(domOffset, length));
  let n = 0;
  while (n < map.length && map[n]! < domOffset) n++;
  return n;
}

/** The model point of a DOM point inside `blocks` (read with provenance); null when `blocks` hold no text. */
export function pointToModel(blocks: readonly MNode[], container: Node, offset: number): { path: number[]; offset: number } | null {
  const all = textsOf(blocks);
  if (all.length === 0) return null;
  if (isText(container)) {
    for (const t of all) {
      for (const s of t.text.src ?? []) {
        if (s.node === container) return { path: t.path, offset: s.start + keptBefore(s.map, offset, s.length) };
      }
    }
  }
  // The nearest element that directly holds text decides which text run the point is in.
  let el: Node | null = isText(container) ? container.parentNode : container;
  while (el) {
    const owned = all.filter((t) => t.text.owner === el);
    if (owned.length > 0) return pickIn(owned, container, offset);
    el = el.parentNode;
  }
  return pickIn(all, container, offset);
}

function pickIn(texts: readonly TextAt[], container: Node, offset: number): { path: number[]; offset: number } {
  for (const t of texts) {
    for (const s of t.text.src ?? []) {
      if (atOrBefore(container, offset, s.node as Node)) return { path: t.path, offset: s.start };
    }
  }
  const last = texts[texts.length - 1]!;
  return { path: last.path, offset: length(last.text) };
}

function length(text: MText): number {
  let n = 0;
  for (const op of text.ops) n += typeof op.insert === 'string' ? op.insert.length : 1;
  return n;
}

/** The DOM point of a model point inside `blocks` (read with provenance from the live DOM). */
export function modelToPoint(blocks: readonly MNode[], path: readonly number[], offset: number): { node: Node; offset: number } | null {
  const text = textAtPath(blocks, path);
  if (!text) return null;
  const sources = text.src ?? [];
  for (const s of sources) {
    const node = s.node as Node;
    if (isText(node)) {
      if (offset >= s.start && offset <= s.start + s.length) {
        const k = offset - s.start;
        const dom = s.map ? (k < s.map.length ? s.map[k]! : (s.map[s.map.length - 1] ?? -1) + 1) : k;
        return { node, offset: Math.min(dom, node.data.length) };
      }
    } else if (offset === s.start && node.parentNode) {
      return { node: node.parentNode, offset: indexOf(node) };
    }
  }
  const last = sources[sources.length - 1];
  if (last && offset >= last.start + last.length) {
    const node = last.node as Node;
    if (isText(node)) return { node, offset: node.data.length };
    if (node.parentNode) return { node: node.parentNode, offset: indexOf(node) + 1 };
  }
  const owner = text.owner as Node | undefined;
  return owner ? { node: owner, offset: 0 } : null;
}

function indexOf(node: Node): number {
  let i = 0;
  for (let c = node.previousSibling; c; c = c.previousSibling) i++;
  return i;
}
