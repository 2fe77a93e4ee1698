/**
 * The body of a REST `PUT` → the write that replaces the document's content (rooms/replace.ts runs it in one
 * transaction, marks `META_REPLACED_KEY` and stores it, as a client's forceSync does). Every format becomes insert
 * ops on the emptied flat text (`TEXT_TYPE`), so a document written as text, HTML or Delta reads back in all three:
 * - `text/plain`, or JSON `{ "text" }`: the characters as given (each line unformatted);
 * - `text/html`, or JSON `{ "html" }`: parsed as a browser would (html-input.ts), sanitised by wave-richtext;
 * - JSON `{ "delta": ops | { ops } }` or `{ "ops" }`: validated and sanitised (delta-input.ts).
 * Anything else is refused with an `HttpError` naming the field before the document is touched.
 */
import type * as Y from 'yjs';
import { TEXT_TYPE, parseJsonSafely } from 'wave-protocol';
import { linesToDelta, type Op } from 'wave-richtext';
import { DeltaInvalid, deltaOps } from './delta-input.js';
import { HtmlTooDeep, linesOfHtml } from './html-input.js';
import { HttpError } from './http-error.js';

export type ContentWrite = (ydoc: Y.Doc) => void;

/** The write for a PUT body of `contentType` (an absent type reads as `text/plain`). */
export function putContent(contentType: string | undefined, body: string): ContentWrite {
  const type = (contentType ?? 'text/plain').split(';')[0]!.trim().toLowerCase();
  if (type === 'text/plain') return replaceWith([{ insert: body }]);
  if (type === 'text/html') return replaceWith(htmlOps(body, 'body'));
  if (type !== 'application/json') {
    throw new HttpError(415, 'expected text/plain, text/html or application/json', 'unsupported_media_type');
  }
  let value: unknown;
  try {
    value = parseJsonSafely(body);
  } catch {
    throw new HttpError(400, 'body is not JSON', 'invalid_body');
  }
  const o = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  const given = ['text', 'html', 'delta', 'ops'].filter((k) => o[k] !== undefined);
  if (given.length !== 1) {
    throw new HttpError(400, 'expected exactly one of { "text": string }, { "html": string }, { "delta": [ops] } or { "ops": [ops] }', 'invalid_body');
  }
  const field = given[0]!;
  if (field === 'text' || field === 'html') {
    const content = o[field];
    if (typeof content !== 'string') throw new HttpError(400, `${field}: expected a string`, 'invalid_body');
    return replaceWith(field === 'text' ? [{ insert: content }] : htmlOps(content, field));
  }
  try {
    return replaceWith(field === 'ops' ? deltaOps(o, 'body') : deltaOps(o['delta'], 'delta'));
  } catch (error) {
    if (error instanceof DeltaInvalid) throw new HttpError(400, error.message, 'invalid_delta');
    throw error;
  }
}

function htmlOps(html: string, field: string): Op[] {
  try {
    return linesToDelta(linesOfHtml(html));
  } catch (error) {
    if (error instanceof HtmlTooDeep) throw new HttpError(400, `${field}: ${error.message}`, 'html_too_deep');
    throw error;
  }
}

/**
 * Empties the text and inserts `ops`. Each insert gets its own copy of its attributes: Yjs writes `null` into the
 * object for every format in force at that place that it lacks ([RT-E2]), which also keeps a run from inheriting
 * the formats of the run before it.
 */
function replaceWith(ops: readonly Op[]): ContentWrite {
  return (ydoc) => {
    const ytext = ydoc.getText(TEXT_TYPE);
    ytext.delete(0, ytext.length);
    let at = 0;
    for (const op of ops) {
      const attrs = { ...(op.attributes ?? {}) };
      if (typeof op.insert === 'string') {
        if (op.insert === '') continue;
        ytext.insert(at, op.insert, attrs);
        at += op.insert.length;
      } else {
        ytext.insertEmbed(at, op.insert, attrs);
        at += 1;
      }
    }
  };
}
