/**
 * The in-memory model of normalised rich text, and its canonical HTML. DOM-free.
 *
 * A document is a list of block `MElement`s; inline content is an `MText` holding Yjs-style delta ops
 * (`{ insert: string | embed, attributes?: marks }`). `toHtml` is the canonical serialisation: two models are the
 * same document exactly when their HTML is equal, which is how blocks are compared while diffing.
 */
import { MARK_ORDER, type Attrs } from './schema.js';

/** Mark name → its attributes (`{}` for all but links). */
export type Marks = Record<string, Attrs>;
/** `{ br: {} }` or `{ img: { src, … } }`: exactly one key. */
export type Embed = Record<string, Attrs>;

export interface TextOp {
  insert: string | Embed;
  attributes?: Marks;
}

/** Where a piece of an `MText` came from in the DOM; only set for models read from a DOM. */
export interface TextSource {
  /** Offset in the `MText` (UTF-16 units; an embed counts 1). */
  start: number;
  length: number;
  /** The DOM Text node, or the `<br>`/`<img>` element of an embed. */
  node: unknown;
  /** DOM offset of each kept character when some were dropped (zero-width spaces); null when one to one. */
  map: number[] | null;
}

export interface MText {
  kind: 'text';
  ops: TextOp[];
  /** DOM provenance, for mapping selections (read from a DOM only). */
  src?: TextSource[];
  /** The DOM element this text is directly inside (read from a DOM only). */
  owner?: unknown;
}

export interface MElement {
  kind: 'el';
  name: string;
  attrs: Attrs;
  children: MNode[];
  /** The DOM element it was read from, if any. */
  src?: unknown;
}

export type MNode = MText | MElement;

export function emptyText(): MText {
  return { kind: 'text', ops: [] };
}

export function embedName(embed: Embed): string {
  return Object.keys(embed)[0] ?? '';
}

/** A stable string for a set of marks (or attributes): equal sets give equal keys. */
export function marksKey(marks: Marks | undefined): string {
  if (!marks) return '';
  const names = Object.keys(marks).sort();
  if (names.length === 0) return '';
  return names.map((n) => `${n}${attrsKey(marks[n] ?? {})}`).join('|');
}

export function attrsKey(attrs: Attrs): string {
  const keys = Object.keys(attrs).sort();
  return keys.length === 0 ? '' : `{${keys.map((k) => `${k}=${JSON.stringify(attrs[k])}`).join(',')}}`;
}

/** Plain text of a node (embeds as U+FFFC), for similarity when pairing blocks. */
export function plainText(node: MNode): string {
  if (node.kind === 'text') return node.ops.map((op) => (typeof op.insert === 'string' ? op.insert : '\ufffc')).join('');
  return node.children.map(plainText).join('\n');
}

export function textLength(text: MText): number {
  let n = 0;
  for (const op of text.ops) n += typeof op.insert === 'string' ? op.insert.length : 1;
  return n;
}

// ---- rendering to a tree of tags (shared by the HTML string and the DOM renderer) ----

/** How one editor spells marks and the placeholder `<br>` of an empty line. */
export interface Dialect {
  mark(name: string, attrs: Attrs): { tag: string; attrs: Attrs };
  /** Attributes of the `<br>` added so that an empty or br-terminated line has height. */
  placeholder: Attrs;
  /**
   * A list item that begins with a nested list, after another item of its list, is rendered with an empty line
   * (a placeholder `<br>`) before that nested list, for an editor that would otherwise move the nested list into the
   * item before (see `TINYMCE_DIALECT`). The model is the same either way: the reader drops that `<br>`.
   */
  lineBeforeLeadingList?: boolean;
}

export const DEFAULT_DIALECT: Dialect = {
  mark: (name, attrs) => ({ tag: name, attrs: name === 'a' ? attrs : {} }),
  placeholder: {},
};

export interface VElement {
  tag: string;
  attrs: Attrs;
  children: VNode[];
}
export type VNode = VElement | string;

/** `pre`: inside a `<pre>`, where spaces show as they are. */
export function renderNodes(nodes: readonly MNode[], dialect: Dialect, pre = false): VNode[] {
  const out: VNode[] = [];
  for (const node of nodes) {
    if (node.kind === 'text') out.push(...renderText(node, dialect, pre));
    else out.push(renderElement(node, dialect, pre));
  }
  return out;
}

export function renderElement(el: MElement, dialect: Dialect, pre = false): VElement {
  const children = renderNodes(el.children, dialect, pre || el.name === 'pre');
  if (dialect.lineBeforeLeadingList && isList(el.name)) {
    for (const item of children.slice(1)) {
      if (typeof item === 'string' || item.tag !== 'li') continue;
      const first = item.children[0];
      if (first !== undefined && typeof first !== 'string' && isList(first.tag)) item.children.unshift({ tag: 'br', attrs: dialect.placeholder, children: [] });
    }
  }
  return { tag: el.name, attrs: el.attrs, children };
}

