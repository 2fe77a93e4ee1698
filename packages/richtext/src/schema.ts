/**
 * The rich-text schema: one flat `Y.Text` in the Quill Delta convention (RICHTEXT.md, [RT-S*]).
 *
 * - Every line ends with `"\n"`; that character's attributes are the line's block ([RT-S2]).
 * - Every other character carries its inline formats as attributes ([RT-S1]); embeds are one character each.
 * - Every value that reaches HTML is checked here (URLs, colours, lengths), on the way in and again on the way out,
 *   so that a hostile peer writing the `Y.Text` directly gets nothing past the renderer ([RT-X1]).
 */

/** Name of the shared `Y.Text` (`doc.getText(RICHTEXT_TYPE)`): the one Quill's adapter (y-quill) opens too. */
export const RICHTEXT_TYPE = 'text';

/** Inline formats of a character ([RT-S1]). Absent keys mean "not formatted". */
export interface InlineAttrs {
  bold?: true;
  italic?: true;
  underline?: true;
  strike?: true;
  /** A safe URL (`safeUrl(…, 'href')`). */
  link?: string;
  code?: true;
  script?: 'sub' | 'super';
  /** A safe CSS colour (`safeColor`). */
  color?: string;
  background?: string;
}

/** An image embed's attributes besides its source ([RT-S3]). */
export interface ImageAttrs {
  alt?: string;
  /** Digits only (HTML `width`/`height` attributes, pixels). */
  width?: string;
  height?: string;
  /** Sanitised `style` (width/height only). */
  style?: string;
  /** Froala's image placement classes (`fr-fic fr-dib`…). */
  class?: string;
}

/** The embeds ([RT-S3]): an image, or a line break inside a block (`<br>`). One character each. */
export type Embed = { image: string } | { break: true };

/** Block attributes on a line's `"\n"` ([RT-S2]). Quill's names where Quill has one, ours for the rest. */
export interface BlockAttrs {
  header?: number;
  list?: ListKind;
  /** List nesting, 1..MAX_INDENT (absent: 0). */
  indent?: number;
  /** Ours: this line is a further paragraph of the list item above at the same indent, not a new item ([RT-L3]). */
  'list-cont'?: true;
  blockquote?: true;
  /** Ours: blockquote nesting, 2..MAX_QUOTE_DEPTH (absent: 1) ([RT-Q2]). */
  'quote-depth'?: number;
  'code-block'?: true | string;
  align?: 'center' | 'right' | 'justify';
  /** Ours: a paragraph's indentation as Froala (`margin-left`) and TinyMCE (`padding-left`) write it. */
  'margin-left'?: string;
  'padding-left'?: string;
  /** Quill 2: the row id of a table cell's line ([RT-T1]). */
  table?: string;
  /** Ours: the cell id shared by the lines of one multi-line cell ([RT-T2]). */
  cell?: string;
  /** Ours: a header cell (`<th>`). */
  th?: true;
  colspan?: number;
  rowspan?: number;
  /** Ours: sanitised `style` of the cell and (read from the table's first cell line) of the table ([RT-T5]). */
  'cell-style'?: string;
  'table-style'?: string;
}

export type ListKind = 'bullet' | 'ordered' | 'checked' | 'unchecked';

/** One Delta insert op as read from the `Y.Text` (attributes may hold anything a peer wrote). */
export interface Op {
  insert: string | Record<string, unknown>;
  attributes?: Record<string, unknown>;
}

/** A line: its inline content (no `"\n"` inside) and the attributes of its terminating `"\n"`. */
export interface Line {
  ops: Op[];
  attrs: Record<string, unknown>;
}

export const INLINE_KEYS = ['link', 'bold', 'italic', 'underline', 'strike', 'script', 'code', 'color', 'background'] as const;
export const BLOCK_KEYS = [
  'header', 'list', 'indent', 'list-cont', 'blockquote', 'quote-depth', 'code-block', 'align', 'margin-left',
  'padding-left', 'table', 'cell', 'th', 'colspan', 'rowspan', 'cell-style', 'table-style',
] as const;

/** Quill's `indent` format allows 1..8. */
export const MAX_INDENT = 8;
/** Deeper quotes are flattened to this depth: nothing an editor's toolbar makes goes deeper. */
export const MAX_QUOTE_DEPTH = 8;
/** Largest colspan/rowspan kept (the HTML spec caps colspan at 1000; a real table stays far below). */
const MAX_SPAN = 100;
/** Longest row or cell id kept. */
const MAX_ID = 64;

// ---- URLs ----

/** Longest href kept: longer ones are almost certainly not links a person made. */
const MAX_HREF = 2048;
/** Longest `data:image` src kept inline; bigger images belong on a server, not in every peer's update stream. */
const MAX_DATA_IMAGE = 512 * 1024;
const SAFE_HREF_SCHEMES = new Set(['http', 'https', 'mailto', 'tel']);
const SAFE_SRC_SCHEMES = new Set(['http', 'https']);
/** Raster images only: an SVG data URL is a document of its own. */
const DATA_IMAGE = /^data:image\/(?:png|gif|jpe?g|webp|bmp|avif);base64,[a-z0-9+/=\s]*$/i;

