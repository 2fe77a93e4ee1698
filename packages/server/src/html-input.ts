/**
 * HTML from a REST `PUT` → the lines of the flat rich text. parse5 (the WHATWG parsing algorithm, so a body reads as
 * a browser's editor would read it) builds the tree; wave-richtext's `parseHtml` reads it through its `HtmlNode`
 * interface and sanitises ([RT-X1]). What holds:
 * - The body is parsed as an HTML fragment (parse5's default `<template>` context, as the richtext tests parse, so
 *   stray table parts reach `parseHtml`'s rules instead of being dropped); nothing in it is ever served as markup:
 *   GET renders the lines.
 * - `parseHtml` recurses once per element level, so a tree deeper than `MAX_HTML_DEPTH` is refused before it runs
 *   (`HtmlTooDeep`); the depth is measured with an explicit stack.
 */
import { parseFragment } from 'parse5';
import type { DefaultTreeAdapterMap } from 'parse5';
import { parseHtml, type HtmlNode, type Line } from 'wave-richtext';

type P5Node = DefaultTreeAdapterMap['node'];
type P5Element = DefaultTreeAdapterMap['element'];
type P5Parent = DefaultTreeAdapterMap['parentNode'];
type P5Text = DefaultTreeAdapterMap['textNode'];

/**
 * Deepest element nesting read. Chromium's HTML parser stops nesting at 512 levels, so no editor's content is
 * deeper; `parseHtml`'s few stack frames per level keep 512 levels far inside Node's default stack.
 */
export const MAX_HTML_DEPTH = 512;

export class HtmlTooDeep extends Error {
  override readonly name = 'HtmlTooDeep';
}

/** The lines of an HTML body. Throws `HtmlTooDeep` for a tree nested deeper than `MAX_HTML_DEPTH`. */
export function linesOfHtml(html: string): Line[] {
  const root = parseFragment(html) as P5Node;
  if (depthOf(root) > MAX_HTML_DEPTH) throw new HtmlTooDeep(`html: elements nested deeper than ${MAX_HTML_DEPTH} levels`);
  return parseHtml(asHtmlNode(root));
}

const isParent = (node: P5Node): node is P5Node & P5Parent => 'childNodes' in node;
const isElement = (node: P5Node): node is P5Element => 'tagName' in node;
const isText = (node: P5Node): node is P5Text => node.nodeName === '#text';

function depthOf(root: P5Node): number {
  let deepest = 0;
  const stack: Array<[P5Node, number]> = [[root, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > deepest) deepest = depth;
    if (isParent(node)) for (const child of node.childNodes) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** Node types of the DOM, as `parseHtml` reads them. */
const NodeType = { Element: 1, Text: 3, Comment: 8, Fragment: 11 } as const;

/** A parse5 node seen through `HtmlNode`: element names upper-case like the DOM's, children adapted on first read. */
function asHtmlNode(node: P5Node): HtmlNode {
  let children: HtmlNode[] | undefined;
  const element = isElement(node) ? node : undefined;
  return {
    nodeType: element ? NodeType.Element : isText(node) ? NodeType.Text : node.nodeName === '#document-fragment' ? NodeType.Fragment : NodeType.Comment,
    nodeName: element ? element.tagName.toUpperCase() : node.nodeName,
    get childNodes() {
      children ??= isParent(node) ? node.childNodes.map(asHtmlNode) : [];
      return children;
    },
    getAttribute: (name: string) => element?.attrs.find((a) => a.name === name)?.value ?? null,
    data: isText(node) ? node.value : undefined,
    get textContent() {
      return textContent(node);
    },
  };
}

/** The DOM's `textContent`: the text of every descendant text node in order (an explicit stack, any depth). */
function textContent(node: P5Node): string {
  if (isText(node)) return node.value;
  let out = '';
  const stack: P5Node[] = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (isText(n)) out += n.value;
    else if (isParent(n)) for (let i = n.childNodes.length - 1; i >= 0; i--) stack.push(n.childNodes[i]!);
  }
  return out;
}
