/**
 * Diagnostics of the rich-text binding, for tests only: when the page defines `globalThis.__waveHtmlTrace` as an
 * array, the binding appends a line per write, remote patch, re-render, deferral, caret restore and dropped
 * MutationObserver batch, naming blocks by a small id per Y node. The newest 12,000 lines (≤ 6,000 characters
 * each) are kept. Without that array nothing is computed.
 */
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
