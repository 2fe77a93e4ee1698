/**
 * Pure operations on the shared `Y.Text` ([RT-E*]): what the binding writes for a local edit and what the fuzz
 * drives. Each runs in one transaction with the given origin. No text ever moves: Enter inserts a `"\n"`, a merge
 * deletes one, a block change formats one ([RT-E1]).
 *
 * Every insert passes Yjs a fresh attributes object naming what the new text has: Yjs then writes `null` for each
 * format in force at that place that the object lacks (so nothing is inherited from the neighbours), and it
 * writes them INTO the object it is given, which is why it is always a copy ([RT-E2]).
 */
import type * as Y from 'yjs';
import { canonicalLines, rowShortfalls, tableRows, type Row } from './canonical.js';
import { compact, lineLength, lineStarts, readLines } from './lines.js';
import { attrsDiff, repairs, type Repair } from './repairs.js';
import { MAX_INDENT, type Line, type ListKind, type Op } from './schema.js';
import { unitDiff, type DiffStep } from './unit-diff.js';

/** The document's lines. */
export function docLines(ytext: Y.Text): Line[] {
  return readLines(ytext.toDelta() as Op[]);
}

function transact(ytext: Y.Text, origin: unknown, f: () => void): void {
  if (ytext.doc) ytext.doc.transact(f, origin);
  else f();
}

/**
 * One unit of the flat text: a character, an embed or a line's `"\n"`, with its attributes (nulls dropped; units of
 * one op share one attributes object, so a writer passes Yjs a copy, [RT-E2]). `key` compares units by content.
 */
export interface LineUnit {
  key: string;
  insert: string | Record<string, unknown>;
  attrs: Record<string, unknown>;
}

/** `lines` as the units the `Y.Text` holds, in order (a line's characters and embeds, then its `"\n"`). */
export function lineUnits(lines: readonly Line[]): LineUnit[] {
  const out: LineUnit[] = [];
  for (const line of lines) {
    for (const op of line.ops) {
      const attrs = compact(op.attributes);
      if (typeof op.insert === 'string') for (const c of op.insert.split('')) out.push({ key: c, insert: c, attrs });
      else out.push({ key: `\u0000${JSON.stringify(op.insert)}`, insert: op.insert, attrs });
    }
    out.push({ key: '\n', insert: '\n', attrs: compact(line.attrs) });
  }
  return out;
}

const sameAttrs = (a: Record<string, unknown>, b: Record<string, unknown>) => Object.keys(attrsDiff(a, b)).length === 0;

/**
 * Where a local edit happened, when the caller knows (the selection before it): bounds for the diff. The units
 * between them are the ones the edit replaced; bounds that would make the diff delete more are ignored.
 */
export interface EditBounds {
  /** At most this many units at the start of the replaced range are kept (the edit starts there or later). */
  maxPrefix?: number;
  /** At most this many units at the end of the replaced range are kept. */
  maxSuffix?: number;
}

/**
 * Replaces lines `from` (inclusive) to `to` (exclusive) of the document with `lines`, as a character diff (the
 * common start and end kept, and every run the middle shares) plus format calls where kept characters' attributes
 * differ ([RT-E3]). So concurrent typing in the kept characters stays where it was typed. Without `bounds` the
 * diff keeps as much as matches, which may pair a new character with an equal old one next to the edit (`w4q` →
 * `w5q` keeps `w` and `q`); a caller that knows where the edit happened passes `bounds` so that new text is new.
 */
