/**
 * The normalised rich-text schema shared by editors A (Froala) and D (TinyMCE), and the sanitiser's allow-lists.
 * DOM-free: used on the way in (editor DOM → shared doc) and on the way out (shared doc → a peer's DOM), so
 * nothing outside these lists reaches the document or a peer, whoever wrote it.
 *
 * Shape of the shared `Y.XmlFragment('html')`:
 * - block elements are `Y.XmlElement`s named by their tag: p, h1–h6, pre, blockquote, ul/ol/li (nested), table,
 *   thead/tbody/tfoot, tr, td/th, colgroup/col, hr;
 * - inline content of a block is one `Y.XmlText` per run; inline formatting is Yjs text attributes keyed by tag
 *   name (`{ strong: {} }`, `{ a: { href } }`, as `Y.XmlText#toString` expects), so two users typing in one
 *   paragraph merge character by character;
 * - `<br>` and `<img>` are embeds in that text (`{ br: {} }`, `{ img: { src, … } }`), so a line break or an image
 *   does not split a paragraph's text into several Yjs types.
 */

export type Attrs = Record<string, string>;

/** What a container element holds. */
export type Content = 'root' | 'flow' | 'inline' | 'list' | 'table' | 'section' | 'tr' | 'colgroup' | 'void';

const CONTENT: Readonly<Record<string, Content>> = {
  p: 'inline', h1: 'inline', h2: 'inline', h3: 'inline', h4: 'inline', h5: 'inline', h6: 'inline', pre: 'inline',
  blockquote: 'flow', li: 'flow', td: 'flow', th: 'flow',
  ul: 'list', ol: 'list',
  table: 'table', thead: 'section', tbody: 'section', tfoot: 'section', tr: 'tr', colgroup: 'colgroup',
  hr: 'void', col: 'void',
};

/** The element names the shared document may hold, and what each contains. */
export function contentOf(name: string): Content | undefined {
  return Object.hasOwn(CONTENT, name) ? CONTENT[name] : undefined;
}

/** Elements (and everything inside them) that never become content: active, embedded or metadata. */
export const DROPPED = new Set([
  'script', 'style', 'template', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'svg', 'math',
  'noscript', 'head', 'meta', 'link', 'title', 'base', 'audio', 'video', 'canvas', 'source', 'track', 'param',
  'input', 'select', 'option', 'optgroup', 'datalist', 'textarea', 'map', 'area', 'portal', 'slot', 'dialog',
  'xml', 'xmp', 'plaintext', 'noembed', 'noframes', 'caption',
]);

/** Block-level elements outside the schema: their text is kept (as paragraphs), their markup is not. */
export const GENERIC_BLOCKS = new Set([
  'div', 'section', 'article', 'header', 'footer', 'main', 'nav', 'aside', 'figure', 'figcaption', 'address',
  'details', 'summary', 'dl', 'dt', 'dd', 'center', 'form', 'fieldset', 'legend', 'hgroup', 'body', 'html',
]);

/** Inline formatting tags → the mark they mean. Anything else inline is unwrapped (its text kept). */
export const MARK_TAGS: Readonly<Record<string, string>> = {
  strong: 'strong', b: 'strong', em: 'em', i: 'em', u: 'u', ins: 'u', s: 's', strike: 's', del: 's',
  code: 'code', kbd: 'code', tt: 'code', samp: 'code', sub: 'sub', sup: 'sup',
};

/** Nesting order of marks when rendered (outermost first); also the set of marks the document keeps. */
export const MARK_ORDER = ['a', 'strong', 'em', 'u', 's', 'sub', 'sup', 'code'] as const;
const MARKS = new Set<string>(MARK_ORDER);

/** Inline embeds inside a `Y.XmlText`. */
export const EMBEDS = new Set(['br', 'img']);

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
 * `raw` if it is a URL that cannot run script: a relative URL or one of the allowed schemes. `javascript:`,
 * `vbscript:`, `data:` (except raster images in `src`), `file:` and everything else are refused — also when
 * hidden behind control characters or whitespace, which browsers ignore inside a scheme.
 */
