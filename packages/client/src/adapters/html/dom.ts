/**
 * The editor's contenteditable DOM ↔ the model: reading (through the normaliser, so the sanitiser sees everything),
 * rendering (createElement only — no HTML string is ever parsed), minimal patching of an existing element, and
 * the comparison that tells whether the editor's DOM already shows a model the canonical way.
 */
import { renderNodes, vnodeHtml, escapeAttr, escapeText, type Dialect, type MElement, type VNode } from './model.js';
import { contentOf, GENERIC_BLOCKS } from './schema.js';
import { normalize, type RawNode } from './normalize.js';

/** How one editor's DOM differs from plain content: its markers and UI inside the contenteditable, its spelling. */
export interface EditorDialect extends Dialect {
  /** Editor UI or markers inside the content (selection markers, resize handles, "Powered by"): not content, never touched. */
  skip(el: Element): boolean;
  /** Editor scaffolding whose children are content (a caret container): the element itself is ignored. */
  unwrap(el: Element): boolean;
  /** Attributes the editor keeps on content elements for itself: ignored when comparing, left alone when patching. */
  internalAttr(name: string): boolean;
  /**
   * Elements the editor adds and removes by itself while the user types (TinyMCE's placeholder `<br>`): read as
   * content, but ignored when deciding whether a block needs re-rendering, so Wave does not fight the editor.
   */
  transient?(el: Element): boolean;
  /** The editor's private copy of an attribute (TinyMCE serialises `data-mce-href` over `href`): dropped when Wave changes it. */
  shadowOf?(name: string): string | undefined;
}

const ELEMENT = 1;
const TEXT = 3;

export function isElement(node: Node): node is Element {
  return node.nodeType === ELEMENT;
}

export function isText(node: Node): node is Text {
  return node.nodeType === TEXT;
}

export function rawFromDom(node: Node, d: EditorDialect): RawNode[] {
  if (isText(node)) return [{ t: 'text', text: node.data, src: node }];
  if (!isElement(node) || d.skip(node)) return [];
  const children: RawNode[] = [];
  for (let c = node.firstChild; c; c = c.nextSibling) children.push(...rawFromDom(c, d));
  if (d.unwrap(node)) return children;
  const attrs: Record<string, string> = {};
  for (const a of Array.from(node.attributes)) attrs[a.name] = a.value;
  return [{ t: 'el', name: node.localName.toLowerCase(), attrs, children, src: node }];
}

/** True for a node that starts a block of its own at the top level (everything else is grouped into a paragraph). */
export function isBlockNode(node: Node): boolean {
  if (!isElement(node)) return false;
  const name = node.localName.toLowerCase();
  return contentOf(name) !== undefined || GENERIC_BLOCKS.has(name) || name === 'li';
}

/** The blocks one group of top-level nodes holds (with DOM provenance for selection mapping). */
export function readNodes(nodes: readonly Node[], root: Element, d: EditorDialect): MElement[] {
  const raw: RawNode[] = [];
  for (const n of nodes) raw.push(...rawFromDom(n, d));
  return normalize(raw, 'root', { owner: root }) as MElement[];
}

export function renderDom(blocks: readonly MElement[], doc: Document, d: Dialect): Node[] {
  return renderNodes(blocks, d).map((v) => createNode(v, doc));
}

function createNode(v: VNode, doc: Document): Node {
  if (typeof v === 'string') return doc.createTextNode(v);
  const el = doc.createElement(v.tag);
  for (const [key, value] of Object.entries(v.attrs)) el.setAttribute(key, value);
  for (const child of v.children) el.appendChild(createNode(child, doc));
  return el;
}

/** The editor's DOM as canonical HTML, ignoring what the dialect says is the editor's own. */
export function domHtml(node: Node, d: EditorDialect): string {
  if (isText(node)) return escapeText(node.data.replace(/[\u200b\ufeff]/g, ''));
  if (!isElement(node) || d.skip(node) || d.transient?.(node)) return '';
  let inner = '';
  for (let c = node.firstChild; c; c = c.nextSibling) inner += domHtml(c, d);
  if (d.unwrap(node)) return inner;
  const tag = node.localName.toLowerCase();
  let s = `<${tag}`;
  const names = Array.from(node.attributes).map((a) => a.name).filter((n) => !d.internalAttr(n));
  for (const name of names) s += ` ${name}="${escapeAttr(node.getAttribute(name) ?? '')}"`;
  s += '>';
  if (tag === 'br' || tag === 'img' || tag === 'hr' || tag === 'col') return s;
  return `${s}${inner}</${tag}>`;
}

export function canonicalHtml(blocks: readonly MElement[], d: Dialect): string {
  return vnodeHtml(renderNodes(blocks, d));
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
  let t: Node | null = target.firstChild;
  const skip = (n: Node | null): Node | null => {
    while (n && isElement(n) && d.skip(n)) n = n.nextSibling;
    return n;
  };
  for (const s of Array.from(source.childNodes)) {
    t = skip(t);
    // Whitespace between block tags is formatting the model does not keep.
    while (t && isElement(s) && isBlankText(t) && !(isElement(target) && contentOf(target.localName.toLowerCase()) === 'inline')) {
      const next: Node | null = t.nextSibling;
      t.parentNode?.removeChild(t);
      t = skip(next);
    }
    if (t && compatible(t, s, d)) {
      if (isText(t)) setText(t, (s as Text).data);
      else morph(t as Element, s as Element, d);
      t = t.nextSibling;
    } else {
      target.insertBefore(s, t);
    }
  }
  while (t) {
    const next: Node | null = t.nextSibling;
    if (!(isElement(t) && d.skip(t))) target.removeChild(t);
    t = next;
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
  if (!isElement(t) || !isElement(s) || t.localName !== s.localName || d.unwrap(t)) return false;
  return !d.transient?.(t) || !!d.transient(s);
}
