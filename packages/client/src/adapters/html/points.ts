/**
 * DOM points inside one top-level block ↔ offsets in that block's lines, in `Y.Text` units (a character, an embed
 * and each line's `"\n"` count one). The mapping is the parser's own reading (wave-richtext `parseHtml` and its
 * `onPoint`), so it follows every rule of how the DOM becomes lines (collapsed whitespace, skipped markers, dropped
 * placeholders): the offset of a point is where a character inserted at that point lands, clamped to the end of its
 * line in the block's lines. One parse of the block maps all of its points, in document order, where the offsets
 * never decrease.
 */
import { lineLength, parseHtml, type HtmlDialect, type HtmlNode, type Line, type PointSink } from 'wave-richtext';

export interface DomPoint {
  node: Node;
  offset: number;
}

const ELEMENT = 1;
const TEXT = 3;

function wrap(children: ArrayLike<HtmlNode>): HtmlNode {
  return { nodeType: ELEMENT, nodeName: 'DIV', childNodes: children, getAttribute: () => null, textContent: '' };
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
 * Reads `top` once, calling `visit` with each point the parser reads in `top` (its own and its descendants') and
 * its offset in `lines` (a point in a line past the last one is at the block's last unit), until `visit` returns
 * true. A point's offset depends only on what comes before it, so a caller stops as soon as it has its answer: the
 * cost is the block's part before the point.
 */
function readPoints(top: Node, dialect: HtmlDialect, lines: readonly Line[], visit: (node: Node, offset: number, units: number) => boolean): void {
  const lengths = lines.map(lineLength);
  const starts: number[] = [0];
  for (const n of lengths) starts.push(starts[starts.length - 1]! + n + 1);
  const last = Math.max(0, starts[lines.length]! - 1);
  // The parser reads a parent around `top`; its points (before and after `top`) are in no DOM.
  const parent = wrap([top as unknown as HtmlNode]);
  const onPoint: PointSink = (node, offset, line, unit) =>
    node !== parent && visit(node as unknown as Node, offset, line < lines.length ? starts[line]! + Math.min(unit, lengths[line]!) : last);
  parseHtml(parent, { dialect, newId: () => 'id', onPoint });
}

/**
 * The offset in `top`'s lines of the DOM point (container, offset) inside it. A point inside something the parser
 * does not read (an editor marker, a dropped element) counts as the point before that thing.
 */
export function offsetInBlock(top: Node, container: Node, offset: number, dialect: HtmlDialect, lines: readonly Line[]): number {
  // The point itself, or the point before the outermost ancestor (below `top`) whose content the parser skips.
  let c = container;
  let o = offset;
  const path: DomPoint[] = [{ node: c, offset: o }];
  while (c !== top && c.parentNode) {
    o = Array.prototype.indexOf.call(c.parentNode.childNodes, c) as number;
    c = c.parentNode;
    path.push({ node: c, offset: o });
  }
  const found: Array<number | undefined> = new Array(path.length);
  readPoints(top, dialect, lines, (node, at, units) => {
    for (let k = 0; k < path.length; k++) if (path[k]!.node === node && path[k]!.offset === at) found[k] = units;
    // The point itself comes after its ancestors' points before it: once it is read, nothing after it matters.
    return found[0] !== undefined;
  });
  for (const units of found) if (units !== undefined) return units;
  return Math.max(0, unitsOf(lines) - 1);
}

/**
 * The DOM point of offset `units` in `top`'s lines: of the points at that offset, the first in a text node, which
 * keeps the caret inside the formatting it belongs to; with none (an empty line: `<p><br></p>`, `<li><br></li>`),
 * the first of the deepest, inside the line's own element rather than between blocks (`(ul, 1)`) or after its
 * `<br>`. With no point at that offset, the first past it; with none that far (a block that shows less than its
 * lines), the last point.
 */
export function pointInBlock(top: Node, units: number, dialect: HtmlDialect, lines: readonly Line[]): DomPoint {
  let chosen: DomPoint | null = null;
  let depth = -1;
  let last: DomPoint = { node: top, offset: 0 };
  readPoints(top, dialect, lines, (node, offset, at) => {
    if (at < units) {
      last = { node, offset };
      return false;
    }
    const text = at === units && node.nodeType === TEXT;
    if (text || at > units) {
      if (text || !chosen) chosen = { node, offset };
      return true;
    }
    const d = depthIn(top, node);
    if (d > depth) [chosen, depth] = [{ node, offset }, d];
    return false;
  });
  return chosen ?? last;
}

/** How many parents up from `node` `top` is (0: `node` is `top`). */
function depthIn(top: Node, node: Node): number {
  let depth = 0;
  for (let n: Node | null = node; n && n !== top; n = n.parentNode) depth++;
  return depth;
}