export function safeUrl(raw: string, kind: 'href' | 'src'): string | null {
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

// ---- styles ----

const LENGTH = /^(?:\d{1,5}(?:\.\d{1,4})?(?:px|%|em|rem|pt)|0|auto)$/;
const KEYWORDS = (...words: string[]) => new RegExp(`^(?:${words.join('|')})$`);
const STYLE_VALUES: Readonly<Record<string, RegExp>> = {
  'text-align': KEYWORDS('left', 'right', 'center', 'justify', 'start', 'end'),
  'vertical-align': KEYWORDS('top', 'middle', 'bottom', 'baseline'),
  'margin-left': LENGTH,
  'padding-left': LENGTH,
  width: LENGTH,
  height: LENGTH,
  'border-collapse': KEYWORDS('collapse', 'separate'),
  'list-style-type': KEYWORDS(
    'disc', 'circle', 'square', 'decimal', 'lower-alpha', 'upper-alpha', 'lower-roman', 'upper-roman', 'lower-greek', 'none',
  ),
};

const BLOCK_STYLES = ['text-align', 'margin-left', 'padding-left'];
/** Style properties kept per element; values must match STYLE_VALUES (no url(), no expression(), no colours). */
const STYLES: Readonly<Record<string, readonly string[]>> = {
  p: BLOCK_STYLES, h1: BLOCK_STYLES, h2: BLOCK_STYLES, h3: BLOCK_STYLES, h4: BLOCK_STYLES, h5: BLOCK_STYLES,
  h6: BLOCK_STYLES, pre: BLOCK_STYLES, blockquote: BLOCK_STYLES,
  // TinyMCE hides the bullet of an item that holds only a nested list (`list-style-type: none`): content, so that
  // every peer shows it (dropped, it stayed in one editor only; fuzz, session 7).
  li: ['text-align', 'list-style-type'],
  ul: ['list-style-type', 'margin-left', 'padding-left'], ol: ['list-style-type', 'margin-left', 'padding-left'],
  table: ['width', 'height', 'border-collapse', 'margin-left'],
  td: ['width', 'height', 'text-align', 'vertical-align'], th: ['width', 'height', 'text-align', 'vertical-align'],
  tr: ['height'], col: ['width'], img: ['width', 'height'],
};

/** The declarations of `style` that `name` may keep, in their original order, as `prop: value;` joined by spaces. */
export function sanitizeStyle(name: string, style: string): string | null {
  const allowed = STYLES[name];
  if (!allowed) return null;
  const kept: string[] = [];
  const seen = new Set<string>();
  for (const decl of style.split(';')) {
    const colon = decl.indexOf(':');
    if (colon < 0) continue;
    const prop = decl.slice(0, colon).trim().toLowerCase();
    const value = decl.slice(colon + 1).trim().toLowerCase();
    const pattern = STYLE_VALUES[prop];
    if (!allowed.includes(prop) || !pattern || !pattern.test(value) || seen.has(prop)) continue;
    seen.add(prop);
    kept.push(`${prop}: ${value};`);
  }
  return kept.length > 0 ? kept.join(' ') : null;
}

/** Marks implied by an inline `style` (TinyMCE writes underline as a styled span). */
export function marksFromStyle(style: string): string[] {
  const marks: string[] = [];
  const s = style.toLowerCase();
  if (/font-weight\s*:\s*(bold|bolder|[6-9]00)\b/.test(s)) marks.push('strong');
  if (/font-style\s*:\s*(italic|oblique)\b/.test(s)) marks.push('em');
  if (/text-decoration(?:-line)?\s*:[^;]*\bunderline\b/.test(s)) marks.push('u');
  if (/text-decoration(?:-line)?\s*:[^;]*\bline-through\b/.test(s)) marks.push('s');
  return marks;
}

// ---- attributes ----

const INT = /^\d{1,4}$/;
/** Froala's image display/alignment classes are content (how the author placed the image); nothing else is. */
const IMG_CLASS = /^fr-(?:fic|dib|dii|fil|fir|rounded|bordered|shadow)$/;

/** The attributes `name` keeps: an allow-list per element; URLs and styles are checked, never passed through. */
export function sanitizeAttrs(name: string, raw: Readonly<Record<string, string>>): Attrs {
  const out: Attrs = {};
  const put = (key: string, value: string | null | undefined) => {
    if (value !== null && value !== undefined && value !== '') out[key] = value;
  };
  const get = (key: string): string | undefined => (Object.hasOwn(raw, key) ? raw[key] : undefined);
  const style = get('style');
  // Attribute order is part of the canonical form (Froala's html.get() serialises the DOM's order): the URL
  // first for images, the style first elsewhere, as the editors write them.
  if (style !== undefined && name !== 'img') put('style', sanitizeStyle(name, style));
  switch (name) {
    case 'img': {
      const src = get('src');
      put('src', src === undefined ? null : safeUrl(src, 'src'));
      put('alt', get('alt')?.slice(0, 1000));
      for (const key of ['width', 'height']) if (INT.test(get(key) ?? '')) put(key, get(key));
      if (style !== undefined) put('style', sanitizeStyle(name, style));
      const cls = (get('class') ?? '').split(/\s+/).filter((c) => IMG_CLASS.test(c));
      put('class', cls.join(' '));
      break;
    }
    case 'a': {
      const href = get('href');
      put('href', href === undefined ? null : safeUrl(href, 'href'));
      break;
    }
    case 'td':
    case 'th':
      for (const key of ['colspan', 'rowspan']) if (INT.test(get(key) ?? '') && Number(get(key)) > 1) put(key, get(key));
      if (name === 'th' && /^(?:row|col|rowgroup|colgroup)$/.test(get('scope') ?? '')) put('scope', get('scope'));
      break;
    case 'table':
      if (INT.test(get('border') ?? '')) put('border', get('border'));
      break;
    case 'col':
    case 'colgroup':
      if (INT.test(get('span') ?? '') && Number(get('span')) > 1) put('span', get('span'));
      break;
    case 'ol':
      if (INT.test(get('start') ?? '')) put('start', get('start'));
      if (/^[1aAiI]$/.test(get('type') ?? '')) put('type', get('type'));
      break;
    default:
      break;
  }
  return out;
}

/** A mark's attributes after sanitising, or null when the mark must not exist (unknown, or a link without a safe href). */
export function sanitizeMark(name: string, attrs: unknown): Attrs | null {
  if (!MARKS.has(name)) return null;
  if (name !== 'a') return {};
  const href = attrs !== null && typeof attrs === 'object' ? (attrs as Record<string, unknown>)['href'] : undefined;
  const safe = typeof href === 'string' ? safeUrl(href, 'href') : null;
  return safe === null ? null : { href: safe };
}

/** An embed's attributes after sanitising, or null when it is not a known embed (or an image without a safe src). */
export function sanitizeEmbed(name: string, attrs: Readonly<Record<string, string>>): Attrs | null {
  if (name === 'br') return {};
  if (name !== 'img') return null;
  const clean = sanitizeAttrs('img', attrs);
  return clean['src'] === undefined ? null : clean;
}