export function replaceLines(ytext: Y.Text, from: number, to: number, lines: readonly Line[], origin?: unknown, bounds: EditBounds = {}): void {
  const current = docLines(ytext);
  const starts = lineStarts(current);
  const base = starts[from]!;
  const old = lineUnits(current.slice(from, to));
  // A document whose last "\n" was deleted: its last line has no "\n" to keep.
  const unterminated = to === current.length && current.length > 0 && ytext.length < starts[current.length]!;
  if (unterminated) old.pop();
  const next = lineUnits(lines);
  // There, the new last "\n" is appended rather than diffed, so that the kept text is not deleted and inserted
  // again (which two peers doing at once would double).
  const tail = unterminated && next.length > 0 && next[next.length - 1]!.key === '\n' ? next.pop()! : null;
  const maxPrefix = bounds.maxPrefix ?? Infinity;
  // Bounds count each line's "\n", also the one an unterminated last line lacks.
  const maxSuffix = (bounds.maxSuffix ?? Infinity) - (tail ? 1 : 0);
  let [p, s] = keptEnds(old, next, maxPrefix, maxSuffix);
  // Bounds only say which of the old units the edit replaced (at most the ones between them): those are replaced
  // whole, so new text is new. A diff they would make delete more does not describe this edit (the caller's
  // selection was not where it changed): it would delete and re-insert kept text, and a collaborator's typing
  // inside it with it. Then, as without bounds, the units between the kept ends are diffed too, and every run
  // the editor kept stays (an editor may change two places at once: a paste that also re-spells a space).
  const bounded = bounds.maxPrefix !== undefined || bounds.maxSuffix !== undefined;
  const replaced = bounded && old.length - p - s <= Math.max(0, old.length - maxPrefix - maxSuffix);
  // `unitDiff` keeps whole words: the common start of `ann12q` and `ann56q` is no common text.
  if (!replaced) [p, s] = [0, 0];
  const middle: DiffStep[] = replaced
    ? [{ kind: -1, n: old.length - p - s }, { kind: 1, n: next.length - p - s }]
    : unitDiff(old.slice(p, old.length - s), next.slice(p, next.length - s));
  transact(ytext, origin, () => {
    const formatRange = (oldFrom: number, newFrom: number, n: number, offset: number) => {
      let k = 0;
      while (k < n) {
        const diff = attrsDiff(old[oldFrom + k]!.attrs, next[newFrom + k]!.attrs);
        let j = k + 1;
        while (j < n && JSON.stringify(attrsDiff(old[oldFrom + j]!.attrs, next[newFrom + j]!.attrs)) === JSON.stringify(diff)) j++;
        if (Object.keys(diff).length > 0) ytext.format(offset + k, j - k, diff);
        k = j;
      }
    };
    /**
     * Inserts `next[from..to)` at `at`, one insert per run of text with equal attributes, one per embed, each with
     * exactly its attributes (the ones it lacks set to `null`). One `applyDelta`: Yjs finds an insert's position
     * from the text's start when it is given attributes (its search markers are for inserts without), so an insert
     * per run would walk the whole text once per line of a paste.
     */
    const insertUnits = (from: number, to: number, at: number) => {
      if (from >= to) return;
      const ops: Array<{ retain?: number; insert?: string | object; attributes?: Record<string, unknown> }> = at > 0 ? [{ retain: at }] : [];
      for (let k = from; k < to; ) {
        const u = next[k]!;
        if (typeof u.insert !== 'string') {
          ops.push({ insert: u.insert, attributes: { ...u.attrs } });
          k++;
          continue;
        }
        let text = '';
        let j = k;
        while (j < to && typeof next[j]!.insert === 'string' && sameAttrs(next[j]!.attrs, u.attrs)) text += next[j++]!.insert as string;
        ops.push({ insert: text, attributes: { ...u.attrs } });
        k = j;
      }
      ytext.applyDelta(ops);
    };
    formatRange(0, 0, p, base);
    let at = base + p;
    let i = p;
    let j = p;
    for (let k = 0; k < middle.length; ) {
      const step = middle[k]!;
      if (step.kind === 0) {
        formatRange(i, j, step.n, at);
        at += step.n;
        i += step.n;
        j += step.n;
        k++;
        continue;
      }
      // A change: the old units it removes and the new ones it adds, between two kept runs.
      let removed = 0;
      let added = 0;
      for (; k < middle.length && middle[k]!.kind !== 0; k++) {
        if (middle[k]!.kind === -1) removed += middle[k]!.n;
        else added += middle[k]!.n;
      }
      // The new units go in right after the old ones, which are deleted after that ([RT-E7]): their Yjs origin is
      // then the last old unit, not the unit before the change, which may be the last letter of a word a
      // collaborator is still typing. Inserted there, they would race that word's next letter for the same origin
      // (Yjs orders the two by client id) and could land inside the word.
      insertUnits(j, j + added, at + removed);
      if (removed > 0) ytext.delete(at, removed);
      at += added;
      i += removed;
      j += added;
    }
    formatRange(old.length - s, next.length - s, s, at);
    if (tail) ytext.insert(base + next.length, '\n', { ...tail.attrs });
  });
}

