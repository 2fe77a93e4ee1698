/**
 * `wave-richtext`: the rich-text document model (RICHTEXT.md). One flat `Y.Text` named `RICHTEXT_TYPE` in the
 * Quill Delta convention; HTML → lines (`parseHtml`), lines → HTML (`renderHtml`) and plain text (`renderText`),
 * the writes that make an odd shape canonical (`repairs`), and the edits the binding makes (ytext.ts). DOM-free.
 */
export {
  RICHTEXT_TYPE, INLINE_KEYS, BLOCK_KEYS, MAX_INDENT, MAX_QUOTE_DEPTH, safeUrl, safeColor, safeLength,
  sanitizeInline, sanitizeBlock, sanitizeEmbed, sanitizeImageAttrs, sanitizeStyle,
  type InlineAttrs, type BlockAttrs, type ImageAttrs, type Embed, type ListKind, type Op, type Line,
} from './schema.js';
export { readLines, linesToDelta, lineLength, lineStarts, attrsEqual } from './lines.js';
export { canonicalLines, rowShortfalls, tableRows, type CanonicalLine, type Row, type Cell } from './canonical.js';
export { parseHtml, isFormatTag, isInlineTag, EDITOR_DIALECT, randomId, type HtmlNode, type HtmlDialect, type ParseOptions, type PointSink } from './parse.js';
export { renderHtml, renderText, escapeText, escapeAttr, spellSpaces, type RenderOptions } from './render.js';
export { repairs, attrsDiff, type Repair } from './repairs.js';
export {
  docLines, replaceLines, formatLine, toggleList, indentLine, setHeader, toggleBlockquote, insertTableRow,
  insertTableColumn, insertTable, applyRepairs, repairsOf, lineUnits, type EditBounds, type LineUnit,
} from './ytext.js';
