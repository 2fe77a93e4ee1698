/**
 * The normaliser: any tree of tags, text and marks (read from an editor's DOM, or from the shared Y document,
 * possibly written by a hostile peer) → the normalised model of `schema.ts`. DOM-free and total: unknown inline
 * markup is unwrapped, unknown blocks become paragraphs, misplaced structure is wrapped or lifted, and content is
 * never dropped except inside DROPPED elements (script, style, iframe, …). Every attribute, mark and embed passes
 * the sanitiser.
 */
import { contentOf, DROPPED, EMBEDS, GENERIC_BLOCKS, MARK_TAGS, marksFromStyle, sanitizeAttrs, sanitizeEmbed, sanitizeMark, type Attrs, type Content } from './schema.js';
import { embedName, marksKey, type Embed, type Marks, type MElement, type MNode, type MText, type TextOp, type TextSource } from './model.js';

/** Input of the normaliser. `src` is carried through to the model for selection mapping. */
export type RawNode = RawText | RawElement;

export interface RawText {
  t: 'text';
  text: string;
  /** Marks carried by the text itself (from a Y.XmlText delta). */
  marks?: Record<string, unknown>;
  src?: unknown;
}

export interface RawElement {
  t: 'el';
  name: string;
  attrs: Record<string, string>;
  children: RawNode[];
  /** Marks carried by an embed (from a Y.XmlText delta). */
  marks?: Record<string, unknown>;
  src?: unknown;
}

/** Normalises the children of a container with the given content model (`root` for the whole document). */
export function normalize(nodes: readonly RawNode[], content: Content, options: { pre?: boolean; owner?: unknown } = {}): MNode[] {
  const b = new Builder(content, options.pre ?? false, options.owner, false);
  walk(nodes, b, {});
  return b.finish();
}

/** A document's blocks. A document holding only one empty paragraph is the empty document. */
export function normalizeDocument(nodes: readonly RawNode[], owner?: unknown): MElement[] {
  const blocks = normalize(nodes, 'root', { owner }) as MElement[];
  if (blocks.length === 1 && isEmptyParagraph(blocks[0]!)) return [];
  return blocks;
}

export function isEmptyParagraph(el: MElement): boolean {
  const only = el.children[0];
  return el.name === 'p' && Object.keys(el.attrs).length === 0 && el.children.length === 1 && only!.kind === 'text' && only!.ops.length === 0;
}

class Run {
  ops: TextOp[] = [];
  src: TextSource[] = [];
  length = 0;

  pushText(text: string, marks: Marks, src: unknown, map: number[] | null): void {
    if (text === '') return;
    if (src !== undefined) this.src.push({ start: this.length, length: text.length, node: src, map });
    const last = this.ops[this.ops.length - 1];
    if (last && typeof last.insert === 'string' && marksKey(last.attributes) === marksKey(marks)) last.insert += text;
    else this.ops.push(withMarks({ insert: text }, marks));
    this.length += text.length;
  }

  pushEmbed(embed: Embed, marks: Marks, src: unknown): void {
    if (src !== undefined) this.src.push({ start: this.length, length: 1, node: src, map: null });
    this.ops.push(withMarks({ insert: embed }, marks));
    this.length += 1;
  }

  get isEmpty(): boolean {
    return this.ops.length === 0;
  }

  endsWithBr(): boolean {
    const last = this.ops[this.ops.length - 1];
    return last !== undefined && typeof last.insert !== 'string' && embedName(last.insert) === 'br';
  }

  /** A `<br>` at the end of a line is invisible (it is the placeholder the renderer adds back). */
  dropTrailingBr(): void {
    if (!this.endsWithBr()) return;
    this.ops.pop();
    this.length -= 1;
    const lastSrc = this.src[this.src.length - 1];
    if (lastSrc && lastSrc.start === this.length) this.src.pop();
  }

