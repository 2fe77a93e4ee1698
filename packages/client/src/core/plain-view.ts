/**
 * The plain-text view of the shared `Y.Text` for the editors that show text only (textarea, CodeMirror 5) and for the
 * session's re-applying of unsynced edits after a reset (reset.ts), and the mapping between plain positions and the
 * `Y.Text`'s.
 *
 * The shared text may be rich (RICHTEXT.md): formats are attributes, and an embed is one position of the `Y.Text`
 * that `toString()` leaves out. The plain view shows it as wave-richtext's `renderText` does [RT-R3]: every string
 * character as itself (a line's `"\n"` is a line break), a `{ break }` embed as a line break, any other embed (an
 * image) as nothing. So a plain editor's index and the `Y.Text` index differ by the hidden embeds before it.
 *
 * Invariants (unit-tested in test/plain-view.test.ts):
 * - `runs` describe the `Y.Text` exactly: their Y lengths add up to `ytext.length`, their shown text is `text`.
 * - A plain insert at index p lands right after the p-th shown character (before hidden embeds that follow it), so it
 *   never moves an image across text; a plain delete of [s, e) deletes the positions of those shown characters and the
 *   hidden embeds strictly between them, never one at either end.
 * - Inserted characters take the inline formats of the character they follow on the same line (or, at a line's
 *   start, of the one they precede), and an inserted `"\n"` the block attributes of the line it splits: typing looks
 *   like its surroundings in a rich editor. Splitting a table cell's line makes a second paragraph of that cell (one
 *   `cell` id on both lines, [RT-T2]), never one more cell in the row; that is the one write to a character the edit
 *   did not type (the split line's `"\n"` gets the cell id, which changes nothing shown).
 */
import type * as Y from 'yjs';
import { INLINE_KEYS, randomId } from 'wave-richtext';

/** A run of the `Y.Text` as the plain view sees it: shown characters (one Y position each), or one hidden embed. */
type Run = string | null;

/** One change of a plain string, in Yjs's delta shape (string inserts only). */
export interface PlainOp {
  retain?: number;
  insert?: string;
  delete?: number;
}

/** A Yjs text delta op as `observe` reports it (embeds are objects). */
export interface YDeltaOp {
  retain?: number;
  insert?: string | object;
  delete?: number;
  attributes?: Record<string, unknown>;
}

const INLINE = new Set<string>(INLINE_KEYS);

/** How an embed shows in plain text [RT-R3]: a break as a line break, anything else as nothing. */
function shownEmbed(embed: object): string {
  return (embed as { break?: unknown }).break === true ? '\n' : '';
}

export class PlainView {
  private runs: Run[] = [];

  /** The plain view of `ytext` as it is now. */
  static of(ytext: Y.Text): PlainView {
    const view = new PlainView();
    view.reset(ytext.toDelta() as YDeltaOp[]);
    return view;
  }

  /** Rebuilds the view from a full delta of the `Y.Text` (`toDelta()`). */
  reset(delta: readonly YDeltaOp[]): void {
    this.runs = [];
    for (const op of delta) if (op.insert !== undefined) this.pushInsert(this.runs, op.insert);
  }

  /** What the plain editor shows. */
  get text(): string {
    let s = '';
    for (const run of this.runs) if (run !== null) s += run;
    return s;
  }

  /** The `Y.Text` length the view describes. */
  get yLength(): number {
    let n = 0;
    for (const run of this.runs) n += run === null ? 1 : run.length;
    return n;
  }

  /**
   * The `Y.Text` index of plain index `p`. `'after-shown'`: right after the p-th shown character (0 for p = 0), before
   * any hidden embeds that follow it — where an insert goes and where a deletion of [., p) ends. `'before-shown'`:
   * right before the (p+1)-th shown character, after hidden embeds — where a deletion of [p, .) starts.
   */
  toY(p: number, side: 'after-shown' | 'before-shown'): number {
    let y = 0;
    let left = Math.max(0, p);
    for (const run of this.runs) {
      if (run === null) {
        if (left === 0 && side === 'after-shown') return y;
        y += 1;
        continue;
      }
      if (left < run.length || (left === run.length && side === 'after-shown')) return y + left;
      left -= run.length;
      y += run.length;
    }
    return y;
  }

  /** The plain index of `Y.Text` index `y`: how many shown characters come before it. */
  toPlain(y: number): number {
    let p = 0;
    let left = Math.max(0, y);
    for (const run of this.runs) {
      if (left === 0) break;
      const len = run === null ? 1 : run.length;
      const step = Math.min(left, len);
      if (run !== null) p += step;
      left -= step;
    }
    return p;
  }