const isList = (name: string) => name === 'ul' || name === 'ol';

/**
 * The spaces of a line as a browser's contenteditable spells them, so that each shows: a space at the start or
 * end of the line (a text's ends, or next to a `<br>`) or right after a shown space is a no-break space (U+00A0),
 * the others plain spaces. This is Chromium's whitespace rebalancing (editing_utilities.cc,
 * `StringWithRebalancedWhitespace`), so a typed line usually already has this spelling. The document holds plain
 * spaces only (the normaliser reads U+00A0 as a space).
 */
export function spellSpaces(ops: readonly TextOp[]): readonly TextOp[] {
  if (!ops.some((op) => typeof op.insert === 'string' && op.insert.includes(' '))) return ops;
  // One unit per UTF-16 unit of the text: '\n' for a line break, U+FFFC for another embed.
  const units: string[] = [];
  for (const op of ops) {
    if (typeof op.insert !== 'string') units.push(embedName(op.insert) === 'br' ? '\n' : '\ufffc');
    else for (let k = 0; k < op.insert.length; k++) units.push(op.insert[k]!);
  }
  let afterSpace = false;
  for (let i = 0; i < units.length; i++) {
    if (units[i] !== ' ') {
      afterSpace = false;
      continue;
    }
    const lineStart = i === 0 || units[i - 1] === '\n';
    const lineEnd = i === units.length - 1 || units[i + 1] === '\n';
    if (afterSpace || lineStart || lineEnd) {
      units[i] = '\u00a0';
      afterSpace = false;
    } else afterSpace = true;
  }
  let pos = 0;
  return ops.map((op) => {
    if (typeof op.insert !== 'string') {
      pos++;
      return op;
    }
    const spelled = units.slice(pos, pos + op.insert.length).join('');
    pos += op.insert.length;
    return spelled === op.insert ? op : { ...op, insert: spelled };
  });
}

/**
 * Inline content with marks nested in MARK_ORDER, sharing open elements between neighbouring ops, plus the
 * placeholder `<br>` a browser needs to give an empty or `<br>`-terminated line its height.
 */
export function renderText(text: MText, dialect: Dialect, pre = false): VNode[] {
  const out: VNode[] = [];
  const stack: Array<{ key: string; el: VElement }> = [];
  let endsWithBr = text.ops.length === 0;
  for (const op of pre ? text.ops : spellSpaces(text.ops)) {
    const wanted = MARK_ORDER.filter((m) => op.attributes && Object.hasOwn(op.attributes, m)).map((m) => {
      const attrs = op.attributes![m] ?? {};
      return { name: m, attrs, key: `${m}${attrsKey(attrs)}` };
    });
    let keep = 0;
    while (keep < stack.length && keep < wanted.length && stack[keep]!.key === wanted[keep]!.key) keep++;
    stack.length = keep;
    for (const w of wanted.slice(keep)) {
      const spelled = dialect.mark(w.name, w.attrs);
      const el: VElement = { tag: spelled.tag, attrs: spelled.attrs, children: [] };
      (stack.length > 0 ? stack[stack.length - 1]!.el.children : out).push(el);
      stack.push({ key: w.key, el });
    }
    const parent = stack.length > 0 ? stack[stack.length - 1]!.el.children : out;
    if (typeof op.insert === 'string') {
      const last = parent[parent.length - 1];
      if (typeof last === 'string') parent[parent.length - 1] = last + op.insert;
      else parent.push(op.insert);
      endsWithBr = false;
    } else {
      const name = embedName(op.insert);
      parent.push({ tag: name, attrs: op.insert[name] ?? {}, children: [] });
      endsWithBr = name === 'br';
    }
  }
  if (endsWithBr) out.push({ tag: 'br', attrs: dialect.placeholder, children: [] });
  return out;
}

const VOID = new Set(['br', 'img', 'hr', 'col']);

export function escapeText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\u00a0/g, '&nbsp;');
}

export function escapeAttr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function vnodeHtml(nodes: readonly VNode[]): string {
  let s = '';
  for (const n of nodes) {
    if (typeof n === 'string') {
      s += escapeText(n);
      continue;
    }
    s += `<${n.tag}`;
    for (const key of Object.keys(n.attrs)) s += ` ${key}="${escapeAttr(n.attrs[key]!)}"`;
    s += '>';
    if (VOID.has(n.tag)) continue;
    s += `${vnodeHtml(n.children)}</${n.tag}>`;
  }
  return s;
}

/** Canonical HTML of `nodes` (default dialect): the identity of content while diffing. */
export function toHtml(nodes: readonly MNode[], dialect: Dialect = DEFAULT_DIALECT): string {
  return vnodeHtml(renderNodes(nodes, dialect));
}
