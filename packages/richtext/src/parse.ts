/**
 * HTML → lines. Reads a tree of nodes through a minimal interface that DOM nodes satisfy (so the client passes the
 * editor's DOM) and that a small adapter gives any HTML parser's tree (the tests use parse5). Total: any tree gives
 * lines; unknown inline markup is unwrapped, unknown blocks are paragraphs, structure that the flat model cannot
 * hold is flattened by the rules of RICHTEXT.md, text is never dropped except inside dropped elements (script,
 * style, iframe, …), and every attribute, URL and colour passes the schema's checks ([RT-X1]).
 */
import { pushText } from './lines.js';
import { MAX_INDENT, MAX_QUOTE_DEPTH, parseStyle, safeColor, safeLength, safeUrl, sanitizeImageAttrs, sanitizeStyle, type Line, type ListKind, type Op } from './schema.js';

/** The part of a DOM node the parser reads. */
export interface HtmlNode {
  /** 1 element, 3 text; other kinds are ignored. */
  readonly nodeType: number;
  readonly nodeName: string;
  readonly childNodes: ArrayLike<HtmlNode>;
  /** Elements. */
  getAttribute?(name: string): string | null;
  /** Text nodes. */
  readonly data?: string;
  readonly textContent?: string | null;
}

/** How one editor's DOM differs from content: its markers and UI inside the content. */
export interface HtmlDialect {
  /** Editor UI or markers (selection markers, "Powered by"): ignored with everything inside. */
  skip(el: HtmlNode): boolean;
  /** Editor scaffolding whose children are content: the element itself is ignored. */
  unwrap(el: HtmlNode): boolean;
}

export interface ParseOptions {
  /** Defaults to `EDITOR_DIALECT`. */
  dialect?: HtmlDialect;
  /** Id for a new table row (`table` attribute) or multi-line cell (`cell`); unique in the document. */
  newId?: (kind: 'row' | 'cell') => string;
  /**
   * Called for every point of the tree that the parser reads, in document order: each offset in a text node (0 to
   * its length, UTF-16 units) and each child boundary of an element whose children it reads. `line` is the index in
   * the result of the line that a character inserted at that point would be in, and `unit` its offset in that line
   * (`Y.Text` units), as if nothing followed the point: a collapsible space before it is kept, a trailing break not
   * dropped. Points inside what is never read (dropped or skipped elements, `<br>`, `<img>`) are not reported.
   * Returning `true` stops the reading there: `parseHtml` then returns the lines read so far, the last one unfinished.
   */
  onPoint?: PointSink;
}

export type PointSink = (node: HtmlNode, offset: number, line: number, unit: number) => boolean | void;

/** Thrown by the reader when `onPoint` asks to stop, caught by `parseHtml`. */
const STOP_READING = Symbol('stop reading');

const ELEMENT = 1;
const TEXT = 3;

const attr = (el: HtmlNode, name: string): string | null => el.getAttribute?.(name) ?? null;
const hasClass = (el: HtmlNode, cls: string): boolean => (attr(el, 'class') ?? '').split(/\s+/).includes(cls);
const tagOf = (el: HtmlNode): string => el.nodeName.toLowerCase();
const onlyZeroWidth = (el: HtmlNode): boolean => /^[\u200b\ufeff]*$/.test(el.textContent ?? '') && !hasElementChild(el);
function hasElementChild(el: HtmlNode): boolean {
  const kids = el.childNodes;
  for (let i = 0; i < kids.length; i++) if (kids[i]!.nodeType === ELEMENT) return true;
  return false;
}

/**
 * Froala's and TinyMCE's markers and UI ([RT-H2]): selection markers that hold at most a zero-width space
 * (anything with content is read, and sanitised, as content), Froala's "Powered by" paragraph and tooltips,
 * TinyMCE's `data-mce-bogus="all"` UI, caret containers and resize handles; TinyMCE's other bogus wrappers are
 * unwrapped (a bogus `<br>` is its placeholder, dropped as any trailing `<br>` is).
 */