/** How many units at the start (at most `maxPrefix`) and then at the end (at most `maxSuffix`) `old` and `next` share. */
function keptEnds(old: readonly LineUnit[], next: readonly LineUnit[], maxPrefix: number, maxSuffix: number): [number, number] {
  let p = 0;
  while (p < maxPrefix && p < old.length && p < next.length && old[p]!.key === next[p]!.key) p++;
  let s = 0;
  while (s < maxSuffix && s < old.length - p && s < next.length - p && old[old.length - 1 - s]!.key === next[next.length - 1 - s]!.key) s++;
  return [p, s];
}

/** Sets (value) or removes (`null`) block attributes of line `line` ([RT-E4]). */
export function formatLine(ytext: Y.Text, line: number, attrs: Record<string, unknown>, origin?: unknown): void {
  const lines = docLines(ytext);
  const l = lines[line];
  if (!l) throw new RangeError(`line ${line} out of 0..${lines.length - 1}`);
  const at = lineStarts(lines)[line]! + lineLength(l);
  transact(ytext, origin, () => {
    if (at >= ytext.length) ytext.insert(at, '\n', { ...attrs });
    else ytext.format(at, 1, { ...attrs });
  });
}

function lineAttrs(ytext: Y.Text, line: number): Record<string, unknown> {
  const l = docLines(ytext)[line];
  if (!l) throw new RangeError(`line ${line} out of range`);
  return l.attrs;
}

/** Makes line `line` a list item of `kind`, or a paragraph when it already is one ([RT-E5]). */
export function toggleList(ytext: Y.Text, line: number, kind: ListKind, origin?: unknown): void {
  const a = lineAttrs(ytext, line);
  if (a['list'] === kind && !a['list-cont']) formatLine(ytext, line, { list: null, indent: null, 'list-cont': null }, origin);
  else formatLine(ytext, line, { list: kind, 'list-cont': null, header: null, 'code-block': null }, origin);
}

/** Indents (`by` = 1) or outdents (`by` = -1) a list item, within 0..MAX_INDENT ([RT-E5]). Other lines: nothing. */
export function indentLine(ytext: Y.Text, line: number, by: 1 | -1, origin?: unknown): void {
  const a = lineAttrs(ytext, line);
  if (a['list'] === undefined || a['list'] === null) return;
  const level = Math.max(0, Math.min(MAX_INDENT, (typeof a['indent'] === 'number' ? a['indent'] : 0) + by));
  formatLine(ytext, line, { indent: level === 0 ? null : level }, origin);
}

/** Makes line `line` a heading of `level` (1..6), or a paragraph (`null`) ([RT-E5]). */
export function setHeader(ytext: Y.Text, line: number, level: number | null, origin?: unknown): void {
  formatLine(ytext, line, level === null ? { header: null } : { header: level, list: null, indent: null, 'list-cont': null, 'code-block': null }, origin);
}

/** Puts line `line` in a blockquote, or takes it out ([RT-E5]). */
export function toggleBlockquote(ytext: Y.Text, line: number, origin?: unknown): void {
  const a = lineAttrs(ytext, line);
  formatLine(ytext, line, a['blockquote'] === true ? { blockquote: null, 'quote-depth': null } : { blockquote: true }, origin);
}

interface TableAt {
  rows: Row[];
  row: number;
  cell: number;
  /** Start index of each row's first line, and the index after the table's last line. */
  rowStart: number[];
  width: number;
  tableStyle: unknown;
  /** Text index of each line's start, by line number. */
  starts: number[];
}

