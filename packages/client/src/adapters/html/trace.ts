/**
 * Diagnostics of the rich-text binding, for tests only: when the page defines `globalThis.__waveHtmlTrace` as an
 * array, the binding appends a line per write, remote patch, re-render, deferral, caret restore and dropped
 * MutationObserver batch, naming blocks by a small id per Y node. The newest 12,000 lines (≤ 6,000 characters
 * each) are kept. Without that array nothing is computed.
 */
import * as Y from 'yjs';
import { isText } from './dom.js';

const LINES = 12_000;
const LINE_CHARS = 6_000;

/** Whether the page asked for the trace. */
export function traceOn(): boolean {
  return Array.isArray((globalThis as { __waveHtmlTrace?: unknown }).__waveHtmlTrace);
}

/** Appends `event` and its detail (computed only when tracing) to the page's trace. */
export function trace(event: string, detail: () => string): void {
  const sink = (globalThis as { __waveHtmlTrace?: unknown }).__waveHtmlTrace;
  if (!Array.isArray(sink)) return;
  sink.push(`${Math.round(performance.now())} ${event} ${detail().slice(0, LINE_CHARS)}`);
  if (sink.length > LINES) sink.splice(0, sink.length - LINES);
}

/** Updates kept by `recordUpdates` (a 300-operation fuzz run makes a few thousand per page). */
const UPDATES = 100_000;

/**
 * For replaying a page's document outside the browser (a failed fuzz run): when the page defines
 * `globalThis.__waveHtmlUpdates` as an array, appends `[ms, 'state', base64]` with the document's state now, then
 * `[ms, 'local' | 'remote', base64]` per transaction's update (`ms`: `performance.now()`, the trace's clock). Returns
 * the unsubscribe; a no-op without the array. After `UPDATES` entries one `'overflow'` entry ends the record.
 */
export function recordUpdates(doc: Y.Doc): () => void {
  const sink = (globalThis as { __waveHtmlUpdates?: unknown }).__waveHtmlUpdates;
  if (!Array.isArray(sink)) return () => {};
  const base64 = (bytes: Uint8Array): string => {
    let s = '';
    for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(s);
  };
  const at = (): number => Math.round(performance.now());
  sink.push([at(), 'state', base64(Y.encodeStateAsUpdate(doc))]);
  const onUpdate = (update: Uint8Array, _origin: unknown, _doc: Y.Doc, tr: Y.Transaction): void => {
    if (sink.length < UPDATES) sink.push([at(), tr.local ? 'local' : 'remote', base64(update)]);
    else if (sink.length === UPDATES) sink.push([at(), 'overflow', '']); // a replay stops here
  };
  doc.on('update', onUpdate);
  return () => doc.off('update', onUpdate);
}

const traceIds = new WeakMap<object, number>();
let nextTraceId = 0;

/** A short stable name (`#12`) for a Y node in this page's trace. */
export function tid(y: object): string {
  let id = traceIds.get(y);
  if (id === undefined) traceIds.set(y, (id = ++nextTraceId));
  return `#${id}`;
}

/** For the trace: the text around a DOM point, the point shown as `|`. */
export function caretText(node: Node | null, offset: number): string {
  if (!node) return 'none';
  const text = isText(node) ? node.data : node.textContent ?? '';
  const at = isText(node) ? offset : Array.from(node.childNodes).slice(0, offset).reduce((n, c) => n + (c.textContent ?? '').length, 0);
  return JSON.stringify(`${text.slice(Math.max(0, at - 12), at)}|${text.slice(at, at + 12)}`);
}
