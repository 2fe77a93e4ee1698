/**
 * The model fuzz's parts: a seeded generator, three `Y.Doc`s with hand-flushed delivery in random order (no sockets,
 * no timers), and the checks made after each round. Deterministic: clientIDs are fixed and every choice comes from
 * the seed.
 */
import * as Y from 'yjs';
import { serializeOuter, parseFragment } from 'parse5';
import type { DefaultTreeAdapterMap } from 'parse5';
import { canonicalLines, docLines, renderHtml, RICHTEXT_TYPE, type Line, type Op } from '../../src/index.ts';
import { linesOf, tableWidths } from './html.ts';

/** mulberry32: small, fast, good enough to drive a fuzz, and the same on every machine. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const LOCAL = 'local';
export const REMOTE = 'remote';

export interface Peer {
  doc: Y.Doc;
  text: Y.Text;
  undo: Y.UndoManager;
}

/** Three docs; each local update is queued for the two others and delivered when the test says so. */
export class Net {
  readonly peers: Peer[] = [];
  readonly queue: Array<{ to: number; update: Uint8Array }> = [];

  constructor(n: number) {
    for (let i = 0; i < n; i++) {
      const doc = new Y.Doc();
      doc.clientID = i + 1;
      const text = doc.getText(RICHTEXT_TYPE);
      // captureTimeout 0: every local transaction is its own undo step.
      const undo = new Y.UndoManager(text, { trackedOrigins: new Set([LOCAL]), captureTimeout: 0 });
      doc.on('update', (update: Uint8Array, origin: unknown) => {
        if (origin === REMOTE) return;
        for (let j = 0; j < n; j++) if (j !== i) this.queue.push({ to: j, update });
      });
      this.peers.push({ doc, text, undo });
    }
  }

  /** Delivers one queued update, chosen by `rand` (so out of order, also between two updates of one sender). */
  deliverOne(rand: () => number): void {
    if (this.queue.length === 0) return;
    const [m] = this.queue.splice(Math.floor(rand() * this.queue.length), 1);
    Y.applyUpdate(this.peers[m!.to]!.doc, m!.update, REMOTE);
  }

  deliverAll(rand: () => number): void {
    while (this.queue.length > 0) this.deliverOne(rand);
  }
}

/**
 * Words the fuzz types: `w`, one CJK ideograph used by no other word, `q`. Found even with no space around them,
 * and a delete joining the fragments of two words cannot make a third, because each middle character exists once.
 */
export const WORD = /w[\u4e00-\u9fff]q/g;

export function makeWord(n: number): string {
  return `w${String.fromCharCode(0x4e00 + n)}q`;
}

/** How often a word's own character occurs, whole word or not. */
export function charCount(text: string, word: string): number {
  return text.split(word[1]!).length - 1;
}

export function wordsIn(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of text.match(WORD) ?? []) counts.set(m, (counts.get(m) ?? 0) + 1);
  return counts;
}

/** Text positions where typing or Enter splits no word: not strictly inside a `w<n>q`. */
export function boundaries(text: string): number[] {
  const inside = new Set<number>();
  for (const m of text.matchAll(WORD)) for (let k = m.index! + 1; k < m.index! + m[0].length; k++) inside.add(k);
  const out: number[] = [];
  for (let k = 0; k <= text.length; k++) if (!inside.has(k)) out.push(k);
  return out;
}

/** The document's characters with each embed as U+FFFC, `"\n"` included: the positions of `Y.Text`. */
export function flatText(text: Y.Text): string {
  return (text.toDelta() as Op[]).map((op) => (typeof op.insert === 'string' ? op.insert : '\ufffc')).join('');
}

/** Ops `from`..`to` (in units) of `ops`. */
export function sliceOps(ops: readonly Op[], from: number, to: number): Op[] {
  const out: Op[] = [];
  let pos = 0;
  for (const op of ops) {
    const n = typeof op.insert === 'string' ? op.insert.length : 1;
    const a = Math.max(from, pos);
    const b = Math.min(to, pos + n);
    if (a < b) {
      const insert = typeof op.insert === 'string' ? op.insert.slice(a - pos, b - pos) : op.insert;
      out.push(op.attributes ? { insert, attributes: { ...op.attributes } } : { insert });
    }
    pos += n;
  }
  return out;
}

const sorted = (o: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));

/** Lines with row and cell ids renamed in order of appearance, `cell` dropped from one-line cells: ids are names only. */
export function normalizeIds(lines: ReadonlyArray<{ ops: Op[]; attrs: Record<string, unknown> }>): Line[] {
  // A row is a run of adjacent lines with one row id, a cell a run of adjacent lines with one cell id: the same id
  // further on is another row or cell.
  let rows = 0;
  let cells = 0;
  const cellRuns: number[] = [];
  lines.forEach((l, i) => {
    const prev = lines[i - 1];
    const cell = l.attrs['cell'];
    if (cell === undefined) cellRuns.push(0);
    else if (prev && prev.attrs['cell'] === cell && prev.attrs['table'] === l.attrs['table']) cellRuns.push(cellRuns[i - 1]!);
    else cellRuns.push(++cells);
  });
  const runLength = new Map<number, number>();
  for (const c of cellRuns) if (c > 0) runLength.set(c, (runLength.get(c) ?? 0) + 1);
  let rowName = '';
  let cellNames = 0;
  const cellName = new Map<number, string>();
  return lines.map((l, i) => {
    const attrs = { ...l.attrs };
    const prev = lines[i - 1];
    if (attrs['table'] !== undefined) {
      if (!prev || prev.attrs['table'] !== attrs['table']) rowName = `r${++rows}`;
      attrs['table'] = rowName;
    }
    const run = cellRuns[i]!;
    if (run === 0 || runLength.get(run)! < 2) delete attrs['cell'];
    else {
      if (!cellName.has(run)) cellName.set(run, `c${++cellNames}`);
      attrs['cell'] = cellName.get(run);
    }
    return {
      ops: l.ops.map((op) => (op.attributes && Object.keys(op.attributes).length > 0 ? { insert: op.insert, attributes: sorted(op.attributes) } : { insert: op.insert })),
      attrs: sorted(attrs),
    };
  });
}

/**
 * The renderer's output is well-formed HTML: the WHATWG parser reads it back into a tree that serialises to the same
 * string (nothing re-nested, closed or dropped), every table's rows are equally wide, and the parser of this package
 * reads it back as the document's canonical lines. Returns a description of the first failure, or null.
 */
export function checkHtml(lines: readonly Line[]): string | null {
  const html = renderHtml(lines);
  const fragment = parseFragment(html) as DefaultTreeAdapterMap['documentFragment'];
  const again = fragment.childNodes.map((n) => serializeOuter(n as DefaultTreeAdapterMap['childNode'])).join('');
  if (again !== html) return `not well-formed:\n  ours:  ${html}\n  parse: ${again}`;
  for (const widths of tableWidths(html)) if (new Set(widths).size > 1) return `table not rectangular (${widths.join(',')}): ${html}`;
  const canonical = JSON.stringify(normalizeIds(canonicalLines(lines)));
  const back = JSON.stringify(normalizeIds(linesOf(html)));
  if (canonical !== back) return `HTML does not read back as the canonical lines:\n  html:      ${html}\n  canonical: ${canonical}\n  read:      ${back}`;
  return null;
}

export { docLines };