export const EDITOR_DIALECT: HtmlDialect = {
  skip: (el) =>
    ((hasClass(el, 'fr-marker') || attr(el, 'data-mce-type') === 'bookmark') && onlyZeroWidth(el)) ||
    attr(el, 'data-f-id') === 'pbf' || hasClass(el, 'fr-tooltip') || attr(el, 'data-mce-bogus') === 'all' ||
    attr(el, 'data-mce-caret') !== null || hasClass(el, 'mce-offscreen-selection') || hasClass(el, 'mce-resizehandle'),
  unwrap: (el) => attr(el, 'data-mce-bogus') !== null && tagOf(el) !== 'br',
};

/** Elements (and everything inside them) that never become content: active, embedded or metadata ([RT-X4]). */
const DROPPED = new Set([
  'script', 'style', 'template', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'svg', 'math',
  'noscript', 'head', 'meta', 'link', 'title', 'base', 'audio', 'video', 'canvas', 'source', 'track', 'param',
  'input', 'select', 'option', 'optgroup', 'datalist', 'textarea', 'map', 'area', 'portal', 'slot', 'dialog',
  'xml', 'xmp', 'plaintext', 'noembed', 'noframes', 'caption', 'colgroup', 'col', 'hr',
]);

/** Block-level elements without a meaning of their own: their content is kept as paragraphs ([RT-H3]). */
const GENERIC_BLOCKS = new Set([
  'p', 'div', 'section', 'article', 'header', 'footer', 'main', 'nav', 'aside', 'figure', 'figcaption', 'address',
  'details', 'summary', 'dl', 'dt', 'dd', 'center', 'form', 'fieldset', 'legend', 'hgroup', 'body', 'html',
]);
const STRUCTURE = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'pre', 'blockquote', 'ul', 'ol', 'li', 'table', 'thead', 'tbody', 'tfoot', 'tr', 'td', 'th']);

/**
 * Whether element `tag` (lower case) lies inside a line: neither a block (GENERIC_BLOCKS, STRUCTURE) nor an element
 * that never becomes content (DROPPED). A run of such elements and text is one line where a block is expected.
 */
export function isInlineTag(tag: string): boolean {
  return !GENERIC_BLOCKS.has(tag) && !STRUCTURE.has(tag) && !DROPPED.has(tag);
}

/** Inline tags → the format they mean ([RT-H4]). Other inline tags are unwrapped. */
const MARK_TAGS: Readonly<Record<string, [string, unknown]>> = {
  strong: ['bold', true], b: ['bold', true], em: ['italic', true], i: ['italic', true], u: ['underline', true],
  ins: ['underline', true], s: ['strike', true], strike: ['strike', true], del: ['strike', true], code: ['code', true],
  kbd: ['code', true], tt: ['code', true], samp: ['code', true], sub: ['script', 'sub'], sup: ['script', 'super'],
};

/**
 * Whether element `tag` (lower case) is inline formatting: a format of its own (MARK_TAGS), a link, a `<font>` or a
 * `<span>` (styles). Empty, it shows nothing.
 */
export function isFormatTag(tag: string): boolean {
  return Object.hasOwn(MARK_TAGS, tag) || tag === 'a' || tag === 'span' || tag === 'font';
}

type Marks = Record<string, unknown>;

