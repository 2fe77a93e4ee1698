/**
 * THE MODEL FUZZ ([RT-F1]): three `Y.Doc`s editing one flat rich text with hand-flushed delivery in random order;
 * random typing, Enter, deletes across line ends, paste over a selection, list toggle/indent/outdent, heading,
 * blockquote, table insert/row/column and cell edits, bold/italic ranges, undo. After each round, once every
 * update is delivered: identical documents; every typed word that no delete or undo touched present exactly once,
 * and no word twice; the renderer's HTML well-formed, tables rectangular, and read back as the canonical lines;
 * the repairs, written by one peer, leave nothing to repair and change nothing shown.
 *
 * Deterministic and replayable: `WAVE_SEED=<n>` runs one seed; a failure prints its seed and op log.
 * `WAVE_LONG=1` (npm run test:long) runs many more seeds; `WAVE_FUZZ_STATS=1` prints what the documents held.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  applyRepairs, docLines, indentLine, insertTable, insertTableColumn, insertTableRow, lineLength, lineStarts,
  renderHtml, repairsOf, replaceLines, setHeader, toggleBlockquote, toggleList, type Line,
} from '../src/index.ts';
import { boundaries, charCount, checkHtml, flatText, LOCAL, makeWord, Net, rng, sliceOps, WORD, wordsIn, type Peer } from './helpers/fuzz.ts';
import { linesOf } from './helpers/html.ts';

const LONG = process.env['WAVE_LONG'] === '1';
const ONE = process.env['WAVE_SEED'];
/** `WAVE_TRACE=1`: the op log also holds each peer's document after each of its ops. */
const TRACE = process.env['WAVE_TRACE'] === '1';
const SEEDS = ONE !== undefined ? [Number(ONE)] : Array.from({ length: LONG ? 40000 : 2000 }, (_, i) => i + 1);
const ROUNDS = 2;
const OPS_PER_ROUND = 12;

interface Stats {
  seeds: number;
  maxLines: number;
  withTable: number;
  withNestedList: number;
  withQuote: number;
  withHeader: number;
  withMultiLineCell: number;
  withCont: number;
  repairsWritten: number;
  crossLineDeletes: number;
  undos: number;
}

class Run {
  readonly rand: () => number;
  readonly net = new Net(3);
  readonly log: string[] = [];
  readonly typed = new Set<string>();
  /** Words a delete, paste or undo removed or split, in the doc that did it. */
  readonly touched = new Set<string>();
  /** Words an undo brought back (an undone delete): two peers' undos may each restore one. */
  readonly restored = new Set<string>();
  nextWord = 0;
  nextId = 0;

  constructor(readonly seed: number, readonly stats: Stats) {
    this.rand = rng(seed);
  }

