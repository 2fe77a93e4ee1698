/**
 * Quill's Delta ↔ the shared `Y.Text` (the Quill adapter's binding; the binding object is the origin of its writes).
 *
 * The `Y.Text` and Quill's document hold the same Delta, position for position, with one translation: a line break
 * inside a block, `{ break: true }` in the shared text [RT-S3], is `{ 'wave-break': true }` in Quill, an inline embed
 * of length 1 registered here. Quill's own `break` blot is its empty-line placeholder, of length 0, which Quill
 * removes beside other content: holding the shared break in it would put every later Quill index one behind the
 * `Y.Text`'s, and Quill's typing one character early.
 *
 * - Remote → Quill: an event's delta is applied with `updateContents`; every insert names, as `null`, each format
 *   Quill has used that it does not carry, so that Quill never extends a neighbour's format over it.
 * - Quill → remote: each `text-change` Quill makes (whatever its source but this binding) is applied to the `Y.Text`
 *   as the same delta. Formats Quill has no name for (ours, RICHTEXT.md [RT-S2]) are never in Quill's deltas, so
 *   Quill's edits leave them as they are on the characters it did not delete.
 * - One block format per line: Quill's line is one blot (a table cell, a list item, a code block, a heading, a
 *   quote), where the shared text names each as its own key, and concurrent block changes merge per key ([RT-S2]):
 *   one person's heading and another's list leave a line with both. Quill would show whichever key it was given
 *   last and, once that key goes, a plain line where the shared text still names the other. So after every change,
 *   remote or Quill's own, each line whose "\n" the change inserted or formatted is given the blot the renderer
 *   shows for the shared attributes (`sanitizeBlock`, [RT-P1]: a table cell, else a list, else a code block, else a
 *   heading, else a quote), and none of the others. The shared text is not written: it keeps both keys, so that
 *   removing the shown one shows the other, in Quill as in the HTML editors.
 * - Quill's code block holds plain text and drops the inline formats it is given; each line such a change touches
 *   that is no code block is given the shared text's inline formats again, so a line that was a code block for a
 *   while shows them as the HTML editors do ([RT-C1]).
 * - Quill's code block also drops the embeds it is given (an image, a break), and Quill's positions after one would
 *   then be one behind the shared text's. A line holding an embed is no code block in the canonical form ([RT-C1]),
 *   and Quill is never given a code block through a change: `code-block` is taken out of every Delta this binding
 *   applies, and `showLines` gives it to the lines that hold no embed. Before a remote change that can put an embed
 *   into a line (an embed inserted, a "\n" or an embed deleted: lines merge), the lines it spans stop being code
 *   blocks in Quill; after it, `showLines` shows each of them as the canonical form says.
 */
import type * as Y from 'yjs';
import { sanitizeBlock } from 'wave-richtext';

/** A Delta op, on either side. */
export interface QuillOp {
  insert?: string | Record<string, unknown>;
  retain?: number | Record<string, unknown>;
  delete?: number;
  attributes?: Record<string, unknown>;
}

/** The part of Quill 2's API this binding uses. */
export interface QuillForSync {
  updateContents(delta: { ops: QuillOp[] } | QuillOp[], source?: unknown): unknown;
  setContents(delta: { ops: QuillOp[] } | QuillOp[], source?: unknown): unknown;
  getLength(): number;
  getContents(index?: number, length?: number): { ops: QuillOp[] };
  getText(index: number, length: number): string;
  getSelection(): { index: number; length: number } | null;
  getLine(index: number): [{ length(): number } | null, number];
  setSelection(index: number, length: number, source?: unknown): void;
  on(name: 'editor-change', fn: (...args: unknown[]) => void): unknown;
  off(name: 'editor-change', fn: (...args: unknown[]) => void): unknown;
  scroll: { registry: { query(name: string): unknown; register(...definitions: unknown[]): unknown } };
  constructor: {
    import(name: 'parchment'): { EmbedBlot: new (...args: never[]) => object };
    import(name: 'delta'): new (ops: QuillOp[]) => QuillDelta;
  };
}

/** Quill's name of the shared text's `{ break: true }` embed. */
const QUILL_BREAK = 'wave-break';

/** Registers the `wave-break` embed in the registry `quill` uses (the global one, or its own with `formats`). */
function registerBreak(quill: QuillForSync): void {
  const registry = quill.scroll.registry;
  if (registry.query(QUILL_BREAK)) return;
  const { EmbedBlot } = quill.constructor.import('parchment');
  // A `<br>` with a class: the class, looked up before the tag, tells it from Quill's placeholder `<br>`.
  const blot = class extends EmbedBlot {
    static blotName = QUILL_BREAK;
    static tagName = 'BR';
    static className = 'wave-break';
    static value(): true {
      return true;
    }
  };
  registry.register(blot);
}

