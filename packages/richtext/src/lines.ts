/**
 * Delta ops ↔ lines. A line is its inline ops plus the attributes of the `"\n"` that ends it ([RT-S2]).
 * DOM-free and Yjs-free: `readLines` takes what `Y.Text#toDelta()` returns.
 */
import type { Line, Op } from './schema.js';

/**
 * Splits Delta insert ops into lines. Text after the last `"\n"` (a document whose final `"\n"` a concurrent delete
 * removed) is a last line with no block attributes ([RT-S4]).
 */
export function readLines(delta: readonly Op[]): Line[] {
  const lines: Line[] = [];
  let ops: Op[] = [];
  for (const op of delta) {
    if (typeof op.insert !== 'string') {
      ops.push(op.attributes ? { insert: op.insert, attributes: op.attributes } : { insert: op.insert });
      continue;
    }
    const parts = op.insert.split('\n');
    for (let i = 0; i < parts.length; i++) {
      const text = parts[i]!;
      if (text !== '') pushText(ops, text, op.attributes);
      if (i < parts.length - 1) {
        lines.push({ ops, attrs: { ...(op.attributes ?? {}) } });
        ops = [];
      }
    }
  }
  if (ops.length > 0) lines.push({ ops, attrs: {} });
  return lines;
}

/** Appends `text` with `attributes`, merging with the last op when its attributes are the same. */
export function pushText(ops: Op[], text: string, attributes: Record<string, unknown> | undefined): void {
  const last = ops[ops.length - 1];
  if (last && typeof last.insert === 'string' && attrsEqual(last.attributes, attributes)) last.insert += text;
  else ops.push(attributes && Object.keys(attributes).length > 0 ? { insert: text, attributes: { ...attributes } } : { insert: text });
}

/** The Delta of `lines` (each line's ops then its `"\n"`), adjacent equal runs merged. */
export function linesToDelta(lines: readonly Line[]): Op[] {
  const out: Op[] = [];
  for (const line of lines) {
    for (const op of line.ops) {
      if (typeof op.insert === 'string') pushText(out, op.insert, op.attributes);
      else out.push(op.attributes && Object.keys(op.attributes).length > 0 ? { insert: op.insert, attributes: { ...op.attributes } } : { insert: op.insert });
    }
    pushText(out, '\n', line.attrs);
  }
  return out;
}

/** Length of a line's content in `Y.Text` units (UTF-16 units; an embed counts 1), without its `"\n"`. */
export function lineLength(line: Line): number {
  let n = 0;
  for (const op of line.ops) n += typeof op.insert === 'string' ? op.insert.length : 1;
  return n;
}

/** Index in the text of the start of each line, plus the total length as a last entry. */
export function lineStarts(lines: readonly Line[]): number[] {
  const starts = [0];
  let pos = 0;
  for (const line of lines) {
    pos += lineLength(line) + 1;
    starts.push(pos);
  }
  return starts;
}

/** Equality of two attribute sets, absent and `null`/`undefined` values being the same thing. */
export function attrsEqual(a: Readonly<Record<string, unknown>> | undefined, b: Readonly<Record<string, unknown>> | undefined): boolean {
  const keys = new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})]);
  for (const k of keys) {
    const x = a?.[k] ?? null;
    const y = b?.[k] ?? null;
    if (x !== y && JSON.stringify(x) !== JSON.stringify(y)) return false;
  }
  return true;
}

/** The attributes without `null`/`undefined` values. */
export function compact(attrs: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (attrs) for (const k of Object.keys(attrs)) if (attrs[k] !== null && attrs[k] !== undefined) out[k] = attrs[k];
  return out;
}