function tableAt(ytext: Y.Text, line: number): TableAt | null {
  const lines = docLines(ytext);
  const canonical = canonicalLines(lines);
  const pos = canonical.findIndex((l) => l.source === line);
  if (pos < 0 || canonical[pos]!.attrs.table === undefined) return null;
  let i = pos;
  while (i > 0 && canonical[i - 1]!.attrs.table !== undefined) i--;
  let j = pos;
  while (j < canonical.length && canonical[j]!.attrs.table !== undefined) j++;
  const run = canonical.slice(i, j);
  const rows = tableRows(run);
  const starts = lineStarts(lines);
  const rowStart: number[] = [];
  let row = 0;
  let cell = 0;
  rows.forEach((r, ri) => {
    const firstSource = r.cells.flatMap((c) => c.lines).find((l) => l.source !== undefined)?.source;
    rowStart.push(firstSource === undefined ? -1 : starts[firstSource]!);
    r.cells.forEach((c, ci) => {
      if (c.lines.some((l) => l.source === line)) {
        row = ri;
        cell = ci;
      }
    });
  });
  const lastSource = [...run].reverse().find((l) => l.source !== undefined)!.source!;
  rowStart.push(starts[lastSource + 1]!);
  const short = rowShortfalls(rows);
  const width = rows[0] ? rows[0].cells.reduce((n, c) => n + c.colspan, 0) + short[0]! : 0;
  return { rows, row, cell, rowStart, width, tableStyle: run[0]!.attrs['table-style'], starts };
}

function cellAttrs(rowId: string, tableStyle: unknown): Record<string, unknown> {
  return tableStyle === undefined ? { table: rowId } : { table: rowId, 'table-style': tableStyle };
}

/** Inserts a row of empty cells (as many as the table is wide, id `rowId`) above or below line `line`'s row ([RT-E6]). */
export function insertTableRow(ytext: Y.Text, line: number, below: boolean, rowId: string, origin?: unknown): void {
  const t = tableAt(ytext, line);
  if (!t) return;
  let at = below ? t.rowStart[t.row + 1]! : t.rowStart[t.row]!;
  if (at < 0) return;
  transact(ytext, origin, () => {
    for (let k = 0; k < Math.max(1, t.width); k++) ytext.insert(at++, '\n', cellAttrs(rowId, t.tableStyle));
  });
}

/** Inserts an empty cell left or right of line `line`'s cell, in every row of its table ([RT-E6]). */
export function insertTableColumn(ytext: Y.Text, line: number, right: boolean, origin?: unknown): void {
  const t = tableAt(ytext, line);
  if (!t) return;
  const writes: Array<{ at: number; rowId: string }> = [];
  for (const row of t.rows) {
    const cell = row.cells[Math.min(t.cell, row.cells.length - 1)];
    if (!cell) continue;
    const sources = cell.lines.map((l) => l.source).filter((s): s is number => s !== undefined);
    if (sources.length === 0) continue;
    const at = right ? t.starts[sources[sources.length - 1]! + 1]! : t.starts[sources[0]!]!;
    writes.push({ at, rowId: row.id });
  }
  transact(ytext, origin, () => {
    for (const w of writes.sort((a, b) => b.at - a.at)) ytext.insert(w.at, '\n', cellAttrs(w.rowId, t.tableStyle));
  });
}

/** Inserts a `rows` × `cols` table of empty cells after line `line`; `newId` names each row ([RT-E6]). */
export function insertTable(ytext: Y.Text, line: number, rows: number, cols: number, newId: () => string, origin?: unknown): void {
  const lines = docLines(ytext);
  const at = line < 0 ? 0 : lineStarts(lines)[Math.min(line + 1, lines.length)]!;
  transact(ytext, origin, () => {
    let k = at;
    for (let r = 0; r < rows; r++) {
      const id = newId();
      for (let c = 0; c < cols; c++) ytext.insert(k++, '\n', { table: id });
    }
  });
}

/** Applies `repairs` (repairs.ts) in their order ([RT-R6]). */
export function applyRepairs(ytext: Y.Text, list: readonly Repair[], origin?: unknown): void {
  if (list.length === 0) return;
  transact(ytext, origin, () => {
    for (const r of list) {
      if (r.kind === 'insert') ytext.insert(r.index, '\n', { ...r.attributes });
      else ytext.format(r.index, r.length, { ...r.attributes });
    }
  });
}

/** The repairs of the document in `ytext` (repairs.ts). */
export function repairsOf(ytext: Y.Text): Repair[] {
  return repairs(ytext.toDelta() as Op[]);
}
