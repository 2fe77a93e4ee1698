/**
 * A Quill Delta from a REST `PUT` → the insert ops written into the flat rich text (RICHTEXT.md [RT-S1]–[RT-S3]).
 * What holds for every Delta accepted:
 * - It describes a document: insert ops only, each inserting a string, `{ image: URL }` or `{ break: true }`.
 *   Anything else is refused with `DeltaInvalid`, whose message names the field (`delta.ops[3].insert`).
 * - Attributes are sanitised by wave-richtext, never trusted: a `"\n"` carries `sanitizeBlock`'s block attributes,
 *   other characters and embeds `sanitizeInline`'s (an image also `sanitizeImageAttrs`'); unknown or unsafe values
 *   are dropped, so every value written is flat and renderable.
 * - An attribute value nested deeper than `DEFAULT_MAX_VALUE_DEPTH` is refused, as the same value in a client's update
 *   is (rooms/depth-check.ts), rather than silently dropped.
 * - A non-empty document ends with `"\n"` (every line is terminated, [RT-S2]); one is appended when it does not.
 */
import { linesToDelta, readLines, sanitizeBlock, sanitizeImageAttrs, sanitizeInline, safeUrl, type Op } from 'wave-richtext';
import { DEFAULT_MAX_VALUE_DEPTH, valueDepth } from './rooms/depth-check.js';

export class DeltaInvalid extends Error {
  override readonly name = 'DeltaInvalid';
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The ops of `value`, a Delta as JSON: an array of ops or `{ ops: [...] }` (what `GET ?format=delta` answers).
 * `field` names it in errors.
 */
export function deltaOps(value: unknown, field: string): Op[] {
  let ops: unknown = value;
  let path = field;
  if (isObject(value)) {
    ops = value['ops'];
    path = `${field}.ops`;
  }
  if (!Array.isArray(ops)) throw new DeltaInvalid(`${field}: expected an array of insert ops or { "ops": [...] }`);
  const out: Op[] = [];
  ops.forEach((op: unknown, i) => {
    for (const o of sanitizedOp(op, `${path}[${i}]`)) out.push(o);
  });
  const last = out[out.length - 1];
  if (last && !(typeof last.insert === 'string' && last.insert.endsWith('\n'))) out.push({ insert: '\n' });
  // Adjacent runs with equal attributes merged: one Yjs insert each, however finely the caller split them.
  return linesToDelta(readLines(out));
}

function sanitizedOp(op: unknown, at: string): Op[] {
  if (!isObject(op)) throw new DeltaInvalid(`${at}: expected an op { "insert", "attributes"? }`);
  for (const key of Object.keys(op)) {
    if (key === 'retain' || key === 'delete') throw new DeltaInvalid(`${at}.${key}: a document is insert ops only (retain and delete describe a change)`);
    if (key !== 'insert' && key !== 'attributes') throw new DeltaInvalid(`${at}.${key}: unknown key (an op has "insert" and "attributes")`);
  }
  const raw = op['attributes'];
  if (raw !== undefined && !isObject(raw)) throw new DeltaInvalid(`${at}.attributes: expected an object`);
  for (const [key, value] of Object.entries(raw ?? {})) {
    if (valueDepth(value, DEFAULT_MAX_VALUE_DEPTH) > DEFAULT_MAX_VALUE_DEPTH) {
      throw new DeltaInvalid(`${at}.attributes.${key}: nested deeper than ${DEFAULT_MAX_VALUE_DEPTH} levels`);
    }
  }
  const insert = op['insert'];
  if (typeof insert === 'string') return textOps(insert, raw);
  if (isObject(insert)) return [embedOp(insert, raw, `${at}.insert`)];
  throw new DeltaInvalid(`${at}.insert: expected a string, { "image": URL } or { "break": true }`);
}

/** A string insert: its text runs with inline attributes, each `"\n"` with block attributes. */
function textOps(insert: string, raw: Record<string, unknown> | undefined): Op[] {
  const out: Op[] = [];
  const inline = withAttributes(sanitizeInline(raw));
  const block = withAttributes(sanitizeBlock(raw));
  insert.split('\n').forEach((text, i) => {
    if (i > 0) out.push({ insert: '\n', ...block });
    if (text !== '') out.push({ insert: text, ...inline });
  });
  return out;
}

function embedOp(insert: Record<string, unknown>, raw: Record<string, unknown> | undefined, at: string): Op {
  const keys = Object.keys(insert);
  if (keys.length === 1 && insert['break'] === true) return { insert: { break: true }, ...withAttributes(sanitizeInline(raw)) };
  if (keys.length === 1 && keys[0] === 'image') {
    const src = safeUrl(insert['image'], 'src');
    if (src === null) throw new DeltaInvalid(`${at}.image: expected a relative or http(s) URL, or a raster data:image URL`);
    return { insert: { image: src }, ...withAttributes({ ...sanitizeInline(raw), ...sanitizeImageAttrs(raw ?? {}) }) };
  }
  throw new DeltaInvalid(`${at}: expected { "image": URL } or { "break": true }`);
}

/** `{ attributes }` when there are any, else nothing (Delta ops carry no empty attributes). */
function withAttributes(attrs: object): { attributes?: Record<string, unknown> } {
  return Object.keys(attrs).length > 0 ? { attributes: { ...attrs } } : {};
}