  /**
   * Applies a change of the `Y.Text` (an `observe` event's delta, relative to the text this view describes) and returns
   * the same change of the plain text. Format-only changes (`retain` with attributes) change nothing shown.
   */
  apply(delta: readonly YDeltaOp[]): PlainOp[] {
    const out: PlainOp[] = [];
    const push = (op: PlainOp): void => {
      const last = out[out.length - 1];
      if (op.retain !== undefined && last?.retain !== undefined) last.retain += op.retain;
      else if (op.insert !== undefined && last?.insert !== undefined) last.insert += op.insert;
      else if (op.delete !== undefined && last?.delete !== undefined) last.delete += op.delete;
      else out.push(op);
    };
    const next: Run[] = [];
    let i = 0; // index into this.runs
    let rest: Run | undefined; // the unconsumed part of this.runs[i - 1], when a run was split
    const take = (n: number, keep: boolean): void => {
      while (n > 0) {
        let run: Run;
        if (rest !== undefined) {
          run = rest;
          rest = undefined;
        } else {
          if (i >= this.runs.length) throw new Error('wave: a Y.Text delta longer than the text the plain view describes');
          run = this.runs[i++]!;
        }
        const len = run === null ? 1 : run.length;
        if (len > n) {
          rest = (run as string).slice(n);
          run = (run as string).slice(0, n);
        }
        n -= run === null ? 1 : run.length;
        if (keep) {
          this.pushRun(next, run);
          if (run !== null && run.length > 0) push({ retain: run.length });
        } else if (run !== null && run.length > 0) push({ delete: run.length });
      }
    };
    for (const op of delta) {
      if (op.retain !== undefined) take(op.retain, true);
      else if (op.delete !== undefined) take(op.delete, false);
      else if (op.insert !== undefined) {
        this.pushInsert(next, op.insert);
        const shown = typeof op.insert === 'string' ? op.insert : shownEmbed(op.insert);
        if (shown) push({ insert: shown });
      }
    }
    if (rest !== undefined) this.pushRun(next, rest);
    while (i < this.runs.length) this.pushRun(next, this.runs[i++]!);
    this.runs = next;
    while (out.length > 0 && out[out.length - 1]!.retain !== undefined) out.pop();
    return out;
  }

  private pushInsert(runs: Run[], insert: string | object): void {
    if (typeof insert === 'string') this.pushRun(runs, insert);
    else this.pushRun(runs, shownEmbed(insert) || null);
  }

  private pushRun(runs: Run[], run: Run): void {
    if (run === '') return;
    const last = runs.length > 0 ? runs[runs.length - 1] : null;
    if (run !== null && typeof last === 'string') runs[runs.length - 1] = last + run;
    else runs.push(run);
  }
}

/**
 * Writes one splice of the plain text (`remove` shown characters at plain index `index`, then `insert`) into `ytext`
 * at the mapped positions (see the header for where, and with which attributes), and moves `view` along with it. The
 * caller runs it inside a transaction of its own origin, and its `observe` handler skips that origin's events: the
 * view already holds them.
 */
export function writeSplice(ytext: Y.Text, view: PlainView, index: number, remove: number, insert: string): void {
  if (remove > 0) {
    const start = view.toY(index, 'before-shown');
    const end = view.toY(index + remove, 'after-shown');
    if (end > start) {
      ytext.delete(start, end - start);
      view.apply([{ retain: start }, { delete: end - start }]);
    }
  }
  if (insert.length === 0) return;
  const at = view.toY(index, 'after-shown');
  const ops = ytext.toDelta() as YDeltaOp[];
  const inline = inlineAround(ops, at);
  const { attrs: block, index: lineEnd } = blockOfLineAt(ops, at);
  if (block.table !== undefined && block.cell === undefined && insert.includes('\n') && lineEnd !== null) {
    block.cell = randomId('cell');
    ytext.format(lineEnd, 1, { cell: block.cell });
  }
  // One insert per run of non-"\n" characters and per "\n", each with a fresh attributes object: Yjs writes `null`
  // into it for every format in force that it lacks [RT-E2], which is what keeps other formats from being inherited.
  let y = at;
  for (const piece of insert.split(/(\n)/)) {
    if (piece === '') continue;
    ytext.insert(y, piece, piece === '\n' ? { ...block } : { ...inline });
    y += piece.length;
  }
  view.apply([{ retain: at }, { insert }]);
}

/** Walks `ops` to the item at Y index `y`; returns [op, offset in op] or null past the end. */
function itemAt(ops: readonly YDeltaOp[], y: number): { op: YDeltaOp; offset: number } | null {
  let at = 0;
  for (const op of ops) {
    const len = typeof op.insert === 'string' ? op.insert.length : 1;
    if (y < at + len) return { op, offset: y - at };
    at += len;
  }
  return null;
}

function charAt(item: { op: YDeltaOp; offset: number } | null): string | null {
  if (!item) return null;
  return typeof item.op.insert === 'string' ? item.op.insert[item.offset]! : '\ufffc';
}

function inlineOf(attrs: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(attrs ?? {})) if (INLINE.has(key) && value !== null) out[key] = value;
  return out;
}

/**
 * Inline formats for text inserted at Y index `y`: those of the character before it on the same line, else those of
 * the character after it on the same line, else none. Block keys are never inherited onto inline characters.
 */
function inlineAround(ops: readonly YDeltaOp[], y: number): Record<string, unknown> {
  const before = y > 0 ? itemAt(ops, y - 1) : null;
  if (before && charAt(before) !== '\n') return inlineOf(before.op.attributes);
  const after = itemAt(ops, y);
  if (after && charAt(after) !== '\n') return inlineOf(after.op.attributes);
  return {};
}

/**
 * The block attributes of the line Y index `y` is in (those of the first `"\n"` at or after `y`) and that `"\n"`'s
 * index; none and null past the last.
 */
function blockOfLineAt(ops: readonly YDeltaOp[], y: number): { attrs: Record<string, unknown>; index: number | null } {
  let at = 0;
  for (const op of ops) {
    const len = typeof op.insert === 'string' ? op.insert.length : 1;
    if (typeof op.insert === 'string' && at + len > y) {
      const nl = op.insert.indexOf('\n', Math.max(0, y - at));
      if (nl !== -1) {
        const attrs: Record<string, unknown> = {};
        for (const [key, value] of Object.entries(op.attributes ?? {})) if (!INLINE.has(key) && value !== null) attrs[key] = value;
        return { attrs, index: at + nl };
      }
    }
    at += len;
  }
  return { attrs: {}, index: null };
}
