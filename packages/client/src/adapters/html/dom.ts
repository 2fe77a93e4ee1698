/**
 * The editor's contenteditable DOM: its top-level content nodes, canonical HTML turned into nodes (parsed in an inert
 * `<template>`, where nothing runs or loads; the HTML comes from the renderer, every value escaped), the comparison
 * that tells whether a node already shows its block the canonical way, and the minimal patcher.
 */
import { alignNodes } from './align.js';
import { EDITOR_DIALECT, escapeAttr, escapeText, isFormatTag, isInlineTag, type HtmlNode, type RenderOptions } from 'wave-richtext';

/** How one editor's DOM differs from plain content, beyond the markers the parser skips (`EDITOR_DIALECT`). */
export interface EditorDialect {
  /** How the renderer spells content for this editor. */
  readonly render: RenderOptions;
  /** Attributes the editor keeps on content elements for itself: ignored when comparing, left alone when patching. */
  internalAttr(name: string): boolean;
  /**
   * Elements the editor adds and removes by itself while the user types (TinyMCE's placeholder `<br>`): ignored
   * when deciding whether a block needs re-rendering, so Wave does not fight the editor.
   */
  transient?(el: Element): boolean;
  /** The editor's private copy of an attribute (TinyMCE serialises `data-mce-href` over `href`): dropped when Wave changes it. */
  shadowOf?(name: string): string | undefined;
}

const d0 = EDITOR_DIALECT;
const skip = (el: Element) => d0.skip(el as unknown as HtmlNode);
const unwrap = (el: Element) => d0.unwrap(el as unknown as HtmlNode);

export function isElement(node: Node): node is Element {
  return node.nodeType === 1;
}

export function isText(node: Node): node is Text {
  return node.nodeType === 3;
}

/** The root's children that are content: editor UI and whitespace between blocks left out. */
export function contentNodes(root: Node): Node[] {
  const out: Node[] = [];
  for (let c = root.firstChild; c; c = c.nextSibling) {
    if (isElement(c) ? !skip(c) : isText(c) && !isBlankText(c)) out.push(c);
  }
  return out;
}

/**
 * Wraps each run of inline content lying directly in `root` (text and inline elements, with the blank text between
 * them) in a `<p>`; returns whether there was one. The browser shows such a run as one line, while the binding reads
 * each of the root's nodes as blocks of their own, which would split the line at every node. TinyMCE leaves such
 * runs after inserting block content inside an inline element (a list pasted into a link: the paragraph's rest
 * stays in the body) and wraps them in its root block only on its next NodeChange (`forced_root_block`).
 */
export function wrapInlineRuns(root: HTMLElement, d: EditorDialect): boolean {
  const doc = root.ownerDocument;
  const sel = doc.getSelection();
  // Moving a node takes the selection's points out of it: they are put back on the same nodes (a point right in
  // `root`, between blocks, is left where the move puts it). An HTML document's `localName` is lower case.
  const at = sel?.anchorNode && sel.focusNode && root.contains(sel.anchorNode) ? ([sel.anchorNode, sel.anchorOffset, sel.focusNode, sel.focusOffset] as const) : null;
  let run: Node[] = [];
  let wrapped = false;
  const close = () => {
    // Blank text at either end of the run goes in too: at a block's edge, white space shows nothing and reads as
    // nothing. A run of blank text alone, or of the editor's placeholders, is no line.
    if (run.some((n) => !isBlankText(n) && !(isElement(n) && d.transient?.(n)))) {
      const p = doc.createElement('p');
      root.insertBefore(p, run[0]!);
      p.append(...run);
      wrapped = true;
    }
    run = [];
  };
  for (let c = root.firstChild; c; c = c.nextSibling) {
    if (isText(c) || (isElement(c) && !skip(c) && isInlineTag(c.localName))) run.push(c);
    else close();
  }
  close();
  // The same points on the same nodes, all still in the document: the browser takes them back.
  if (wrapped && at && at[0] !== root && at[2] !== root) sel!.setBaseAndExtent(...at);
  return wrapped;
}

/** The top-level node of `root` that holds `node`, or null. */
export function topOf(root: Node, node: Node | null): Node | null {
  let n = node;
  while (n && n.parentNode !== root) n = n.parentNode;
  return n;
}

/** The nodes of canonical `html`, owned by `doc`. */
export function nodesOf(html: string, doc: Document): Node[] {
  const t = doc.createElement('template');
  t.innerHTML = html;
  return Array.from(doc.importNode(t.content, true).childNodes);
}

/** A node as canonical HTML, ignoring what is the editor's own (markers, internal attributes, transient nodes). */
export function domHtml(node: Node, d: EditorDialect): string {
  if (isText(node)) return escapeText(node.data.replace(/[\u200b\ufeff]/g, ''));
  if (!isElement(node) || skip(node) || d.transient?.(node)) return '';
  let inner = '';
  for (let c = node.firstChild; c; c = c.nextSibling) inner += domHtml(c, d);
  if (unwrap(node)) return inner;
  const tag = node.localName.toLowerCase();
  // Inline formatting with no content shows nothing. It is how editors hold a format turned on or off at a collapsed
  // caret (TinyMCE's caret container, Froala's empty <strong>) until the next key types into it: re-rendering the
  // block would drop it, and the format with it. (Other empty elements, an <iframe> say, still differ.)
  if (inner === '' && isFormatTag(tag)) return '';
  let s = `<${tag}`;
  for (const a of Array.from(node.attributes)) if (!d.internalAttr(a.name)) s += ` ${a.name}="${escapeAttr(a.value)}"`;
  s += '>';
  if (tag === 'br' || tag === 'img') return s;
  return `${s}${inner}</${tag}>`;
}

