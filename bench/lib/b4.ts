/**
 * The B4 real-world editing trace (crdt-benchmarks' automerge-paper: 259,778 edits of a LaTeX paper), replayed into
 * a Y.Doc edit by edit so that the document carries its whole history, then encoded as one update (cached in tmp).
 * The trace is read from ../shared/data and never copied into the repository.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { REPO_ROOT } from './servers.ts';

export const B4_PATH = process.env.BENCH_B4 ?? resolve(REPO_ROOT, '..', 'shared', 'data', 'automerge-paper.json.gz');
export const B4_TEXT = 'text';

export interface Trace {
  startContent: string;
  endContent: string;
  txns: Array<{ patches: Array<[number, number, string]> }>;
}

export interface B4 {
  update: Uint8Array;
  endLength: number;
  edits: number;
  buildMs: number;
}

export function loadTrace(): Trace | null {
  if (!existsSync(B4_PATH)) return null;
  return JSON.parse(gunzipSync(readFileSync(B4_PATH)).toString('utf8')) as Trace;
}

/** Replays the trace into `text`, one edit after the other, all in the caller's transaction (if any). */
export function replay(trace: Trace, text: { insert(i: number, s: string): void; delete(i: number, n: number): void }): void {
  if (trace.startContent) text.insert(0, trace.startContent);
  for (const txn of trace.txns) {
    for (const [pos, del, ins] of txn.patches) {
      if (del > 0) text.delete(pos, del);
      if (ins) text.insert(pos, ins);
    }
  }
}

export async function loadB4(): Promise<B4 | null> {
  const trace = loadTrace();
  if (!trace) return null;
  const edits = trace.txns.reduce((n, t) => n + t.patches.length, 0);
  const cache = join(tmpdir(), `wave-bench-b4-${edits}.bin`);
  if (existsSync(cache)) return { update: new Uint8Array(readFileSync(cache)), endLength: trace.endContent.length, edits, buildMs: NaN };
  const Y = await import('yjs');
  const doc = new Y.Doc();
  const text = doc.getText(B4_TEXT);
  const t0 = performance.now();
  if (trace.startContent) text.insert(0, trace.startContent);
  for (const txn of trace.txns) {
    doc.transact(() => {
      for (const [pos, del, ins] of txn.patches) {
        if (del > 0) text.delete(pos, del);
        if (ins) text.insert(pos, ins);
      }
    });
  }
  const buildMs = performance.now() - t0;
  if (text.toString() !== trace.endContent) throw new Error('B4 replay does not reproduce endContent');
  const update = Y.encodeStateAsUpdate(doc);
  writeFileSync(cache, update);
  return { update, endLength: trace.endContent.length, edits, buildMs };
}