  /** Only collapsible whitespace: formatting between blocks, not content. */
  isBlank(): boolean {
    return this.ops.every((op) => typeof op.insert === 'string' && /^[ \t\n\r]*$/.test(op.insert));
  }

  toText(owner: unknown): MText {
    const text: MText = { kind: 'text', ops: this.ops };
    if (this.src.length > 0) text.src = this.src;
    if (owner !== undefined) text.owner = owner;
    return text;
  }
}

function withMarks(op: TextOp, marks: Marks): TextOp {
  if (Object.keys(marks).length > 0) op.attributes = marks;
  return op;
}

interface Open {
  b: Builder;
  el: MElement;
  implicit: boolean;
}

class Builder {
  readonly out: Array<MNode & { implicit?: boolean }> = [];
  run: Run | null = null;
  open: Open | null = null;
  /** A flattened block ended here: the next inline content starts on a new line. */
  pendingBreak = false;

  constructor(
    readonly content: Content,
    readonly pre: boolean,
    readonly owner: unknown,
    readonly implicit: boolean,
  ) {}

  /** The run inline content goes to, for `inline` and `flow` containers. */
  textRun(): Run {
    this.closeOpen();
    if (!this.run) this.run = new Run();
    if (this.pendingBreak) {
      if (!this.run.isEmpty && !this.run.endsWithBr()) this.run.pushEmbed({ br: {} }, {}, undefined);
      this.pendingBreak = false;
    }
    return this.run;
  }

  closeRun(): void {
    const run = this.run;
    if (!run) return;
    this.run = null;
    run.dropTrailingBr();
    if (this.content === 'inline' || !run.isEmpty) this.out.push(run.toText(this.owner));
  }

  closeOpen(): void {
    const open = this.open;
    if (!open) return;
    this.open = null;
    open.el.children = open.b.finish();
  }

  /** Starts a child element (pushed now, filled while walking); it stays open until the next sibling. */
  start(name: string, attrs: Attrs, src: unknown, implicit: boolean): Builder {
    this.closeOpen();
    if (this.content === 'root' || this.content === 'flow') this.closeRun();
    const el: MElement & { implicit?: boolean } = { kind: 'el', name, attrs, children: [] };
    if (src !== undefined) el.src = src;
    if (implicit) el.implicit = true;
    this.out.push(el);
    const content = contentOf(name) ?? 'flow';
    const child = new Builder(content, this.pre || name === 'pre', src ?? (implicit ? this.owner : undefined), implicit);
    this.open = { b: child, el, implicit };
    return child;
  }

  /** The open implicit child named `name`, or a new one. */
  implicitChild(name: string): Builder {
    const open = this.open;
    if (open && open.implicit && open.el.name === name) return open.b;
    return this.start(name, {}, undefined, true);
  }

  finish(): MNode[] {
    this.closeOpen();
    this.closeRun();
    let out: MNode[] = this.out.filter((n) => n.kind === 'text' || !isEmptyStructure(n));
    if (this.content === 'root') {
      out = out.filter((n) => !(n.kind === 'el' && (n as { implicit?: boolean }).implicit && n.name === 'p' && isBlankText(n.children[0])));
    }
    for (const n of out) delete (n as { implicit?: boolean }).implicit;
    if (this.content === 'inline') {
      if (out.length === 0) out = [{ kind: 'text', ops: [], ...(this.owner !== undefined ? { owner: this.owner } : {}) }];
    } else if (this.content === 'flow') {
      const hasBlock = out.some((n) => n.kind === 'el');
      if (hasBlock) out = out.filter((n) => n.kind === 'el' || !isBlankText(n));
      if (out.length === 0) out = [{ kind: 'text', ops: [], ...(this.owner !== undefined ? { owner: this.owner } : {}) }];
    }
    return out;
  }
}

function isBlankText(node: MNode | undefined): boolean {
  return node === undefined || (node.kind === 'text' && node.ops.every((op) => typeof op.insert === 'string' && /^[ \t\n\r]*$/.test(op.insert)));
}