/**
 * Turns `region` (live top-level nodes of `parent`) into `fresh` (rendered): same-tag pairs are morphed, the rest
 * replaced; new nodes past the region go before `at`. Returns the nodes now in the region's place.
 */
export function patchNodes(parent: Node, region: readonly Node[], fresh: readonly Node[], at: Node | null, d: EditorDialect): Node[] {
  const out: Node[] = [];
  let k = 0;
  for (; k < fresh.length; k++) {
    const f = fresh[k]!;
    const t = region[k];
    if (t && isElement(t) && isElement(f) && t.localName === f.localName) {
      morph(t, f, d);
      out.push(t);
    } else {
      parent.insertBefore(f, t ?? (at && at.parentNode === parent ? at : null));
      if (t) parent.removeChild(t);
      out.push(f);
    }
  }
  for (; k < region.length; k++) region[k]!.parentNode?.removeChild(region[k]!);
  return out;
}

function isBlankText(node: Node): boolean {
  return isText(node) && /^[ \t\n\r]*$/.test(node.data);
}

/**
 * Changes `target` (in the live editor) to equal `source` (freshly rendered, same tag), touching only what
 * differs: text nodes keep their identity and get new data, elements of the same tag are patched recursively.
 */
export function morph(target: Element, source: Element, d: EditorDialect): void {
  const own = Array.from(target.attributes).filter((a) => !d.internalAttr(a.name)).map((a) => a.name);
  const wanted = Array.from(source.attributes).map((a) => a.name);
  // Same attributes in another order still serialise differently: re-add them in the canonical order.
  const reorder = own.length === wanted.length && own.some((name, i) => name !== wanted[i]) && own.every((n) => source.hasAttribute(n));
  const dropShadow = (name: string) => {
    const shadow = d.shadowOf?.(name);
    if (shadow) target.removeAttribute(shadow);
  };
  for (const name of own) {
    if (reorder || !source.hasAttribute(name)) {
      target.removeAttribute(name);
      dropShadow(name);
    }
  }
  for (const attr of Array.from(source.attributes)) {
    if (target.getAttribute(attr.name) !== attr.value) {
      target.setAttribute(attr.name, attr.value);
      dropShadow(attr.name);
    }
  }
  patchChildren(target, source, d);
}

/**
 * Turns `target`'s children into `source`'s: the longest in-order pairing of compatible nodes is kept and patched
 * (so an element the editor holds on to, such as an `<img>` whose `load` handler is pending, survives a change
 * beside it), the rest of `target` is removed and the rest of `source` inserted in place. The editor's markers
 * (`EDITOR_DIALECT.skip`) are neither paired nor removed.
 */
function patchChildren(target: Element, source: Element, d: EditorDialect): void {
  const live = Array.from(target.childNodes).filter((n) => !(isElement(n) && skip(n)));
  const want = Array.from(source.childNodes);
  const pair = alignNodes(live, want, (t, s) => compatible(t, s, d));
  const kept = new Set<Node>();
  for (const k of pair) if (k >= 0) kept.add(live[k]!);
  for (const n of live) if (!kept.has(n)) target.removeChild(n);
  // Backwards, so each new node goes before the (kept or inserted) node that follows it.
  let next: Node | null = null;
  for (let j = want.length - 1; j >= 0; j--) {
    const k = pair[j]!;
    if (k < 0) {
      target.insertBefore(want[j]!, next);
      next = want[j]!;
      continue;
    }
    const t = live[k]!;
    if (isText(t)) setText(t, (want[j] as Text).data);
    else morph(t as Element, want[j] as Element, d);
    next = t;
  }
}

/**
 * Replaces only the changed middle of a text node: the browser then moves a caret or selection in this node with
 * the text around it (DOM "replace data"), which keeps it right even before Wave restores it exactly.
 */
function setText(node: Text, data: string): void {
  const old = node.data;
  if (old === data) return;
  const max = Math.min(old.length, data.length);
  let start = 0;
  while (start < max && old.charCodeAt(start) === data.charCodeAt(start)) start++;
  let end = 0;
  while (end < max - start && old.charCodeAt(old.length - 1 - end) === data.charCodeAt(data.length - 1 - end)) end++;
  node.replaceData(start, old.length - start - end, data.slice(start, data.length - end));
}

function compatible(t: Node, s: Node, d: EditorDialect): boolean {
  if (isText(t)) return isText(s);
  // Editor scaffolding (a caret container) is replaced rather than patched into content. So is the editor's
  // placeholder where content of the same tag is wanted (TinyMCE's `<br data-mce-bogus>` for a real `<br>`): the
  // marker is an internal attribute, which patching leaves alone, and the editor's serialisation drops the element.
  if (!isElement(t) || !isElement(s) || t.localName !== s.localName || unwrap(t)) return false;
  return !d.transient?.(t) || !!d.transient(s);
}