/** Formats implied by an inline `style` (TinyMCE writes underline and colours as styled spans). */
function marksFromStyle(style: string, marks: Marks): Marks {
  const decls = parseStyle(style);
  const out = { ...marks };
  const weight = decls.get('font-weight')?.toLowerCase();
  if (weight !== undefined && /^(?:bold|bolder|[6-9]00)$/.test(weight)) out['bold'] = true;
  if (/^(?:italic|oblique)/.test(decls.get('font-style')?.toLowerCase() ?? '')) out['italic'] = true;
  const deco = `${decls.get('text-decoration') ?? ''} ${decls.get('text-decoration-line') ?? ''}`.toLowerCase();
  if (/\bunderline\b/.test(deco)) out['underline'] = true;
  if (/\bline-through\b/.test(deco)) out['strike'] = true;
  const color = safeColor(decls.get('color'));
  if (color !== null) out['color'] = color;
  const background = safeColor(decls.get('background-color') ?? decls.get('background'));
  if (background !== null) out['background'] = background;
  return out;
}

interface TableCtx {
  style: string | null;
  row: string | null;
  /** The cell being read: its attributes and how many lines it has so far. */
  cell: { count: number; attrs: Record<string, unknown> } | null;
}

/** Where lines being read sit: the block attributes they get. */
interface Ctx {
  header?: number;
  align?: string;
  margin?: string;
  padding?: string;
  code: boolean;
  quote: number;
  list: { kind: ListKind; level: number; item: { lines: number } | null } | null;
  /** Inside a list item or table cell: headers, quotes and code blocks are flattened to paragraphs ([RT-L6], [RT-T6]). */
  inItem: boolean;
  table: TableCtx | null;
  /** Inside a nested table, whose structure is unwrapped ([RT-T7]). */
  nestedTable: boolean;
}

const SPACE_MARK = '\u0001';
/**
 * A zero-width character (U+200B, U+FEFF) while parsing: no content, but a browser lays it out as a character, so a
 * collapsible space next to it does not collapse with the line's start, its end or another space (Chromium shows
 * `ab\u200b \u200b` and `a \u200b b` with their spaces). Editors leave such characters where the caret holds a
 * format (Froala types a space after a bold word into `\u200b\u200b\u200b\u200b`).
 */
const ZW_MARK = '\u0002';
const ZERO_WIDTH = /[\u200b\ufeff]/g;
const isZeroWidth = (c: string): boolean => c === '\u200b' || c === '\ufeff';
const isCollapsible = (c: string): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\r';

class Reader {
  readonly lines: Line[] = [];
  /** The line being read: its ops (no-break spaces kept as U+00A0 until `flush`) and its context. */
  cur: { ops: Op[]; ctx: Ctx } | null = null;
  /**
   * For `onPoint`, what `flush` will keep of the line being read so far: its units, a collapsible space at its end
   * counted (a character after it keeps it); whether the last source character was collapsible whitespace (or the
   * line is at its start or after a break, where whitespace collapses away); whether the last unit kept is such a
   * space (a break trims it). Only `onPoint` reads them.
   */
  private units = 0;
  private prevSpace = true;
  private trailingSpace = false;

  constructor(
    readonly dialect: HtmlDialect,
    readonly newId: (kind: 'row' | 'cell') => string,
    private readonly onPoint?: PointSink,
  ) {}

  open(ctx: Ctx): Op[] {
    if (!this.cur) {
      this.cur = { ops: [], ctx };
      this.units = 0;
      this.prevSpace = true;
      this.trailingSpace = false;
    }
    return this.cur.ops;
  }

  /**
   * Reports the point (node, offset): where a character inserted there would land, `pending` units of the line
   * being read not yet pushed (a code run).
   */
  private point(node: HtmlNode, offset: number, pending = 0): void {
    if (this.onPoint?.(node, offset, this.lines.length, (this.cur ? this.units : 0) + pending) === true) throw STOP_READING;
  }

  /** Counts `n` units that `flush` keeps as they are (characters of a code line, an embed, alternative text). */
  private kept(n: number): void {
    this.units += n;
    this.prevSpace = false;
    this.trailingSpace = false;
  }