function isBreak(insert: unknown, key: string): boolean {
  return typeof insert === 'object' && insert !== null && (insert as Record<string, unknown>)[key] === true;
}

/** Quill's block formats that are a line's blot (one per line), in the renderer's order of precedence ([RT-P1]). */
const LINE_BLOTS = ['table', 'list', 'code-block', 'header', 'blockquote'] as const;

/**
 * The indices of the "\n"s a change inserted or formatted, in the document after it (`ops` is the change, in the
 * positions of either side: they are the same).
 */
function touchedEnds(ops: readonly QuillOp[], lineEnds: (from: number, length: number) => number[]): number[] {
  const out: number[] = [];
  let pos = 0;
  for (const op of ops) {
    if (op.delete !== undefined) continue;
    const n = op.insert !== undefined ? (typeof op.insert === 'string' ? op.insert.length : 1) : typeof op.retain === 'number' ? op.retain : 1;
    if (typeof op.insert === 'string') {
      for (let i = op.insert.indexOf('\n'); i >= 0; i = op.insert.indexOf('\n', i + 1)) out.push(pos + i);
    } else if (op.retain !== undefined && op.attributes !== undefined) out.push(...lineEnds(pos, n));
    pos += n;
  }
  return out;
}

/** `ops` without the `code-block` format: Quill is given code blocks by `showLines` only. */
function withoutCodeBlock(ops: readonly QuillOp[]): QuillOp[] {
  return ops.map((op) => {
    if (op.attributes === undefined || !('code-block' in op.attributes)) return op;
    const { 'code-block': _code, ...attributes } = op.attributes;
    return { ...op, attributes };
  });
}

const opLength = (op: QuillOp): number => (typeof op.insert === 'string' ? op.insert.length : 1);

/**
 * The parts of a change that can move an embed into another line or change what a line holds: an embed or a "\n"
 * inserted, or a deletion of content holding a "\n" or an embed. Each as `[from, to]` in the document before the
 * change, which `before(from, length)` reads.
 */