  int(n: number): number {
    return Math.floor(this.rand() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  word(): string {
    const w = makeWord(++this.nextWord);
    this.typed.add(w);
    return w;
  }
  id(): string {
    return `id${this.seed}-${++this.nextId}`;
  }

  /** Runs `op` on peer `p`, marking the words it removed or split (and, for undo, brought back) in that peer. */
  act(p: number, name: string, op: (peer: Peer) => void, deleted?: readonly [number, number]): void {
    const peer = this.net.peers[p]!;
    const beforeText = flatText(peer.text);
    const before = wordsIn(beforeText);
    // A word with a character in a deleted range is touched, even if the text left still spells it (its last
    // letter deleted, the next word's equal letter now after it).
    if (deleted) for (const m of beforeText.matchAll(WORD)) if (m.index! < deleted[1] && m.index! + m[0].length > deleted[0]) this.touched.add(m[0]);
    this.log.push(`${p}: ${name}`);
    if (TRACE) this.log.push(`   ← ${JSON.stringify(peer.text.toDelta())}`);
    op(peer);
    if (TRACE) this.log.push(`   → ${JSON.stringify(peer.text.toDelta())}`);
    const after = wordsIn(flatText(peer.text));
    for (const [w, n] of before) if ((after.get(w) ?? 0) < n) this.touched.add(w);
    if (name === 'undo') {
      // An undo of a delete brings back the deleted characters as new ones: two peers that deleted the same word
      // and both undo bring back a copy each.
      const afterText = flatText(peer.text);
      for (const w of this.typed) if (charCount(afterText, w) > charCount(beforeText, w)) this.restored.add(w);
    }
  }

  randomLine(peer: Peer): number {
    return this.int(Math.max(1, docLines(peer.text).length));
  }

  step(): void {
    const p = this.int(3);
    const peer = this.net.peers[p]!;
    const text = flatText(peer.text);
    const spots = boundaries(text);
    const at = this.pick(spots);
    const r = this.rand();
    if (r < 0.22) {
      const w = this.word();
      const attrs = this.rand() < 0.2 ? { bold: true } : {};
      this.act(p, `type "${w} " at ${at} ${JSON.stringify(attrs)}`, () => peer.doc.transact(() => peer.text.insert(at, `${w} `, { ...attrs }), LOCAL));
    } else if (r < 0.32) {
      this.act(p, `enter at ${at}`, () => this.enter(peer, at));
    } else if (r < 0.42) {
      const from = this.int(text.length + 1);
      const len = Math.min(text.length - from, 1 + this.int(this.rand() < 0.5 ? 6 : 30));
      if (len <= 0) return;
      if (text.slice(from, from + len).includes('\n')) this.stats.crossLineDeletes++;
      this.act(p, `delete ${from}+${len}`, () => peer.doc.transact(() => peer.text.delete(from, len), LOCAL), [from, from + len]);
    } else if (r < 0.49) {
      const b = this.pick(spots.filter((s) => s >= at));
      this.paste(p, peer, at, b);
    } else if (r < 0.56) {
      const line = this.randomLine(peer);
      const kind = this.pick(['bullet', 'ordered', 'bullet', 'checked'] as const);
      this.act(p, `list ${kind} line ${line}`, () => docLines(peer.text).length > 0 && toggleList(peer.text, line, kind, LOCAL));
    } else if (r < 0.63) {
      const line = this.randomLine(peer);
      const by = this.rand() < 0.65 ? 1 : -1;
      this.act(p, `indent ${by} line ${line}`, () => docLines(peer.text).length > 0 && indentLine(peer.text, line, by, LOCAL));
    } else if (r < 0.67) {
      const line = this.randomLine(peer);
      const level = this.rand() < 0.3 ? null : 1 + this.int(3);
      this.act(p, `header ${level} line ${line}`, () => docLines(peer.text).length > 0 && setHeader(peer.text, line, level, LOCAL));
    } else if (r < 0.71) {
      const line = this.randomLine(peer);
      this.act(p, `blockquote line ${line}`, () => docLines(peer.text).length > 0 && toggleBlockquote(peer.text, line, LOCAL));
    } else if (r < 0.74) {
      const line = this.randomLine(peer) - 1;
      const rows = 1 + this.int(3);
      const cols = 1 + this.int(3);
      this.act(p, `table ${rows}x${cols} after line ${line}`, () => insertTable(peer.text, line, rows, cols, () => this.id(), LOCAL));
    } else if (r < 0.8) {
      const lines = docLines(peer.text);
      const cells = lines.map((l, i) => (l.attrs['table'] ? i : -1)).filter((i) => i >= 0);
      if (cells.length === 0) return;
      const line = this.pick(cells);
      const kind = this.int(4);
      const id = this.id();
      this.act(p, `table ${['row above', 'row below', 'column left', 'column right'][kind]} at line ${line}`, () =>
        kind < 2 ? insertTableRow(peer.text, line, kind === 1, id, LOCAL) : insertTableColumn(peer.text, line, kind === 3, LOCAL),
      );
    } else if (r < 0.88) {
      const from = this.pick(spots);
      const to = this.pick(spots.filter((s) => s >= from));
      const key = this.pick(['bold', 'italic', 'underline', 'link'] as const);
      const value = this.rand() < 0.25 ? null : key === 'link' ? 'https://example.com/x' : true;
      this.act(p, `format ${key}=${value} ${from}..${to}`, () => this.formatInline(peer, from, to, { [key]: value }));
    } else {
      this.stats.undos++;
      this.act(p, 'undo', () => peer.undo.undo());
    }
  }

  /** Enter as an editor does it: the line splits, both halves keep its block (a table cell gets a cell id). */
  enter(peer: Peer, at: number): void {
    const lines = docLines(peer.text);
    const starts = lineStarts(lines);
    let i = 0;
    while (i < lines.length - 1 && starts[i + 1]! <= at) i++;
    const line = lines[i];
    if (!line) {
      peer.doc.transact(() => peer.text.insert(at, '\n', {}), LOCAL);
      return;
    }
    const off = Math.min(at - starts[i]!, lineLength(line));
    const attrs = { ...line.attrs };
    if (attrs['table'] !== undefined && attrs['cell'] === undefined) attrs['cell'] = this.id();
    const split: Line[] = [
      { ops: sliceOps(line.ops, 0, off), attrs: { ...attrs } },
      { ops: sliceOps(line.ops, off, Infinity), attrs: { ...attrs } },
    ];
    replaceLines(peer.text, i, i + 1, split, LOCAL);
  }

  /** Paste of HTML over `a`..`b`: the first pasted line joins the text before, the last the text after. */
  paste(p: number, peer: Peer, a: number, b: number): void {
    const w = () => this.word();
    const html = this.pick([
      () => `<p>${w()} <b>${w()}</b></p>`,
      () => `<p>${w()}</p><ul><li>${w()}</li><li>${w()}<ul><li>${w()}</li></ul></li></ul><p>${w()}</p>`,
      () => `<h2>${w()}</h2><blockquote><p>${w()}</p></blockquote>`,
      () => `<table><tr><td>${w()}</td><td><p>${w()}</p><p>${w()}</p></td></tr><tr><td>${w()}</td></tr></table>`,
      () => `<span>${w()} <i>${w()}</i></span>`,
      () => `<ol><li>${w()}<ul><li>${w()}</li></ul>${w()}</li><li><p>${w()}</p><p>${w()}</p></li></ol>`,
    ])();
    this.act(p, `paste ${a}..${b} ${html}`, () => {
      let n = 0;
      const pasted = linesOf(html, { newId: (kind) => `${kind}${this.seed}-${this.nextId}-${++n}` });
      this.nextId++;
      const lines = docLines(peer.text);
      const starts = lineStarts(lines);
      const lineOf = (pos: number) => {
        let i = 0;
        while (i < lines.length - 1 && starts[i + 1]! <= pos) i++;
        return i;
      };
      if (lines.length === 0) {
        replaceLines(peer.text, 0, 0, pasted, LOCAL);
        return;
      }
      const la = lineOf(a);
      const lb = lineOf(b);
      const before = sliceOps(lines[la]!.ops, 0, a - starts[la]!);
      const after = sliceOps(lines[lb]!.ops, b - starts[lb]!, Infinity);
      const out: Line[] = pasted.map((l) => ({ ops: [...l.ops], attrs: { ...l.attrs } }));
      out[0]!.ops = [...before, ...out[0]!.ops];
      const last = out[out.length - 1]!;
      last.ops = [...last.ops, ...after];
      if (out.length === 1) last.attrs = { ...lines[lb]!.attrs };
      // The selection says where the edit is: what the paste brings is new text, even where it equals old text.
      const rangeEnd = starts[lb + 1]!;
      replaceLines(peer.text, la, lb + 1, out, LOCAL, { maxPrefix: a - starts[la]!, maxSuffix: rangeEnd - b });
    }, [a, b]);
  }

  /** An inline format over `from`..`to`, never on a line's "\n" (as Quill formats text); half through the line diff. */
  formatInline(peer: Peer, from: number, to: number, attrs: Record<string, unknown>): void {
    const text = flatText(peer.text);
    if (this.rand() < 0.5) {
      peer.doc.transact(() => {
        for (let k = from; k < to; k++) if (text[k] !== '\n') peer.text.format(k, 1, { ...attrs });
      }, LOCAL);
      return;
    }
    const lines = docLines(peer.text);
    const starts = lineStarts(lines);
    const touched: number[] = [];
    lines.forEach((_, i) => {
      if (starts[i]! < to && starts[i + 1]! > from) touched.push(i);
    });
    if (touched.length === 0) return;
    const next = touched.map((i) => {
      const line = lines[i]!;
      const a = Math.max(0, from - starts[i]!);
      const b = Math.min(lineLength(line), to - starts[i]!);
      const mid = sliceOps(line.ops, a, b).map((op) => {
        const merged = { ...(op.attributes ?? {}), ...attrs };
        for (const k of Object.keys(merged)) if (merged[k] === null) delete merged[k];
        return Object.keys(merged).length > 0 ? { insert: op.insert, attributes: merged } : { insert: op.insert };
      });
      return { ops: [...sliceOps(line.ops, 0, a), ...mid, ...sliceOps(line.ops, b, Infinity)], attrs: { ...line.attrs } };
    });
    replaceLines(peer.text, touched[0]!, touched[touched.length - 1]! + 1, next, LOCAL);
  }

  check(round: number): void {
    const [a, ...others] = this.net.peers;
    const delta = JSON.stringify(a!.text.toDelta());
    for (const peer of others) assert.equal(JSON.stringify(peer.text.toDelta()), delta, `round ${round}: documents differ`);
    const flat = flatText(a!.text);
    const words = wordsIn(flat);
    for (const w of this.typed) {
      const n = words.get(w) ?? 0;
      if (!this.touched.has(w)) assert.equal(n, 1, `round ${round}: untouched word ${w} present ${n} times`);
      else if (!this.restored.has(w)) assert.ok(charCount(flat, w) <= 1, `round ${round}: word ${w}'s character present ${charCount(flat, w)} times`);
    }
    const lines = docLines(a!.text);
    const problem = checkHtml(lines);
    assert.equal(problem, null, `round ${round}: ${problem}`);
    // One peer writes the repairs; then there is nothing left to repair and nothing shown changed.
    const shown = renderHtml(lines);
    const writer = this.net.peers[this.int(3)]!;
    const list = repairsOf(writer.text);
    if (list.length > 0) {
      this.stats.repairsWritten++;
      this.log.push(`repairs ${JSON.stringify(list)}`);
      applyRepairs(writer.text, list, 'repair');
      this.net.deliverAll(this.rand);
      for (const peer of this.net.peers) {
        assert.deepEqual(repairsOf(peer.text), [], `round ${round}: repairs are not idempotent`);
        assert.equal(renderHtml(docLines(peer.text)), shown, `round ${round}: repairs changed what is shown`);
      }
    }
    this.record(lines);
  }

  record(lines: readonly Line[]): void {
    const s = this.stats;
    s.maxLines = Math.max(s.maxLines, lines.length);
    const has = (f: (l: Line) => boolean) => lines.some(f);
    if (has((l) => l.attrs['table'] !== undefined)) s.withTable++;
    if (has((l) => typeof l.attrs['indent'] === 'number')) s.withNestedList++;
    if (has((l) => l.attrs['blockquote'] === true)) s.withQuote++;
    if (has((l) => l.attrs['header'] !== undefined)) s.withHeader++;
    if (has((l) => l.attrs['cell'] !== undefined)) s.withMultiLineCell++;
    if (has((l) => l.attrs['list-cont'] === true)) s.withCont++;
  }

  run(): void {
    const start = linesOf(`<p>${this.word()} ${this.word()}</p><p>${this.word()}</p><ul><li>${this.word()}</li></ul>`);
    const first = this.net.peers[0]!;
    replaceLines(first.text, 0, 0, start, 'seed');
    this.log.push(`start ${JSON.stringify(first.text.toDelta())}`);
    this.net.deliverAll(this.rand);
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < OPS_PER_ROUND; k++) {
        this.step();
        for (let d = this.int(4); d > 0; d--) this.net.deliverOne(this.rand);
      }
      this.net.deliverAll(this.rand);
      this.check(round);
    }
  }
}