/** Structure that cannot be shown without its parts: a list without items, a table without rows… */
function isEmptyStructure(el: MElement): boolean {
  switch (contentOf(el.name)) {
    case 'list':
    case 'table':
    case 'section':
    case 'tr':
    case 'colgroup':
      return el.children.length === 0;
    default:
      return false;
  }
}

function isBlockish(name: string): boolean {
  return contentOf(name) !== undefined || GENERIC_BLOCKS.has(name) || name === 'li';
}

function hasBlockDescendant(el: RawElement): boolean {
  return el.children.some((c) => c.t === 'el' && !DROPPED.has(c.name) && (isBlockish(c.name) || hasBlockDescendant(c)));
}

/**
 * Strips zero-width characters; outside `<pre>`, line breaks and tabs are spaces (as a browser shows them), and so
 * are no-break spaces: how a space is spelled is the renderer's business (`spellSpaces` in model.ts), not content,
 * so a browser re-spelling the spaces around the caret (U+00A0 ↔ U+0020) changes nothing in the document.
 */
function cleanText(text: string, pre: boolean): { text: string; map: number[] | null } {
  if (!/[\u200b\ufeff\t\n\r\u00a0]/.test(text)) return { text, map: null };
  let out = '';
  const map: number[] = [];
  let dropped = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\u200b' || c === '\ufeff') {
      dropped = true;
      continue;
    }
    out += !pre && (c === '\n' || c === '\r' || c === '\t' || c === '\u00a0') ? ' ' : c;
    map.push(i);
  }
  return { text: out, map: dropped ? map : null };
}

/** Marks as a peer wrote them (Y text attributes), sanitised. */
export function cleanMarks(marks: Record<string, unknown> | undefined): Marks {
  return addMarks({}, marks);
}

function addMarks(marks: Marks, extra: Record<string, unknown> | undefined): Marks {
  if (!extra) return marks;
  let out = marks;
  for (const name of Object.keys(extra)) {
    const attrs = sanitizeMark(name, extra[name]);
    if (attrs !== null) out = { ...out, [name]: attrs };
  }
  return out;
}

/** Where inline content goes in a container of this builder's kind; null when it has no place (colgroup). */
function inlineTarget(b: Builder): Builder | null {
  switch (b.content) {
    case 'inline':
    case 'flow':
      return b;
    case 'root':
      return b.implicitChild('p');
    case 'list':
      return b.implicitChild('li');
    case 'table':
      return inlineTarget(b.implicitChild('tbody'));
    case 'section':
      return inlineTarget(b.implicitChild('tr'));
    case 'tr':
      return b.implicitChild('td');
    default:
      return null;
  }
}

function walk(nodes: readonly RawNode[], b: Builder, marks: Marks): void {
  for (const node of nodes) {
    if (node.t === 'text') text(node, b, marks);
    else element(node, b, marks);
  }
}

function text(node: RawText, b: Builder, marks: Marks): void {
  const { text, map } = cleanText(node.text, b.pre);
  if (text === '') return;
  // A no-break space is content even where plain whitespace is source formatting.
  const blank = /^[ \t\n\r]*$/.test(text) && !node.text.includes('\u00a0');
  if (blank && b.content !== 'inline' && b.content !== 'flow') {
    // Whitespace between blocks or rows is source formatting; at the top level it may sit between inline nodes.
    if (!(b.content === 'root' && b.open?.implicit && b.open.el.name === 'p')) return;
  }
  const target = inlineTarget(b);
  target?.textRun().pushText(text, addMarks(marks, node.marks), node.src, map);
}