function structuralSpans(ops: readonly QuillOp[], before: (from: number, length: number) => readonly QuillOp[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const lineContent = (op: QuillOp) => typeof op.insert !== 'string' || op.insert!.includes('\n');
  let pos = 0;
  // Inserts are one span per position: the inserts of a paste of many lines all sit at the paste's position.
  let insertedAt = -1;
  for (const op of ops) {
    if (op.delete !== undefined) {
      if (before(pos, op.delete).some(lineContent)) out.push([pos, pos + op.delete]);
      pos += op.delete;
    } else if (op.insert !== undefined) {
      if (lineContent(op) && insertedAt !== pos) {
        out.push([pos, pos]);
        insertedAt = pos;
      }
    } else pos += typeof op.retain === 'number' ? op.retain : 1;
  }
  return out;
}

/**
 * The attributes of each "\n" at one of `wanted` (ascending indices) in `ops`, a document's ops from index `from`;
 * and which of those lines hold an embed (read right for every line but the first when `from` is no line start).
 */
function lineAttrs(ops: readonly QuillOp[], from: number, wanted: readonly number[]): [Map<number, Record<string, unknown>>, Set<number>] {
  const out = new Map<number, Record<string, unknown>>();
  const embeds = new Set<number>();
  let embed = false;
  let pos = from;
  let k = 0;
  while (k < wanted.length && wanted[k]! < from) k++;
  for (const op of ops) {
    if (k >= wanted.length) break;
    const n = opLength(op);
    if (typeof op.insert !== 'string') embed = true;
    else {
      for (let i = op.insert.indexOf('\n'); i >= 0; i = op.insert.indexOf('\n', i + 1)) {
        while (k < wanted.length && wanted[k]! < pos + i) k++;
        if (wanted[k] === pos + i) {
          out.set(pos + i, op.attributes ?? {});
          if (embed) embeds.add(pos + i);
        }
        embed = false;
      }
    }
    pos += n;
  }
  return [out, embeds];
}

/**
 * A change giving the lines ending at `ends` (ascending "\n" indices) the inline formats `ops` (the shared text)
 * has there. Quill's code block holds plain text only and drops the formats it is given ([RT-C1]); once the line is
 * no code block, this shows them again, as the HTML editors do.
 */
function inlineFormatsOf(ops: readonly QuillOp[], ends: readonly number[]): QuillOp[] {
  const newlines: number[] = [];
  // The formatted text of the document: [from, to, attributes].
  const runs: Array<[number, number, Record<string, unknown>]> = [];
  let pos = 0;
  for (const op of ops) {
    if (typeof op.insert !== 'string') {
      pos++;
      continue;
    }
    for (let i = op.insert.indexOf('\n'); i >= 0; i = op.insert.indexOf('\n', i + 1)) newlines.push(pos + i);
    if (op.attributes) runs.push([pos, pos + op.insert.length, op.attributes]);
    pos += op.insert.length;
  }
  // Where the line ending at each "\n" starts.
  const starts = new Map<number, number>(newlines.map((at, i) => [at, i > 0 ? newlines[i - 1]! + 1 : 0]));
  const change: QuillOp[] = [];
  let done = 0;
  // Runs and ends both ascend, and `done` never falls: a run that ends before a line's start (or before `done`) is
  // of no later line either, so each line reads only the runs from the first one still open.
  let first = 0;
  for (const end of ends) {
    const start = Math.max(starts.get(end) ?? 0, done);
    while (first < runs.length && runs[first]![1] <= start) first++;
    for (let r = first; r < runs.length && runs[r]![0] < end; r++) {
      const [a, b, attributes] = runs[r]!;
      const from = Math.max(a, start);
      const to = Math.min(b, end);
      if (to <= from) continue;
      change.push({ retain: from - done }, { retain: to - from, attributes });
      done = to;
    }
  }
  return change;
}

/** Shared-text ops → Quill ops. */
export function toQuill(ops: readonly QuillOp[]): QuillOp[] {
  return ops.map((op) => (isBreak(op.insert, 'break') ? { ...op, insert: { [QUILL_BREAK]: true } } : op));
}

/** Quill ops → shared-text ops. */
export function fromQuill(ops: readonly QuillOp[]): QuillOp[] {
  return ops.map((op) => (isBreak(op.insert, QUILL_BREAK) ? { ...op, insert: { break: true } } : op));
}

/** The part of Quill's `Delta` (quill-delta) this binding uses. */
interface QuillDelta {
  ops: QuillOp[];
  slice(from: number, to: number): QuillDelta;
  transformPosition(index: number): number;
}

export class QuillSync {
  /** Every format name Quill has written, each as `null`: added to remote inserts that do not carry it. */
  private readonly unset: Record<string, null> = {};
  private readonly Delta: new (ops: QuillOp[]) => QuillDelta;

  constructor(private readonly ytext: Y.Text, private readonly quill: QuillForSync) {
    registerBreak(quill);
    this.Delta = quill.constructor.import('delta');
    ytext.observe(this.onRemote);
    quill.on('editor-change', this.onQuill);
    this.showAll();
  }

  /** Quill shows the whole shared text. */
  private showAll(): void {
    this.quill.setContents(withoutCodeBlock(toQuill(this.ytext.toDelta() as QuillOp[])), this);
    this.showLines(this.lineEnds(0, this.quill.getLength()));
  }

  destroy(): void {
    this.ytext.unobserve(this.onRemote);
    this.quill.off('editor-change', this.onQuill);
  }

  private readonly onRemote = (event: Y.YTextEvent, tr: Y.Transaction): void => {
    if (tr.origin === this) return;
    const ops = toQuill(event.delta as QuillOp[]).map((op) =>
      op.insert === undefined ? op : { ...op, attributes: { ...this.unset, ...(op.attributes ?? {}) } },
    );
    const spans = structuralSpans(ops, (from, length) => this.quill.getContents(from, length).ops);
    // The lines an embed can move into stop being code blocks first, so that Quill's code block drops nothing.
    const unshown: number[] = [];
    for (const [from, to] of spans) unshown.push(...this.lineEnds(from, this.lineEnd(to) + 1 - from, true));
    if (unshown.length > 0) {
      // Positions of the document before the change, which the shared text no longer is: formats Quill only.
      const change: QuillOp[] = [];
      let done = 0;
      for (const at of unshown) {
        change.push({ retain: at - done }, { retain: 1, attributes: { 'code-block': null } });
        done = at + 1;
      }
      this.quill.updateContents(change, this);
    }
    this.quill.updateContents(withoutCodeBlock(ops), this);
    const ends = touchedEnds(ops, this.lineEnds);
    this.showLines(ends.concat(this.linesAt(new this.Delta(ops), [...unshown, ...spans.map(([from]) => from)])));
    // Quill's document always ends with a "\n" of its own; it is the shared text's last one when the shared text ends
    // with a "\n" (a Delta document does), else one more (a plain text seeded by a textarea). A remote change that
    // gives the shared text a final "\n" (forceSync with a Delta over a plain text) leaves Quill with both: Quill
    // takes the shared text again, keeping the selection's indices.
    const length = this.quill.getLength();
    if (length === this.ytext.length + 1 && this.quill.getText(length - 2, 1) === '\n') {
      const selection = this.quill.getSelection();
      this.showAll();
      if (selection) this.quill.setSelection(selection.index, selection.length, this);
    }
  };

  private readonly onQuill = (...args: unknown[]): void => {
    const [name, delta, before, source] = args as [string, QuillDelta | undefined, QuillDelta, unknown];
    if (name !== 'text-change' || !delta?.ops) return;
    for (const op of delta.ops) for (const key of Object.keys(op.attributes ?? {})) this.unset[key] = null;
    if (source === this) return;
    const ops = fromQuill(delta.ops);
    this.ytext.doc!.transact(() => this.ytext.applyDelta(ops), this);
    const spans = structuralSpans(delta.ops, (from, length) => before.slice(from, from + length).ops);
    this.showLines(touchedEnds(delta.ops, this.lineEnds).concat(this.linesAt(delta, spans.map(([from]) => from))));
  };

  /** The "\n"s ending the lines that hold, after `change`, the positions `at` before it. */
  private linesAt(change: QuillDelta, at: readonly number[]): number[] {
    // Each position once: each transform and line lookup walks the document.
    return [...new Set(at)].map((i) => this.lineEnd(change.transformPosition(i)));
  }

  /** The index of the "\n" that ends the line holding Quill's position `index`. */
  private lineEnd(index: number): number {
    const [line, offset] = this.quill.getLine(Math.min(index, this.quill.getLength() - 1));
    return line === null ? this.quill.getLength() - 1 : index - offset + line.length() - 1;
  }

  /** The indices of the "\n"s in Quill's [from, from + length); with `code`, of those that end a code block line. */
  private readonly lineEnds = (from: number, length: number, code = false): number[] => {
    const out: number[] = [];
    let pos = from;
    for (const op of this.quill.getContents(from, length).ops) {
      if (typeof op.insert === 'string' && (!code || op.attributes?.['code-block'] != null)) {
        for (let i = op.insert.indexOf('\n'); i >= 0; i = op.insert.indexOf('\n', i + 1)) out.push(pos + i);
      }
      pos += opLength(op);
    }
    return out;
  };

  /**
   * Gives each line ending at one of `ends` (indices of "\n"s, in both documents) the one line blot the renderer
   * shows for the shared text's attributes there, and none of the others.
   */
  private showLines(ends: readonly number[]): void {
    if (ends.length === 0) return;
    const registry = this.quill.scroll.registry;
    const blots = LINE_BLOTS.filter((name) => registry.query(name));
    const wanted = [...new Set(ends)].sort((a, b) => a - b);
    const first = wanted[0]!;
    const shared = this.ytext.toDelta() as QuillOp[];
    const [sharedAttrs, withEmbeds] = lineAttrs(shared, 0, wanted);
    const [shownAttrs] = lineAttrs(this.quill.getContents(first, wanted[wanted.length - 1]! + 1 - first).ops, first, wanted);
    const change: QuillOp[] = [];
    // Lines shown as no code block: they show the shared inline formats (formats Quill dropped in a code block).
    const plain: number[] = [];
    let done = 0;
    for (const at of wanted) {
      const attrs = sharedAttrs.get(at);
      const shown = shownAttrs.get(at);
      if (attrs === undefined || shown === undefined) continue;
      const canonical = sanitizeBlock(attrs, withEmbeds.has(at)) as Record<string, unknown>;
      const winner = blots.find((name) => canonical[name] !== undefined);
      const format: Record<string, unknown> = {};
      // The others first: Quill replaces the line's blot with each block format it is given, the last one staying.
      for (const name of blots) if (name !== winner && shown[name] !== undefined && shown[name] !== null) format[name] = null;
      // Quill names a code block's language ('plain' for the shared text's `true`): any value shows the code block.
      if (winner !== undefined && (winner === 'code-block' ? shown[winner] == null : shown[winner] !== canonical[winner])) format[winner] = canonical[winner];
      if (winner !== 'code-block') plain.push(at);
      if (Object.keys(format).length === 0) continue;
      change.push({ retain: at - done }, { retain: 1, attributes: format });
      done = at + 1;
    }
    if (change.length > 0) this.quill.updateContents(change, this);
    const formats = inlineFormatsOf(shared, plain);
    if (formats.length > 0) this.quill.updateContents(formats, this);
  }

}