  /** Counts one source character of a text outside code, as `cleanSpaces` will keep it. */
  private sourceChar(c: string): void {
    if (isZeroWidth(c)) {
      // A space before it is no longer at the line's end, and one after it is not collapsed (ZW_MARK).
      this.prevSpace = false;
      this.trailingSpace = false;
      return;
    }
    if (!isCollapsible(c)) return this.kept(1);
    if (!this.prevSpace) {
      this.units++;
      this.trailingSpace = true;
    }
    this.prevSpace = true;
  }

  /** Ends the line being read, if any; `force` ends an empty one too (an empty paragraph is a line). */
  flush(force = false, ctx?: Ctx): void {
    if (!this.cur && force && ctx) this.cur = { ops: [], ctx };
    const cur = this.cur;
    if (!cur) return;
    this.cur = null;
    const ops = cur.ctx.code ? dropTrailingBreak(cur.ops) : cleanSpaces(dropTrailingBreak(cur.ops));
    this.lines.push({ ops, attrs: this.attrsOf(cur.ctx) });
  }

  attrsOf(ctx: Ctx): Record<string, unknown> {
    const a: Record<string, unknown> = {};
    if (ctx.table) {
      // Content in a table outside any cell is lifted out of the table, as a paragraph ([RT-T8]).
      if (!ctx.table.cell) return a;
      Object.assign(a, ctx.table.cell.attrs);
      if (ctx.header !== undefined) a['header'] = ctx.header;
      if (ctx.align !== undefined) a['align'] = ctx.align;
      ctx.table.cell.count++;
      return a;
    }
    if (ctx.list) {
      a['list'] = ctx.list.kind;
      if (ctx.list.level > 0) a['indent'] = Math.min(ctx.list.level, MAX_INDENT);
      if (ctx.list.item) {
        if (ctx.list.item.lines > 0) a['list-cont'] = true;
        ctx.list.item.lines++;
      }
    } else if (ctx.code) a['code-block'] = true;
    else if (ctx.header !== undefined) a['header'] = ctx.header;
    if (ctx.quote > 0) {
      a['blockquote'] = true;
      if (ctx.quote > 1) a['quote-depth'] = Math.min(ctx.quote, MAX_QUOTE_DEPTH);
    }
    if (ctx.align !== undefined) a['align'] = ctx.align;
    if (!ctx.list) {
      if (ctx.margin !== undefined) a['margin-left'] = ctx.margin;
      if (ctx.padding !== undefined) a['padding-left'] = ctx.padding;
    }
    return a;
  }

  walk(node: HtmlNode, ctx: Ctx, marks: Marks): void {
    if (node.nodeType === TEXT) return this.text(node, ctx, marks);
    if (node.nodeType !== ELEMENT) return;
    const tag = tagOf(node);
    if (DROPPED.has(tag) || this.dialect.skip(node)) return;
    if (this.dialect.unwrap(node)) return this.children(node, ctx, marks);
    if (tag === 'br') {
      // In a code block a line break ends the code line, as a "\n" there does ([RT-C1]): Froala and TinyMCE spell
      // Enter in a `<pre>` as `<br>`, and a code line holds no break (Quill's code block cannot show one).
      if (ctx.code) this.flush(true, ctx);
      else {
        this.open(ctx).push({ insert: { break: true } });
        // `cleanSpaces` trims a collapsible space before a break; after it, whitespace collapses as at a line's start.
        if (this.trailingSpace) this.units--;
        this.kept(1);
        this.prevSpace = true;
      }
      return;
    }
    if (tag === 'img') return this.image(node, ctx, marks);
    if (GENERIC_BLOCKS.has(tag) || STRUCTURE.has(tag)) return this.block(node, tag, ctx, marks);
    let inner = marks;
    const mark = MARK_TAGS[tag];
    if (mark) inner = { ...inner, [mark[0]]: mark[1] };
    if (tag === 'a') {
      const href = safeUrl(attr(node, 'href'), 'href');
      if (href !== null) inner = { ...inner, link: href };
    }
    if (tag === 'font') {
      const color = safeColor(attr(node, 'color'));
      if (color !== null) inner = { ...inner, color };
    }
    const style = attr(node, 'style');
    if (style) inner = marksFromStyle(style, inner);
    this.children(node, ctx, inner);
  }

