/**
 * parse5 (the WHATWG HTML parser, as browsers parse) behind the parser's `HtmlNode` interface, and checks of HTML
 * well-formedness for the tests.
 */
import { parseFragment } from 'parse5';
import type { DefaultTreeAdapterMap } from 'parse5';
import { parseHtml, type HtmlNode, type Line, type ParseOptions } from '../../src/index.ts';

type P5Node = DefaultTreeAdapterMap['node'];

/** A parse5 node seen through `HtmlNode`. */
function adapt(node: P5Node): HtmlNode {
  const isText = node.nodeName === '#text';
  const isElement = 'tagName' in node;
  const attrs = isElement ? (node as DefaultTreeAdapterMap['element']).attrs : [];
  const children = 'childNodes' in node ? (node as DefaultTreeAdapterMap['parentNode']).childNodes : [];
  const textOf = (n: P5Node): string =>
    n.nodeName === '#text' ? (n as DefaultTreeAdapterMap['textNode']).value : 'childNodes' in n ? (n as DefaultTreeAdapterMap['parentNode']).childNodes.map(textOf).join('') : '';
  let adapted: HtmlNode[] | null = null;
  return {
    nodeType: isText ? 3 : isElement ? 1 : node.nodeName === '#document-fragment' ? 11 : 8,
    nodeName: isElement ? (node as DefaultTreeAdapterMap['element']).tagName.toUpperCase() : node.nodeName,
    get childNodes() {
      adapted ??= children.map(adapt);
      return adapted;
    },
    getAttribute: (name: string) => attrs.find((a) => a.name === name)?.value ?? null,
    data: isText ? (node as DefaultTreeAdapterMap['textNode']).value : undefined,
    get textContent() {
      return textOf(node);
    },
  };
}

/** The root of `html` parsed as a `<body>` fragment. */
export function htmlRoot(html: string): HtmlNode {
  return adapt(parseFragment(html) as P5Node);
}

/** Lines of `html`, ids numbered in order of appearance (r1, r2…, c1…) so results are deterministic. */
export function linesOf(html: string, options: ParseOptions = {}): Line[] {
  let n = 0;
  return parseHtml(htmlRoot(html), { newId: (kind) => `${kind[0]}${++n}`, ...options });
}

/** Element tags of `html` in document order as parsed, for structure checks. */
export function elementTree(html: string): P5Node {
  return parseFragment(html) as P5Node;
}

/**
 * Row widths (grid slots, colspan/rowspan counted) of every table in `html`, as parsed by a browser's algorithm.
 */
export function tableWidths(html: string): number[][] {
  const out: number[][] = [];
  const visit = (node: P5Node) => {
    if ('tagName' in node && node.tagName === 'table') {
      const rows: P5Node[] = [];
      const collect = (n: P5Node) => {
        if ('tagName' in n && n.tagName === 'tr') rows.push(n);
        else if ('childNodes' in n && !('tagName' in n && n.tagName === 'table' && n !== node)) (n as DefaultTreeAdapterMap['parentNode']).childNodes.forEach(collect);
      };
      (node as DefaultTreeAdapterMap['element']).childNodes.forEach(collect);
      const occupied = rows.map(() => new Set<number>());
      rows.forEach((tr, r) => {
        let col = 0;
        for (const td of (tr as DefaultTreeAdapterMap['element']).childNodes) {
          if (!('tagName' in td) || (td.tagName !== 'td' && td.tagName !== 'th')) continue;
          const span = (name: string) => Number(td.attrs.find((a) => a.name === name)?.value ?? '1') || 1;
          while (occupied[r]!.has(col)) col++;
          for (let dr = 0; dr < span('rowspan') && r + dr < rows.length; dr++) for (let dc = 0; dc < span('colspan'); dc++) occupied[r + dr]!.add(col + dc);
          col += span('colspan');
        }
      });
      out.push(occupied.map((s) => s.size));
    }
    if ('childNodes' in node) (node as DefaultTreeAdapterMap['parentNode']).childNodes.forEach(visit);
  };
  visit(parseFragment(html) as P5Node);
  return out;
}