function element(node: RawElement, b: Builder, marks: Marks): void {
  const name = node.name;
  if (DROPPED.has(name)) return;
  if (EMBEDS.has(name)) {
    const attrs = sanitizeEmbed(name, node.attrs);
    const target = inlineTarget(b);
    if (!target) return;
    if (attrs === null) {
      // An image without a safe source: its alternative text is the content.
      const alt = node.attrs['alt'];
      if (alt) target.textRun().pushText(alt, addMarks(marks, node.marks), undefined, null);
      return;
    }
    target.textRun().pushEmbed({ [name]: attrs }, addMarks(marks, node.marks), node.src);
    return;
  }
  if (!isBlockish(name)) {
    let inner = marks;
    const mark = name === 'a' ? 'a' : MARK_TAGS[name];
    if (mark) {
      const attrs = sanitizeMark(mark, mark === 'a' ? node.attrs : {});
      if (attrs !== null) inner = { ...inner, [mark]: attrs };
    }
    const style = node.attrs['style'];
    if (style) for (const m of marksFromStyle(style)) inner = { ...inner, [m]: {} };
    walk(node.children, b, inner);
    return;
  }
  block(node, b, marks);
}

function block(node: RawElement, b: Builder, marks: Marks): void {
  const name = node.name;
  const content = contentOf(name);
  if (b.content === 'inline') {
    // A block inside a paragraph (possible in a live DOM): its text stays, on its own line.
    const run = b.textRun();
    if (!run.isEmpty) b.pendingBreak = true;
    walk(node.children, b, marks);
    if (!(b.run?.isEmpty ?? true)) b.pendingBreak = true;
    return;
  }
  if (content === undefined || (name === 'li' && b.content !== 'list') || GENERIC_BLOCKS.has(name)) {
    generic(node, b, marks);
    return;
  }
  switch (b.content) {
    case 'root':
    case 'flow':
      if (['tr', 'td', 'th', 'thead', 'tbody', 'tfoot', 'colgroup', 'col'].includes(name)) return generic(node, b, marks);
      return fill(b.start(name, sanitizeAttrs(name, node.attrs), node.src, false), node, marks);
    case 'list':
      if (name === 'li') return fill(b.start(name, sanitizeAttrs(name, node.attrs), node.src, false), node, marks);
      // A list directly inside a list (what execCommand('indent') makes) belongs to the item before it.
      if (name === 'ul' || name === 'ol') return block(node, b.open ? b.open.b : b.implicitChild('li'), marks);
      return block(node, b.implicitChild('li'), marks);
    case 'table':
      if (['thead', 'tbody', 'tfoot', 'colgroup'].includes(name)) return fill(b.start(name, sanitizeAttrs(name, node.attrs), node.src, false), node, marks);
      return block(node, b.implicitChild('tbody'), marks);
    case 'section':
      if (name === 'tr') return fill(b.start(name, sanitizeAttrs(name, node.attrs), node.src, false), node, marks);
      return block(node, b.implicitChild('tr'), marks);
    case 'tr':
      if (name === 'td' || name === 'th') return fill(b.start(name, sanitizeAttrs(name, node.attrs), node.src, false), node, marks);
      return block(node, b.implicitChild('td'), marks);
    case 'colgroup':
      if (name === 'col') b.start(name, sanitizeAttrs(name, node.attrs), node.src, false);
      return;
    default:
      return;
  }
}

function fill(child: Builder, node: RawElement, marks: Marks): void {
  if (child.content !== 'void') walk(node.children, child, marks);
}

/** A block outside the schema (div, section, figure…): a paragraph when it holds only inline content, else unwrapped. */
function generic(node: RawElement, b: Builder, marks: Marks): void {
  if (b.content === 'root' || b.content === 'flow') {
    if (hasBlockDescendant(node)) {
      b.closeOpen();
      walk(node.children, b, marks);
      b.closeOpen();
      return;
    }
    fill(b.start('p', sanitizeAttrs('p', node.attrs), node.src, false), node, marks);
    return;
  }
  const target = inlineTarget(b);
  if (target) block(node, target, marks);
}