  children(node: HtmlNode, ctx: Ctx, marks: Marks): void {
    const kids = node.childNodes;
    for (let i = 0; i < kids.length; i++) {
      if (this.onPoint) this.point(node, i);
      this.walk(kids[i]!, ctx, marks);
    }
    if (this.onPoint) this.point(node, kids.length);
  }

  text(node: HtmlNode, ctx: Ctx, marks: Marks): void {
    const raw = node.data ?? '';
    if (ctx.code) return this.codeText(node, raw, ctx, marks);
    // Whitespace between blocks is source formatting, not content ([RT-H5]); zero-width characters there are none.
    if (raw === '' || (!this.cur && /^[ \t\n\r\u200b\ufeff]*$/.test(raw))) {
      // A character inserted at offset i opens a line there, after the spaces before it that a zero-width character
      // keeps: counted as in a line (`open` starts the count again).
      if (!this.cur) [this.units, this.prevSpace] = [0, true];
      for (let i = 0; this.onPoint && i <= raw.length; i++) {
        this.point(node, i, this.cur ? 0 : this.units);
        if (i < raw.length) this.sourceChar(raw[i]!);
      }
      return;
    }
    const ops = this.open(ctx);
    if (this.onPoint) {
      for (let i = 0; i < raw.length; i++) {
        this.point(node, i);
        this.sourceChar(raw[i]!);
      }
      this.point(node, raw.length);
    }
    pushText(ops, raw.replace(/[ \t\n\r]/g, SPACE_MARK).replace(ZERO_WIDTH, ZW_MARK), marks);
  }

  /**
   * Text in a code block: kept as is, each line break (`\n`, `\r\n` or `\r`) ending the code line, but a no-break space
   * is a plain space here too ([RT-H5]): an editor that turns a paragraph into a code block keeps the paragraph's
   * no-break spaces, and the document holds plain spaces only.
   */
  private codeText(node: HtmlNode, raw: string, ctx: Ctx, marks: Marks): void {
    let run = '';
    let afterCr = false;
    const push = (): void => {
      if (run === '') return;
      pushText(this.open(ctx), run, marks);
      this.kept(run.length);
      run = '';
    };
    for (let i = 0; i < raw.length; i++) {
      if (this.onPoint) this.point(node, i, run.length);
      const c = raw[i]!;
      if (isZeroWidth(c)) continue;
      if (c === '\n' && afterCr) {
        afterCr = false;
        continue;
      }
      afterCr = c === '\r';
      if (c === '\r' || c === '\n') {
        push();
        this.flush(true, ctx);
      } else run += c === '\u00a0' ? ' ' : c;
    }
    if (this.onPoint) this.point(node, raw.length, run.length);
    push();
  }

  image(node: HtmlNode, ctx: Ctx, marks: Marks): void {
    const src = safeUrl(attr(node, 'src'), 'src');
    if (src === null) {
      // An image without a safe source: its alternative text is the content ([RT-X2]).
      const alt = attr(node, 'alt');
      if (alt) {
        pushText(this.open(ctx), alt, marks);
        this.kept(alt.length);
      }
      return;
    }
    const raw: Record<string, unknown> = {};
    for (const key of ['alt', 'width', 'height', 'style', 'class']) {
      const v = attr(node, key);
      if (v !== null) raw[key] = v;
    }
    const attributes = { ...marks, ...sanitizeImageAttrs(raw) };
    const op: Op = Object.keys(attributes).length > 0 ? { insert: { image: src }, attributes } : { insert: { image: src } };
    this.open(ctx).push(op);
    this.kept(1);
  }

