/**
 * The REST API's views of a document (rest.ts): the rich-text tree of Froala and TinyMCE (`Y.XmlFragment('html')`,
 * shape in the client's adapters/html/schema.ts) as HTML and as text. (The text type renders through wave-richtext.)
 *
 * What holds:
 * - Every text node and attribute value is escaped: typed `<img src=x onerror=alert(1)>` comes out as text, never as
 *   markup. Whatever a hostile client wrote into the tree, only the schema's element, mark and embed names and
 *   attributes are written, and `href`/`src` only with a scheme that cannot run script; anything else is unwrapped
 *   (its text kept) or dropped. The document's text is never recovered by parsing HTML back.
 * - The walk is iterative (an explicit stack), so a tree of any depth the server accepted renders; its work is
 *   linear in the document's size.
 */
import * as Y from 'yjs';
import { HTML_TYPE, TEXT_TYPE } from 'wave-protocol';
import { docLines, renderHtml } from 'wave-richtext';

/** A document's views in the REST API's formats, each rendered when called (each walks the whole document). */
export interface ContentViews {
  text(): string;
  delta(): unknown[];
  html(): string;
}

export function contentViews(ydoc: Y.Doc): ContentViews {
  const text = ydoc.getText(TEXT_TYPE);
  const fragment = ydoc.getXmlFragment(HTML_TYPE);
  const rich = fragment.length > 0;
  return {
    text: () => (text.length > 0 || !rich ? text.toString() : fragmentToText(fragment)),
    delta: () => text.toDelta() as unknown[],
    // The text type is rendered by the shared renderer (wave-richtext): a Quill document's formatting and a plain
    // text's lines alike, every text and attribute value escaped ([RT-X1]).
    html: () => (rich ? fragmentToHtml(fragment) : renderHtml(docLines(text))),
  };
}

/** All of a document's views (`?format=json` minus docId and epoch); webhooks send the same. */
export function renderContent(ydoc: Y.Doc): { text: string; delta: unknown[]; html: string } {
  const views = contentViews(ydoc);
  return { text: views.text(), delta: views.delta(), html: views.html() };
}

/** Elements of the schema (client adapters/html/schema.ts `CONTENT`); others are unwrapped. */
const ELEMENTS = new Set([
  'p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'pre', 'blockquote', 'ul', 'ol', 'li',
  'table', 'thead', 'tbody', 'tfoot', 'tr', 'td', 'th', 'colgroup', 'col', 'hr',
]);
/** Elements written without content or end tag. */
const VOID = new Set(['hr', 'col', 'br', 'img']);
/** Marks, outermost first (schema.ts `MARK_ORDER`); other text attributes are not markup. */
const MARK_ORDER = ['a', 'strong', 'em', 'u', 's', 'sub', 'sup', 'code'];
/** Attributes written at all (schema.ts `sanitizeAttrs`); event handlers and anything unknown are dropped. */
const ATTRIBUTES = new Set(['style', 'src', 'alt', 'width', 'height', 'class', 'href', 'colspan', 'rowspan', 'scope', 'border', 'span', 'start', 'type']);
/** Elements after which the text view starts a new line. */
const LINE_ENDS = new Set(['p', 'div', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'li', 'blockquote', 'pre']);

const SAFE_SCHEMES = new Set(['http', 'https', 'mailto', 'tel']);
const DATA_IMAGE = /^data:image\/(?:png|gif|jpe?g|webp|bmp|avif);base64,[a-z0-9+/=\s]*$/i;

/** Escapes text for an HTML text node or a double-quoted attribute value (`&<>"'` as numeric references). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The rich-text tree as HTML (see the module comment). */
export function fragmentToHtml(fragment: Y.XmlFragment): string {
  const out: string[] = [];
  walk(fragment, {
    open(name, attrs) {
      if (!ELEMENTS.has(name)) return false;
      out.push(`<${name}${attributes(attrs)}>`);
      return !VOID.has(name);
    },
    close(name) {
      out.push(`</${name}>`);
    },
    text(delta) {
      for (const op of delta) out.push(runToHtml(op));
    },
  });
  return out.join('');
}