/**
 * `raw` if it is a URL that cannot run script: a relative URL or one of the allowed schemes; else null. Refuses
 * `javascript:`, `vbscript:`, `data:` (except raster images as `src`), `file:` and the rest, also when hidden
 * behind control characters or whitespace, which browsers ignore inside a scheme ([RT-X2]).
 */
export function safeUrl(raw: unknown, kind: 'href' | 'src'): string | null {
  if (typeof raw !== 'string') return null;
  // eslint-disable-next-line no-control-regex
  const value = raw.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  if (value === '') return null;
  // eslint-disable-next-line no-control-regex
  const probe = value.replace(/[\s\u0000-\u0020\u007f-\u00a0\u1680\u2000-\u200f\u2028\u2029\u202f\u205f\u3000\ufeff]/g, '').toLowerCase();
  const scheme = /^([a-z][a-z0-9+.-]*):/.exec(probe)?.[1];
  if (scheme === undefined) {
    // Relative. A colon before the first slash would make browsers read a scheme after all.
    if (/^[^/?#]*:/.test(probe)) return null;
    return value.length <= MAX_HREF ? value : null;
  }
  if (kind === 'src' && scheme === 'data') return value.length <= MAX_DATA_IMAGE && DATA_IMAGE.test(value) ? value : null;
  const allowed = kind === 'href' ? SAFE_HREF_SCHEMES : SAFE_SRC_SCHEMES;
  return allowed.has(scheme) && value.length <= MAX_HREF ? value : null;
}

// ---- colours and styles ----

const HEX_COLOR = /^#(?:[0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/;
const FN_COLOR = /^(?:rgba?|hsla?)\(\s*[\d.]+%?\s*(?:,\s*[\d.]+%?\s*){2}(?:,\s*[\d.]+%?\s*)?\)$/;
/** A colour keyword: letters only, so it cannot hold `url(`, `expression(` or a `;`. */
const NAMED_COLOR = /^[a-z]{3,20}$/;

/** A CSS colour that cannot carry anything else (hex, rgb()/hsl() of numbers, a keyword), lower-cased; else null. */
export function safeColor(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const v = raw.trim().toLowerCase();
  if (HEX_COLOR.test(v) || FN_COLOR.test(v)) return v.replace(/\s+/g, ' ');
  return NAMED_COLOR.test(v) && v !== 'inherit' && v !== 'initial' && v !== 'unset' ? v : null;
}

const LENGTH = /^(?:\d{1,5}(?:\.\d{1,4})?(?:px|%|em|rem|pt)|0|auto)$/;

/** A CSS length (`12px`, `50%`, `1.5em`, `0`, `auto`), lower-cased; else null. */
export function safeLength(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const v = raw.trim().toLowerCase();
  return LENGTH.test(v) ? v : null;
}

const KEYWORDS = (...words: string[]) => new RegExp(`^(?:${words.join('|')})$`);
const STYLE_VALUES: Readonly<Record<string, RegExp>> = {
  'text-align': KEYWORDS('left', 'right', 'center', 'justify', 'start', 'end'),
  'vertical-align': KEYWORDS('top', 'middle', 'bottom', 'baseline'),
  width: LENGTH,
  height: LENGTH,
  'border-collapse': KEYWORDS('collapse', 'separate'),
  'margin-left': LENGTH,
};

/** Style properties kept per kind of element, in this canonical order ([RT-X3]). */
const STYLES: Readonly<Record<'cell' | 'table' | 'image', readonly string[]>> = {
  cell: ['width', 'height', 'vertical-align'],
  table: ['width', 'height', 'border-collapse', 'margin-left'],
  image: ['width', 'height'],
};

/** Parses a `style` attribute into lower-cased `prop → value`, first declaration of a property winning. */
export function parseStyle(style: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const decl of style.split(';')) {
    const colon = decl.indexOf(':');
    if (colon < 0) continue;
    const prop = decl.slice(0, colon).trim().toLowerCase();
    if (!out.has(prop)) out.set(prop, decl.slice(colon + 1).trim());
  }
  return out;
}

/** The declarations of `style` that an element of `kind` keeps, as `prop: value;` in canonical order; else null. */
export function sanitizeStyle(kind: 'cell' | 'table' | 'image', style: unknown): string | null {
  if (typeof style !== 'string') return null;
  const decls = parseStyle(style);
  const kept: string[] = [];
  for (const prop of STYLES[kind]) {
    const value = decls.get(prop)?.toLowerCase();
    if (value !== undefined && STYLE_VALUES[prop]!.test(value)) kept.push(`${prop}: ${value};`);
  }
  return kept.length > 0 ? kept.join(' ') : null;
}

// ---- attribute values ----

const DIGITS = /^\d{1,4}$/;
/** Froala's image display/alignment classes are content (how the author placed the image); nothing else is. */
const IMG_CLASS = /^fr-(?:fic|dib|dii|fil|fir|rounded|bordered|shadow)$/;

/** An image's attributes (besides `src`) after sanitising; unknown keys dropped. */
export function sanitizeImageAttrs(raw: Readonly<Record<string, unknown>>): ImageAttrs {
  const out: ImageAttrs = {};
  if (typeof raw['alt'] === 'string' && raw['alt'] !== '') out.alt = raw['alt'].slice(0, 1000);
  for (const key of ['width', 'height'] as const) {
    const v = raw[key];
    if (typeof v === 'string' && DIGITS.test(v)) out[key] = v;
  }
  const style = sanitizeStyle('image', raw['style']);
  if (style !== null) out.style = style;
  if (typeof raw['class'] === 'string') {
    const cls = raw['class'].split(/\s+/).filter((c) => IMG_CLASS.test(c));
    if (cls.length > 0) out.class = cls.join(' ');
  }
  return out;
}

/** The inline attributes that are valid, each value checked ([RT-S1], [RT-X1]). */
export function sanitizeInline(raw: Readonly<Record<string, unknown>> | undefined): InlineAttrs {
  const out: InlineAttrs = {};
  if (!raw) return out;
  for (const key of ['bold', 'italic', 'underline', 'strike', 'code'] as const) if (raw[key] === true) out[key] = true;
  const link = safeUrl(raw['link'], 'href');
  if (link !== null) out.link = link;
  if (raw['script'] === 'sub' || raw['script'] === 'super') out.script = raw['script'];
  const color = safeColor(raw['color']);
  if (color !== null) out.color = color;
  const background = safeColor(raw['background']);
  if (background !== null) out.background = background;
  return out;
}

const isInt = (v: unknown, min: number, max: number): v is number => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
const isId = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= MAX_ID;

/**
 * The block attributes of a line as the renderer reads them: each value checked, and the combinations that cannot
 * nest resolved by precedence ([RT-P1]): a table cell is top-level (no list, quote or code); a list item holds
 * paragraphs only (no header or code); a code block has no header; a line holding an embed (`holdsEmbed`: an
 * image, a break) is no code block, since a code block holds text only ([RT-C1]). `list-cont` and `indent` need
 * `list`. List nesting against the lines before is `canonicalLines`' business (render.ts).
 */
export function sanitizeBlock(raw: Readonly<Record<string, unknown>> | undefined, holdsEmbed = false): BlockAttrs {
  const out: BlockAttrs = {};
  if (!raw) return out;
  const table = raw['table'];
  if (isId(table)) {
    out.table = table;
    if (isId(raw['cell'])) out.cell = raw['cell'];
    if (raw['th'] === true) out.th = true;
    if (isInt(raw['colspan'], 2, MAX_SPAN)) out.colspan = raw['colspan'];
    if (isInt(raw['rowspan'], 2, MAX_SPAN)) out.rowspan = raw['rowspan'];
    const cellStyle = sanitizeStyle('cell', raw['cell-style']);
    if (cellStyle !== null) out['cell-style'] = cellStyle;
    const tableStyle = sanitizeStyle('table', raw['table-style']);
    if (tableStyle !== null) out['table-style'] = tableStyle;
  } else {
    const list = raw['list'];
    if (list === 'bullet' || list === 'ordered' || list === 'checked' || list === 'unchecked') {
      out.list = list;
      if (isInt(raw['indent'], 1, MAX_INDENT)) out.indent = raw['indent'];
      if (raw['list-cont'] === true) out['list-cont'] = true;
    }
    if (raw['blockquote'] === true) {
      out.blockquote = true;
      if (isInt(raw['quote-depth'], 2, MAX_QUOTE_DEPTH)) out['quote-depth'] = raw['quote-depth'];
    }
    if (out.list === undefined && !holdsEmbed) {
      const code = raw['code-block'];
      if (code === true || (typeof code === 'string' && /^[a-z0-9+#-]{1,30}$/i.test(code))) out['code-block'] = code;
    }
  }
  if (out.list === undefined && out['code-block'] === undefined && isInt(raw['header'], 1, 6)) out.header = raw['header'];
  const align = raw['align'];
  if (align === 'center' || align === 'right' || align === 'justify') out.align = align;
  if (out.table === undefined && out.list === undefined) {
    const margin = safeLength(raw['margin-left']);
    if (margin !== null) out['margin-left'] = margin;
    const padding = safeLength(raw['padding-left']);
    if (padding !== null) out['padding-left'] = padding;
  }
  return out;
}

/** An embed as the renderer reads it, or null for an unknown one (a hostile peer's: shown as nothing). */
export function sanitizeEmbed(insert: Readonly<Record<string, unknown>>): Embed | null {
  if (insert['break'] === true) return { break: true };
  if (Object.hasOwn(insert, 'image')) {
    const src = safeUrl(insert['image'], 'src');
    return src === null ? null : { image: src };
  }
  return null;
}