  block(node: HtmlNode, tag: string, ctx: Ctx, marks: Marks): void {
    this.flush();
    const before = this.lines.length;
    const inner: Ctx = { ...ctx };
    const style = parseStyle(attr(node, 'style') ?? '');
    const align = style.get('text-align')?.toLowerCase();
    if (align === 'center' || align === 'right' || align === 'justify') inner.align = align;
    else if (align === 'end') inner.align = 'right';
    else if (align === 'left' || align === 'start') delete inner.align;
    const margin = safeLength(style.get('margin-left'));
    if (margin !== null && margin !== '0') inner.margin = margin;
    const padding = safeLength(style.get('padding-left'));
    if (padding !== null && padding !== '0') inner.padding = padding;
    let leaf = GENERIC_BLOCKS.has(tag);
    switch (tag) {
      case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6':
        if (!ctx.list) inner.header = Number(tag[1]);
        leaf = true;
        break;
      case 'pre':
        if (!ctx.inItem) inner.code = true;
        leaf = true;
        break;
      case 'blockquote':
        if (!ctx.inItem && !ctx.table) inner.quote = ctx.quote + 1;
        break;
      case 'ul':
      case 'ol':
        if (ctx.table) break;
        // An item that begins with a nested list has an empty first line ([RT-L4]).
        if (ctx.list?.item && ctx.list.item.lines === 0) this.flush(true, ctx);
        inner.list = { kind: tag === 'ol' ? 'ordered' : 'bullet', level: ctx.list ? ctx.list.level + 1 : 0, item: null };
        inner.inItem = true;
        break;
      case 'li': {
        if (!ctx.list || ctx.table) {
          leaf = true;
          break;
        }
        const checked = attr(node, 'data-checked');
        let kind = ctx.list.kind;
        if (kind === 'bullet' && (checked === 'true' || checked === 'false')) kind = checked === 'true' ? 'checked' : 'unchecked';
        inner.list = { kind, level: ctx.list.level, item: { lines: 0 } };
        delete inner.header;
        break;
      }
      case 'table':
        if (ctx.table || ctx.list) {
          inner.nestedTable = true;
          break;
        }
        inner.table = { style: sanitizeStyle('table', attr(node, 'style')), row: null, cell: null };
        delete inner.align;
        delete inner.margin;
        delete inner.padding;
        inner.quote = 0;
        inner.code = false;
        delete inner.header;
        break;
      case 'tr':
        if (ctx.table && !ctx.nestedTable) inner.table = { ...ctx.table, row: this.newId('row'), cell: null };
        else leaf = true;
        break;
      case 'td':
      case 'th':
        if (ctx.table?.row && !ctx.nestedTable) {
          const a: Record<string, unknown> = { table: ctx.table.row };
          if (tag === 'th') a['th'] = true;
          for (const key of ['colspan', 'rowspan']) {
            const v = attr(node, key);
            if (v !== null && /^\d{1,3}$/.test(v.trim()) && Number(v) > 1) a[key] = Math.min(Number(v), 100);
          }
          const cellStyle = sanitizeStyle('cell', attr(node, 'style'));
          if (cellStyle !== null) a['cell-style'] = cellStyle;
          if (ctx.table.style !== null) a['table-style'] = ctx.table.style;
          inner.table = { ...ctx.table, cell: { count: 0, attrs: a } };
          inner.inItem = true;
        } else leaf = true;
        break;
      default:
        break;
    }
    this.children(node, inner, marks);
    const cell = tag === 'td' || tag === 'th' ? inner.table?.cell : undefined;
    const empty =
      (leaf && this.lines.length === before) || (tag === 'li' && inner.list?.item?.lines === 0) || cell?.count === 0;
    this.flush(empty, inner);
    if (cell && cell.count > 1) {
      // A multi-line cell: every line carries the cell's id ([RT-T2]).
      const id = this.newId('cell');
      for (const line of this.lines.slice(before)) if (line.attrs['table'] === cell.attrs['table']) line.attrs['cell'] = id;
    }
  }
}

