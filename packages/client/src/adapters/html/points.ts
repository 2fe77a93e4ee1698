/**
 * DOM points inside one top-level block ↔ offsets in that block's lines, in `Y.Text` units (a character, an embed
 * and each line's `"\n"` count one). The mapping is the parser's own reading (wave-richtext `parseHtml`), so it
 * follows every rule of how the DOM becomes lines (collapsed whitespace, skipped markers, dropped placeholders):
 * the offset of a point is where a marker character, put at that point, lands in the parsed lines. The reverse
 * is a binary search over the block's points, the forward mapping being monotonic in document order.
 */
import { lineLength, parseHtml, type HtmlDialect, type HtmlNode, type Line } from 'wave-richtext';

/** A private-use character nobody types, as the marker. */
const MARK = '\ue000';

export interface DomPoint {
  node: Node;
  offset: number;
}

const ELEMENT = 1;
const TEXT = 3;

function wrap(children: ArrayLike<HtmlNode>): HtmlNode {
  return { nodeType: ELEMENT, nodeName: 'DIV', childNodes: children, getAttribute: () => null, textContent: '' };
}

/** An element as the parser sees it, with other children. */
function withChildren(el: Element, children: HtmlNode[]): HtmlNode {
  return {
    nodeType: ELEMENT,
    nodeName: el.nodeName,
    childNodes: children,
    getAttribute: (name) => el.getAttribute(name),
    textContent: el.textContent,
  };
}

/** `top` cut at the point (container, offset), the marker in place of everything after it. */
function cut(top: Node, container: Node, offset: number): HtmlNode {
  if (top === container) {
    if (top.nodeType === TEXT) return { nodeType: TEXT, nodeName: '#text', childNodes: [], data: (top as Text).data.slice(0, offset) + MARK };
    const kids = Array.from(top.childNodes).slice(0, offset) as unknown as HtmlNode[];
    kids.push({ nodeType: TEXT, nodeName: '#text', childNodes: [], data: MARK });
    return withChildren(top as Element, kids);
  }
  const kids: HtmlNode[] = [];
  for (let c = top.firstChild; c; c = c.nextSibling) {
    if (c === container || c.contains(container)) {
      kids.push(cut(c, container, offset));
      break;
    }
    kids.push(c as unknown as HtmlNode);
  }
  return withChildren(top as Element, kids);
}

/** The lines one top-level node shows. */
export function linesOfNode(top: Node, dialect: HtmlDialect, newId?: (kind: 'row' | 'cell') => string): Line[] {
  return parseHtml(wrap([top as unknown as HtmlNode]), newId ? { dialect, newId } : { dialect });
}

/** Total length of `lines` in units, each line with its `"\n"`. */
export function unitsOf(lines: readonly Line[]): number {
  let n = 0;
  for (const l of lines) n += lineLength(l) + 1;
  return n;
}

/**
 * The offset in `top`'s lines of the DOM point (container, offset) inside it. A point inside something the parser
 * skips (an editor marker) counts as the point before that thing.
 */
export function offsetInBlock(top: Node, container: Node, offset: number, dialect: HtmlDialect, lines: readonly Line[]): number {
  let c = container;
  let o = offset;
  for (;;) {
    const found = findMark(parseHtml(wrap([cut(top, c, o)]), { dialect, newId: () => 'id' }), lines);
    if (found !== null || c === top || !c.parentNode) return found ?? unitsOf(lines) - 1;
    o = Array.prototype.indexOf.call(c.parentNode.childNodes, c) as number;
    c = c.parentNode;
  }
}

/** Where the marker is, clamped to the end of its line in `lines` (the block without the marker). */
function findMark(parsed: readonly Line[], lines: readonly Line[]): number | null {
  let units = 0;
  for (let i = 0; i < parsed.length; i++) {
    let k = 0;
    for (const op of parsed[i]!.ops) {
      if (typeof op.insert === 'string') {
        const at = op.insert.indexOf(MARK);
        if (at >= 0) {
          const real = lines[i];
          return real ? units + Math.min(k + at, lineLength(real)) : Math.max(0, unitsOf(lines) - 1);
        }
        k += op.insert.length;
      } else k++;
    }
    units += lines[i] ? lineLength(lines[i]!) + 1 : 0;
  }
  return null;
}

/** Every DOM point in `top` in document order (text offsets and element child boundaries), editor UI skipped. */
function pointsOf(node: Node, dialect: HtmlDialect, out: DomPoint[]): DomPoint[] {
  if (node.nodeType === TEXT) {
    for (let i = 0; i <= (node as Text).data.length; i++) out.push({ node, offset: i });
  } else if (node.nodeType === ELEMENT && !dialect.skip(node as unknown as HtmlNode)) {
    const kids = node.childNodes;
    for (let i = 0; i <= kids.length; i++) {
      out.push({ node, offset: i });
      if (i < kids.length) pointsOf(kids[i]!, dialect, out);
    }
  }
  return out;
}

/** The DOM point of offset `units` in `top`'s lines; a point in a text node where there is one. */
export function pointInBlock(top: Node, units: number, dialect: HtmlDialect, lines: readonly Line[]): DomPoint {
  const points = pointsOf(top, dialect, []);
  if (top.nodeType === ELEMENT) points.shift(); // (top, 0) is the block's start as much as its first inner point
  let lo = 0;
  let hi = points.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (offsetInBlock(top, points[mid]!.node, points[mid]!.offset, dialect, lines) < units) lo = mid + 1;
    else hi = mid;
  }
  // Among the points at this offset, a text node's keeps the caret inside the formatting it belongs to.
  for (let k = lo; k < Math.min(points.length, lo + 6); k++) {
    const p = points[k]!;
    if (p.node.nodeType === TEXT && offsetInBlock(top, p.node, p.offset, dialect, lines) === units) return p;
    if (p.node.nodeType === TEXT) break;
  }
  return points[lo] ?? { node: top, offset: 0 };
}