/** The rich-text tree as text: its characters, a line break after each block and for each `<br>`. */
export function fragmentToText(fragment: Y.XmlFragment): string {
  const out: string[] = [];
  walk(fragment, {
    open: () => true,
    close(name) {
      if (LINE_ENDS.has(name)) out.push('\n');
    },
    text(delta) {
      for (const op of delta) {
        if (typeof op.insert === 'string') out.push(op.insert);
        else if (embedName(op.insert) === 'br') out.push('\n');
      }
    },
  });
  return out.join('');
}

interface TextOp {
  insert: unknown;
  attributes?: Record<string, unknown>;
}

interface Visitor {
  /** An element starts; false: its end is not reported (its children still are). */
  open(name: string, attrs: Record<string, unknown>): boolean;
  close(name: string): void;
  text(delta: readonly TextOp[]): void;
}

/** Depth-first, in document order, with an explicit stack: no recursion whatever the tree's depth. */
function walk(fragment: Y.XmlFragment, visitor: Visitor): void {
  type Work = { node: unknown } | { end: string };
  const stack: Work[] = [];
  const pushChildren = (parent: Y.XmlFragment | Y.XmlElement): void => {
    const children = parent.toArray();
    for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i] });
  };
  pushChildren(fragment);
  while (stack.length > 0) {
    const work = stack.pop()!;
    if ('end' in work) {
      visitor.close(work.end);
      continue;
    }
    const node = work.node;
    if (node instanceof Y.XmlText) {
      visitor.text(node.toDelta() as TextOp[]);
    } else if (node instanceof Y.XmlElement) {
      const name = node.nodeName.toLowerCase();
      if (visitor.open(name, node.getAttributes() as Record<string, unknown>)) stack.push({ end: name });
      pushChildren(node);
    }
  }
}

/** One run of an `Y.XmlText` delta: escaped text or an embed, inside its marks. */
function runToHtml(op: TextOp): string {
  let inner: string;
  if (typeof op.insert === 'string') {
    inner = escapeHtml(op.insert);
  } else {
    const name = embedName(op.insert);
    if (name === 'br') inner = '<br>';
    else if (name === 'img') inner = `<img${attributes((op.insert as Record<string, unknown>)['img'])}>`;
    else return '';
  }
  const marks = op.attributes ?? {};
  let html = inner;
  for (let i = MARK_ORDER.length - 1; i >= 0; i--) {
    const mark = MARK_ORDER[i]!;
    if (!Object.hasOwn(marks, mark)) continue;
    const value = marks[mark];
    if (value === null || value === undefined || value === false) continue;
    html = `<${mark}${mark === 'a' ? attributes(value) : ''}>${html}</${mark}>`;
  }
  return html;
}

/** `{ br: {} }` → `br`: the one key of an embed object, or undefined for anything else. */
function embedName(insert: unknown): string | undefined {
  if (insert === null || typeof insert !== 'object' || insert instanceof Y.AbstractType) return undefined;
  const keys = Object.keys(insert);
  return keys.length === 1 ? keys[0] : undefined;
}

/** ` key="value"` for each allowed string attribute, values escaped, URLs only with a safe scheme. */
function attributes(attrs: unknown): string {
  if (attrs === null || typeof attrs !== 'object') return '';
  let out = '';
  for (const [key, value] of Object.entries(attrs as Record<string, unknown>)) {
    if (!ATTRIBUTES.has(key) || typeof value !== 'string') continue;
    if ((key === 'href' || key === 'src') && !safeUrl(value, key)) continue;
    out += ` ${key}="${escapeHtml(value)}"`;
  }
  return out;
}

/** A relative URL, or one whose scheme cannot run script (schema.ts `safeUrl`, control characters ignored). */
function safeUrl(raw: string, kind: 'href' | 'src'): boolean {
  // eslint-disable-next-line no-control-regex
  const probe = raw.replace(/[\s\u0000-\u0020\u007f-\u00a0\u1680\u2000-\u200f\u2028\u2029\u202f\u205f\u3000\ufeff]/g, '').toLowerCase();
  const scheme = /^([a-z][a-z0-9+.-]*):/.exec(probe)?.[1];
  if (scheme === undefined) return !/^[^/?#]*:/.test(probe);
  if (kind === 'src' && scheme === 'data') return DATA_IMAGE.test(probe);
  return SAFE_SCHEMES.has(scheme) && (kind === 'href' || scheme === 'http' || scheme === 'https');
}