/** A `<br>` at the end of a line is invisible (the renderer's placeholder): not content ([RT-H6]). */
function dropTrailingBreak(ops: Op[]): Op[] {
  // Zero-width characters after it are none (ZW_MARK).
  let end = ops.length;
  const zeroWidthOnly = (op: Op): boolean => typeof op.insert === 'string' && op.insert.split(ZW_MARK).join('') === '';
  while (end > 0 && zeroWidthOnly(ops[end - 1]!)) end--;
  const last = ops[end - 1];
  return last && typeof last.insert !== 'string' && last.insert['break'] === true ? [...ops.slice(0, end - 1), ...ops.slice(end)] : ops;
}

/**
 * Whitespace as a browser shows it ([RT-H5]): a run of source whitespace is one space, none at the start or end of
 * the line or next to an in-block break; a no-break space is a space, always kept.
 */
function cleanSpaces(ops: Op[]): Op[] {
  const out: Op[] = [];
  let prevSpace = true; // at the line's start
  for (const op of ops) {
    if (typeof op.insert !== 'string') {
      if (op.insert['break'] === true) trimEnd(out);
      out.push(op);
      prevSpace = op.insert['break'] === true;
      continue;
    }
    let s = '';
    for (const c of op.insert) {
      if (c === ZW_MARK) {
        // Not content: a collapsible space kept right before it stays (no trim), and one after it is kept.
        if (s.endsWith(SPACE_MARK)) s = `${s.slice(0, -1)}\u00a0`;
        else if (s === '') keepLastSpace(out);
        prevSpace = false;
      } else if (c === SPACE_MARK) {
        if (!prevSpace) s += SPACE_MARK;
        prevSpace = true;
      } else {
        s += c;
        prevSpace = false;
      }
    }
    if (s !== '') pushText(out, s, op.attributes);
  }
  trimEnd(out);
  // eslint-disable-next-line no-control-regex -- U+0001 is SPACE_MARK, a collapsible space while parsing
  return out.map((op) => (typeof op.insert === 'string' ? { ...op, insert: op.insert.replace(/[\u0001\u00a0]/g, ' ') } : op)).filter((op) => op.insert !== '');
}

/** A collapsible space ending `ops` becomes a kept one (a no-break space until `cleanSpaces` ends). */
function keepLastSpace(ops: Op[]): void {
  const last = ops[ops.length - 1];
  if (last && typeof last.insert === 'string' && last.insert.endsWith(SPACE_MARK)) last.insert = `${last.insert.slice(0, -1)}\u00a0`;
}

function trimEnd(ops: Op[]): void {
  const last = ops[ops.length - 1];
  if (!last || typeof last.insert !== 'string') return;
  // eslint-disable-next-line no-control-regex -- U+0001 is SPACE_MARK
  last.insert = last.insert.replace(/\u0001+$/, '');
  if (last.insert === '') ops.pop();
}

let counter = 0;
/** Ids unique across documents without coordination: random, plus a counter against a repeated random value. */
export function randomId(kind: 'row' | 'cell'): string {
  counter = (counter + 1) % 1679616;
  return `${kind}-${Math.random().toString(36).slice(2, 8)}${counter.toString(36)}`;
}

/** The lines of the content of `root` (its children; `root` itself is not read). */
export function parseHtml(root: HtmlNode, options: ParseOptions = {}): Line[] {
  const reader = new Reader(options.dialect ?? EDITOR_DIALECT, options.newId ?? randomId, options.onPoint);
  const ctx: Ctx = { code: false, quote: 0, list: null, inItem: false, table: null, nestedTable: false };
  try {
    reader.children(root, ctx, {});
    reader.flush();
  } catch (error) {
    if (error !== STOP_READING) throw error;
  }
  return reader.lines;
}
