/**
 * The writes that make a document canonical (canonical.ts): what concurrent edits can leave odd (a list item two
 * levels deeper than the line before, a continuation paragraph without its item, a short table row, conflicting
 * block attributes, a missing final `"\n"`). The renderer already shows the canonical form, so these writes change
 * nothing anyone sees; they only make the stored document say what is shown ([RT-R6]).
 *
 * Idempotent: once applied, `repairs` of the result is empty. Not commutative with itself: two clients applying
 * the same padding concurrently would pad twice, so exactly one client writes them (the binding's choice).
 */
import { canonicalLines } from './canonical.js';
import { lineLength, lineStarts, readLines } from './lines.js';
import { sanitizeImageAttrs, sanitizeInline, type Op } from './schema.js';

/** One write, at `index` in the text as it is after the writes listed before it. */
export type Repair =
  | { kind: 'format'; index: number; length: number; attributes: Record<string, unknown> }
  | { kind: 'insert'; index: number; attributes: Record<string, unknown> };

/** What `from` → `to` needs: `to`'s values, and `null` for each key `from` has and `to` lacks. */
export function attrsDiff(from: Readonly<Record<string, unknown>>, to: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(from)) if (from[k] !== null && from[k] !== undefined && (to[k] === undefined || to[k] === null)) out[k] = null;
  for (const k of Object.keys(to)) if (to[k] !== null && to[k] !== undefined && JSON.stringify(from[k] ?? null) !== JSON.stringify(to[k])) out[k] = to[k];
  return out;
}

function canonicalOpAttrs(op: Op): Record<string, unknown> {
  const inline = sanitizeInline(op.attributes) as Record<string, unknown>;
  return typeof op.insert !== 'string' && Object.hasOwn(op.insert, 'image') ? { ...inline, ...sanitizeImageAttrs(op.attributes ?? {}) } : inline;
}

/**
 * The repairs of a document given as its Delta (`Y.Text#toDelta()`), in the order to apply them (last position
 * first, so that each index is valid when its write comes). Empty for a canonical document.
 */
export function repairs(delta: readonly Op[]): Repair[] {
  const lines = readLines(delta);
  const last = delta[delta.length - 1];
  const terminated = last === undefined || (typeof last.insert === 'string' && last.insert.endsWith('\n'));
  const starts = lineStarts(lines);
  const canonical = canonicalLines(lines);
  const out: Repair[] = [];
  let prevSource = -1;
  for (const line of canonical) {
    if (line.source === undefined) {
      // A padding cell goes after the line before it (a cell of the same row).
      out.push({ kind: 'insert', index: starts[prevSource + 1]!, attributes: { ...line.attrs } });
      continue;
    }
    const i = line.source;
    prevSource = i;
    const original = lines[i]!;
    const end = starts[i]! + lineLength(original);
    if (!(i === lines.length - 1 && !terminated)) {
      const diff = attrsDiff(original.attrs, line.attrs as Record<string, unknown>);
      if (Object.keys(diff).length > 0) out.push({ kind: 'format', index: end, length: 1, attributes: diff });
    }
    let pos = starts[i]!;
    for (const op of original.ops) {
      const n = typeof op.insert === 'string' ? op.insert.length : 1;
      const diff = attrsDiff(op.attributes ?? {}, canonicalOpAttrs(op));
      if (Object.keys(diff).length > 0) out.push({ kind: 'format', index: pos, length: n, attributes: diff });
      pos += n;
    }
  }
  if (!terminated && lines.length > 0) {
    const lastLine = canonical.filter((l) => l.source === lines.length - 1)[0];
    out.push({ kind: 'insert', index: starts[lines.length]! - 1, attributes: { ...(lastLine?.attrs ?? {}) } });
  }
  // By index, descending; at one index the formats (of what is there now) before the inserts, inserts in order.
  const rank = (r: Repair) => (r.kind === 'format' ? 0 : 1);
  return out
    .map((r, k) => ({ r, k }))
    .sort((a, b) => b.r.index - a.r.index || rank(a.r) - rank(b.r) || a.k - b.k)
    .map(({ r }) => r);
}