describe('[RT-F1] model fuzz: three docs, random delivery, random edits', () => {
  it(`converges, keeps every typed word once and renders valid HTML over ${SEEDS.length} seeds`, () => {
    const stats: Stats = {
      seeds: 0, maxLines: 0, withTable: 0, withNestedList: 0, withQuote: 0, withHeader: 0, withMultiLineCell: 0,
      withCont: 0, repairsWritten: 0, crossLineDeletes: 0, undos: 0,
    };
    for (const seed of SEEDS) {
      const run = new Run(seed, stats);
      try {
        run.run();
      } catch (err) {
        const msg = err instanceof Error ? err.message : String(err);
        throw new Error(`seed ${seed} (replay: WAVE_SEED=${seed}): ${msg}\nop log:\n  ${run.log.join('\n  ')}`);
      }
      stats.seeds++;
    }
    if (SEEDS.length < 100) return;
    // The fuzz built non-trivial documents: each structure showed up in a good share of the rounds.
    const rounds = stats.seeds * ROUNDS;
    const share = (n: number) => n / rounds;
    const summary = JSON.stringify(stats);
    if (process.env['WAVE_FUZZ_STATS'] === '1') console.log(summary);
    assert.ok(stats.maxLines >= 20, `documents stay tiny: ${summary}`);
    assert.ok(share(stats.withTable) > 0.15, `few tables: ${summary}`);
    assert.ok(share(stats.withNestedList) > 0.15, `few nested lists: ${summary}`);
    assert.ok(share(stats.withQuote) > 0.15, `few quotes: ${summary}`);
    assert.ok(share(stats.withHeader) > 0.15, `few headings: ${summary}`);
    assert.ok(share(stats.withMultiLineCell) > 0.05, `few multi-line cells: ${summary}`);
    assert.ok(share(stats.withCont) > 0.05, `few list continuation paragraphs: ${summary}`);
    assert.ok(stats.crossLineDeletes > stats.seeds, `few deletes across lines: ${summary}`);
    assert.ok(stats.repairsWritten > 0, `no odd shape ever needed a repair: ${summary}`);
  });
});


