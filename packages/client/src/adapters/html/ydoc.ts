/**
 * The shared `Y.XmlFragment` ↔ the normalised model, and minimal writes: a tree diff by block (common prefix and
 * suffix, then a small alignment of the changed middle), and inside a block a text/format diff written with
 * `Y.XmlText` insert/delete/format. DOM-free.
 */
import * as Y from 'yjs';
import { minimalSplices } from '../text-diff.js';
import { contentOf, sanitizeEmbed, type Attrs, type Content } from './schema.js';
import { attrsKey, embedName, marksKey, plainText, toHtml, type Embed, type Marks, type MElement, type MNode, type MText, type TextOp } from './model.js';
import { cleanMarks, normalize, type RawNode } from './normalize.js';

/** Name of the shared `Y.XmlFragment` of rich-text editors (A and D). */
export const HTML_TYPE = 'html';

export type YNode = Y.XmlElement | Y.XmlText | Y.XmlHook;

/** A Y node as raw input for the normaliser: whatever a peer wrote, it is sanitised from here on. */
export function rawFromY(node: YNode): RawNode | null {
  if (node instanceof Y.XmlText) {
    return { t: 'el', name: '#text-run', attrs: {}, children: rawFromDelta(node.toDelta() as TextOp[]) };
  }
  if (node instanceof Y.XmlElement) {
    const attrs: Record<string, string> = {};
    const yattrs = node.getAttributes() as Record<string, unknown>;
    for (const key of Object.keys(yattrs)) if (typeof yattrs[key] === 'string') attrs[key] = yattrs[key] as string;
    const children: RawNode[] = [];
    for (const child of node.toArray()) {
      const raw = rawFromY(child as YNode);
      if (raw) children.push(...unwrapRun(raw));
    }
    return { t: 'el', name: node.nodeName.toLowerCase(), attrs, children };
  }
  return null;
}

function unwrapRun(raw: RawNode): RawNode[] {
  return raw.t === 'el' && raw.name === '#text-run' ? raw.children : [raw];
}

function rawFromDelta(delta: readonly TextOp[]): RawNode[] {
  const out: RawNode[] = [];
  for (const op of delta) {
    const marks = op.attributes as Record<string, unknown> | undefined;
    if (typeof op.insert === 'string') out.push({ t: 'text', text: op.insert, ...(marks ? { marks } : {}) });
    else if (op.insert !== null && typeof op.insert === 'object' && !(op.insert instanceof Y.AbstractType)) {
      const name = embedName(op.insert as Embed);
      const attrs = (op.insert as Record<string, unknown>)[name];
      const clean: Record<string, string> = {};
      if (attrs && typeof attrs === 'object') for (const [k, v] of Object.entries(attrs)) if (typeof v === 'string') clean[k] = v;
      out.push({ t: 'el', name, attrs: clean, children: [], ...(marks ? { marks } : {}) });
    }
  }
  return out;
}

/** The normalised model of one Y child in a container of kind `content`; usually exactly one node. */
export function modelOfY(node: YNode, content: Content): MNode[] {
  const raw = rawFromY(node);
  if (!raw) return [];
  return normalize(unwrapRun(raw), content);
}

/** The document's blocks, normalised (what every peer shows). */
export function documentOfY(fragment: Y.XmlFragment): MElement[] {
  const raws: RawNode[] = [];
  for (const child of fragment.toArray()) {
    const raw = rawFromY(child as YNode);
    if (raw) raws.push(...unwrapRun(raw));
  }
  return normalize(raws, 'root') as MElement[];
}

/** A new Y node holding `model`. */
export function buildY(model: MNode): Y.XmlElement | Y.XmlText {
  if (model.kind === 'text') {
    const text = new Y.XmlText();
    text.applyDelta(model.ops.map((op) => ({ insert: op.insert, attributes: op.attributes ?? {} })));
    return text;
  }
  const el = new Y.XmlElement(model.name);
  for (const [key, value] of Object.entries(model.attrs)) el.setAttribute(key, value);
  if (model.children.length > 0) el.insert(0, model.children.map(buildY));
  return el;
}

/** The caret in the new content, so that an ambiguous insertion ("a" typed into "aa") lands where it was typed. */
export interface CaretHint {
  text: MText;
  offset: number;
}

/** One existing child while diffing: its Y node, its key, and its model when it is in normal form. */
export interface OldChild {
  y: YNode;
  key: string;
  model: MNode | null;
}

export interface SyncOptions {
  caret?: CaretHint | null;
  /** Tie-breaker between equally similar pairings: the old and the new child are the same block (the same DOM element). */
  sameHint?: (oldIndex: number, newIndex: number) => boolean;
  /**
   * Where collaborators' carets are in an existing Y node, at any depth: offsets in its `plainText`. When an edit
   * splits that node (Enter), it stays with the part holding those carets and the other part moves into a new node,
   * so text a collaborator is typing is never copied away (and two concurrent splits never copy the same text twice).
   * When an edit merges it with a neighbour (a deletion across an inline element or a block boundary), the node with
   * carets is the one kept: a collaborator's keys concurrent with the merge land in it, and in a deleted node they
   * would be lost.
   */
  heldIn?: (y: YNode) => readonly number[];
}

/** Largest changed middle aligned exactly; beyond it blocks are paired by position (a paste of a long document). */
const MAX_ALIGN = 60;

/**
 * Makes `parent`'s children equal `next` with few Y operations, and returns the Y node now holding each of
 * `next`. `old` describes `parent`'s current children (computed here unless given).
 */
export function syncChildren(
  parent: Y.XmlFragment | Y.XmlElement,
  content: Content,
  next: readonly MNode[],
  options: SyncOptions = {},
  old: readonly OldChild[] = describeChildren(parent, content),
): YNode[] {
  const newKeys = next.map((n) => keyOf(n));
  let start = 0;
  const max = Math.min(old.length, next.length);
  while (start < max && old[start]!.key === newKeys[start]) start++;
  let end = 0;
  while (end < max - start && old[old.length - 1 - end]!.key === newKeys[next.length - 1 - end]) end++;
  const result: YNode[] = new Array(next.length);
  for (let i = 0; i < start; i++) result[i] = old[i]!.y;
  for (let i = 0; i < end; i++) result[next.length - 1 - i] = old[old.length - 1 - i]!.y;

  const oldMid = old.slice(start, old.length - end);
  const newMid = next.slice(start, next.length - end);
  const plan = align(
    oldMid,
    newMid,
    (i, j) => options.sameHint?.(start + i, start + j) ?? false,
    (i) => options.heldIn?.(oldMid[i]!.y) ?? [],
  );
  let pos = start;
  for (const step of plan) {
    if (step.op === 'delete') {
      const y = oldMid[step.i]!.y;
      // A text a collaborator's caret is in is emptied, not deleted: what they type into it meanwhile (keys
      // concurrent with this write) lands in a live text, where a deleted node would lose it (the TinyMCE fuzz,
      // session 16: a peer's Enter emptied a list item's line while Bob typed "bob154q" at its end). A text left
      // empty has no model, so the next write of its parent reuses or deletes it.
      if (y instanceof Y.XmlText && (options.heldIn?.(y).length ?? 0) > 0) {
        y.delete(0, y.length);
        pos++;
      } else parent.delete(pos, 1);
    } else if (step.op === 'insert') {
      const node = buildY(newMid[step.j]!);
      parent.insert(pos, [node]);
      result[start + step.j] = node;
      pos++;
    } else {
      const y = oldMid[step.i]!.y;
      const model = newMid[step.j]!;
      updateNode(y, oldMid[step.i]!, model, options);
      result[start + step.j] = y;
      pos++;
    }
  }
  return result;
}

export function describeChildren(parent: Y.XmlFragment | Y.XmlElement, content: Content): OldChild[] {
  return parent.toArray().map((y, i) => describeChild(y as YNode, content, i));
}

/** A child's key; a child that is not in normal form gets a key nothing equals, so the diff replaces it. */
export function describeChild(y: YNode, content: Content, index: number): OldChild {
  const models = modelOfY(y, content);
  const model = models.length === 1 ? models[0]! : null;
  const normal =
    model !== null &&
    ((model.kind === 'text' && y instanceof Y.XmlText) || (model.kind === 'el' && y instanceof Y.XmlElement && y.nodeName === model.name));
  return { y, key: normal ? keyOf(model) : `\u0000${index}:${Math.random()}`, model: normal ? model : null };
}

export function keyOf(node: MNode): string {
  return node.kind === 'text' ? `#${toHtml([node])}` : toHtml([node]);
}

function updateNode(y: YNode, old: OldChild, model: MNode, options: SyncOptions): void {
  if (model.kind === 'text') {
    syncText(y as Y.XmlText, model, options.caret?.text === model ? options.caret.offset : -1);
    return;
  }
  const el = y as Y.XmlElement;
  const current = el.getAttributes() as Record<string, unknown>;
  for (const key of Object.keys(current)) if (!Object.hasOwn(model.attrs, key)) el.removeAttribute(key);
  for (const [key, value] of Object.entries(model.attrs)) if (current[key] !== value) el.setAttribute(key, value);
  const content = contentOf(model.name) ?? 'flow';
  if (content === 'void') return;
  const oldModel = old.model;
  const described =
    oldModel && oldModel.kind === 'el' && oldModel.children.length === el.length
      ? el.toArray().map((child, i) => ({ y: child as YNode, key: keyOf(oldModel.children[i]!), model: oldModel.children[i]! }))
      : undefined;
  // The pairing hint speaks of this level's indices only; carets are found by Y node at every level.
  syncChildren(el, content, model.children, { caret: options.caret ?? null, heldIn: options.heldIn }, described);
}

type Step = { op: 'delete'; i: number } | { op: 'insert'; j: number } | { op: 'update'; i: number; j: number };

/** Preference of the same DOM element among otherwise equal pairings (far below any difference in text). */
const SAME_BONUS = 1e-3;

/**
 * Pairs changed old and new children: same-kind neighbours are updated in place (keeping concurrent edits), the rest
 * replaced. An update costs 1 - similarity, plus 1 when the old child holds collaborators' carets and none of them
 * falls in the text it keeps (at most 2, what a delete and an insert cost, so an update still wins a tie). Deleting
 * a child that holds collaborators' carets costs 2: of two old children merged into one new one, the one a
 * collaborator is typing in is kept.
 */
function align(
  old: readonly OldChild[],
  next: readonly MNode[],
  same: (i: number, j: number) => boolean,
  held: (i: number) => readonly number[],
): Step[] {
  const n = old.length;
  const m = next.length;
  const cost = (i: number, j: number): number => {
    const o = old[i]!;
    const nn = next[j]!;
    if (!canUpdate(o, nn)) return Infinity;
    const kept = overlap(o.model, nn);
    let c = 1 - kept.similarity;
    const carets = held(i);
    // A caret is in the kept text when it is inside or at the edge of a non-empty kept prefix or suffix.
    const keeps = (at: number) =>
      kept.same || (kept.prefix > 0 && at <= kept.prefix) || (kept.suffix > 0 && at >= kept.oldLength - kept.suffix);
    if (carets.length > 0 && !carets.some(keeps)) c += 1;
    return same(i, j) ? Math.max(0, c - SAME_BONUS) : c;
  };
  if (n > MAX_ALIGN || m > MAX_ALIGN) {
    const steps: Step[] = [];
    for (let k = 0; k < Math.max(n, m); k++) {
      if (k < n && k < m && cost(k, k) < Infinity) steps.push({ op: 'update', i: k, j: k });
      else {
        if (k < n) steps.push({ op: 'delete', i: k });
        if (k < m) steps.push({ op: 'insert', j: k });
      }
    }
    return steps;
  }
  const deleteCosts = old.map((_, i) => (held(i).length > 0 ? 2 : 1));
  const deleteCost = (i: number): number => deleteCosts[i]!;
  // d[i][j]: cheapest way to turn old[i..] into next[j..]; an insert costs 1, a delete `deleteCost`, an update `cost`.
  const d: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n; i >= 0; i--) {
    for (let j = m; j >= 0; j--) {
      if (i === n) d[i]![j] = m - j;
      else if (j === m) d[i]![j] = deleteCost(i) + d[i + 1]![j]!;
      else d[i]![j] = Math.min(deleteCost(i) + d[i + 1]![j]!, 1 + d[i]![j + 1]!, cost(i, j) + d[i + 1]![j + 1]!);
    }
  }
  const steps: Step[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && cost(i, j) + d[i + 1]![j + 1]! <= d[i]![j]! + 1e-9) {
      steps.push({ op: 'update', i, j });
      i++;
      j++;
    } else if (j < m && (i === n || 1 + d[i]![j + 1]! <= d[i]![j]! + 1e-9)) {
      steps.push({ op: 'insert', j });
      j++;
    } else {
      steps.push({ op: 'delete', i });
      i++;
    }
  }
  return steps;
}

function canUpdate(old: OldChild, next: MNode): boolean {
  if (next.kind === 'text') return old.y instanceof Y.XmlText;
  return old.y instanceof Y.XmlElement && old.y.nodeName === next.name && old.model !== null;
}

/**
 * What `b` keeps of `a`'s text: the common prefix and suffix of their plain text (where collaborators' carets are
 * checked), whether that text is the same, and the similarity that pairs old and new children — 1 for the same text,
 * towards 0 for unrelated text (prefix and suffix over the longer length). The similarity leaves out lists nested
 * inside: a list item indented under another keeps the item above paired with its old self by its own text, not
 * with the indented item's text it now also contains.
 */
function overlap(a: MNode | null, b: MNode): { similarity: number; same: boolean; prefix: number; suffix: number; oldLength: number } {
  if (!a) return { similarity: 0, same: false, prefix: 0, suffix: 0, oldLength: 0 };
  const x = plainText(a);
  const y = plainText(b);
  const edges = commonEdges(x, y);
  const ownA = ownText(a, true);
  const ownB = ownText(b, true);
  const similarity = ownA === x && ownB === y ? edges.similarity : commonEdges(ownA, ownB).similarity;
  return { similarity, same: x === y, prefix: edges.prefix, suffix: edges.suffix, oldLength: x.length };
}

/** The characters of `ytext` (U+FFFC per embed), as `plainText` spells a model's text. */
export function plainOfY(ytext: Y.XmlText): string {
  return (ytext.toDelta() as Array<{ insert?: unknown }>).map((op) => (typeof op.insert === 'string' ? op.insert : '\ufffc')).join('');
}

/**
 * Maps offset `at` of `shown` (a text as the editor shows it, which can hold a key's character not written yet, or
 * lack a peer's edit not patched in yet) to the same place in `held` (that text as the document holds it): the same
 * offset up to where the two first differ, counted from the end from where they agree again, and inside the
 * difference its start (where the unwritten typing begins). The identity when the two are equal.
 */
export function offsetInDocument(shown: string, held: string, at: number): number {
  if (shown === held) return at;
  const { prefix, suffix } = commonEdges(shown, held);
  if (at <= prefix) return at;
  if (at >= shown.length - suffix) return held.length - (shown.length - at);
  return prefix;
}

function commonEdges(x: string, y: string): { similarity: number; prefix: number; suffix: number } {
  if (x === y) return { similarity: 1, prefix: x.length, suffix: x.length };
  const longest = Math.max(x.length, y.length);
  let p = 0;
  while (p < x.length && p < y.length && x[p] === y[p]) p++;
  let s = 0;
  while (s < x.length - p && s < y.length - p && x[x.length - 1 - s] === y[y.length - 1 - s]) s++;
  // Two empty lines of the same kind are interchangeable; half-similar keeps a typed-in paragraph paired.
  return { similarity: longest === 0 ? 1 : (p + s) / longest, prefix: p, suffix: s };
}

/** `plainText` without the lists nested below `node` (a list at the top is itself: its items' own text). */
function ownText(node: MNode, top: boolean): string {
  if (node.kind === 'text') return plainText(node);
  if (!top && (node.name === 'ul' || node.name === 'ol')) return '';
  return node.children.map((child) => ownText(child, false)).join('\n');
}

// ---- text ----

interface Flat {
  /** Text with each embed as U+FFFC. */
  str: string;
  /** Marks key per UTF-16 unit. */
  marks: string[];
  /** Marks per UTF-16 unit. */
  markSets: Array<Marks | undefined>;
  /** Embed key per position of an embed. */
  embeds: Map<number, string>;
}

function flatten(ops: readonly TextOp[]): Flat {
  let str = '';
  const marks: string[] = [];
  const markSets: Array<Marks | undefined> = [];
  const embeds = new Map<number, string>();
  for (const op of ops) {
    const key = marksKey(op.attributes);
    if (typeof op.insert === 'string') {
      str += op.insert;
      for (let k = 0; k < op.insert.length; k++) {
        marks.push(key);
        markSets.push(op.attributes);
      }
    } else {
      const name = embedName(op.insert);
      embeds.set(str.length, `${name}${attrsKey(op.insert[name] ?? {})}`);
      str += '\ufffc';
      marks.push(key);
      markSets.push(op.attributes);
    }
  }
  return { str, marks, markSets, embeds };
}

/**
 * Y's delta with sanitised marks and embeds, one op per Y op (positions must stay Y's): attributes the document
 * does not show never look like a difference, and an embed the schema refuses never equals anything.
 */
function cleanOps(delta: readonly TextOp[]): TextOp[] {
  return delta.map((op, k) => {
    const marks = cleanMarks(op.attributes as Record<string, unknown> | undefined);
    let insert: string | Embed = op.insert;
    if (typeof insert !== 'string') {
      const name = embedName(insert);
      const raw = (insert as Record<string, unknown>)[name];
      const attrs: Record<string, string> = {};
      if (raw && typeof raw === 'object') for (const [key, value] of Object.entries(raw)) if (typeof value === 'string') attrs[key] = value;
      const clean = insert instanceof Y.AbstractType ? null : sanitizeEmbed(name, attrs);
      insert = clean ? { [name]: clean } : { '#junk': { n: String(k) } };
    }
    return Object.keys(marks).length > 0 ? { insert, attributes: marks } : { insert };
  });
}

/**
 * Writes the difference between `ytext` and `next` as minimal deletes and inserts (every character both share in
 * order is kept, so a collaborator's concurrent insertion next to a changed space stays where it was typed; an
 * ambiguous insertion is placed at `caret`, an offset in `next`) and format calls where only formatting changed.
 */
export function syncText(ytext: Y.XmlText, next: MText, caret = -1): void {
  const before = flatten(cleanOps(ytext.toDelta() as TextOp[]));
  const after = flatten(next.ops);
  // Applied left to right: the text before offset `at` in `next` is already written, so `at` is also Y's index.
  let from = 0;
  let at = 0;
  for (const splice of minimalSplices(before.str, after.str, caret)) {
    at = syncKept(ytext, before, after, next.ops, from, at, splice.index - from);
    if (splice.remove > 0) ytext.delete(at, splice.remove);
    if (splice.insert.length > 0) insertSlice(ytext, at, next.ops, at, at + splice.insert.length);
    from = splice.index + splice.remove;
    at += splice.insert.length;
  }
  syncKept(ytext, before, after, next.ops, from, at, before.str.length - from);
}

/**
 * A run both texts share (`length` units from `from` in the old text, `at` in the new one): formatting changes are
 * written, and an embed that looks alike (U+FFFC) but differs is replaced. Returns the offset after the run.
 */
function syncKept(ytext: Y.XmlText, before: Flat, after: Flat, ops: readonly TextOp[], from: number, at: number, length: number): number {
  let done = 0;
  for (let k = 0; k < length; k++) {
    if (before.str[from + k] !== '\ufffc' || before.embeds.get(from + k) === after.embeds.get(at + k)) continue;
    formatRange(ytext, before, after, from + done, at + done, k - done);
    ytext.delete(at + k, 1);
    insertSlice(ytext, at + k, ops, at + k, at + k + 1);
    done = k + 1;
  }
  formatRange(ytext, before, after, from + done, at + done, length - done);
  return at + length;
}

function insertSlice(ytext: Y.XmlText, at: number, ops: readonly TextOp[], from: number, to: number): void {
  let pos = 0;
  let insertAt = at;
  for (const op of ops) {
    const len = typeof op.insert === 'string' ? op.insert.length : 1;
    const a = Math.max(from, pos);
    const b = Math.min(to, pos + len);
    if (a < b) {
      // A copy: Yjs writes `null` into the object it is given for every mark in force at the place and not in it
      // (yjs src/types/YText.js `insertText`), which would turn the model's "no italic here" into an `em: null`
      // that renders as <em> (the TinyMCE fuzz: a paste's italic spread over its whole line in the pasting editor).
      const attrs = { ...op.attributes };
      if (typeof op.insert === 'string') ytext.insert(insertAt, op.insert.slice(a - pos, b - pos), attrs);
      else ytext.insertEmbed(insertAt, op.insert, attrs);
      insertAt += b - a;
    }
    pos += len;
    if (pos >= to) break;
  }
}

function formatRange(ytext: Y.XmlText, before: Flat, after: Flat, oldStart: number, newStart: number, length: number): void {
  let k = 0;
  while (k < length) {
    const o = before.marks[oldStart + k];
    const n = after.marks[newStart + k];
    if (o === n) {
      k++;
      continue;
    }
    let run = 1;
    while (k + run < length && before.marks[oldStart + k + run] === o && after.marks[newStart + k + run] === n) run++;
    const oldMarks = before.markSets[oldStart + k] ?? {};
    const newMarks = after.markSets[newStart + k] ?? {};
    const change: Record<string, Attrs | null> = {};
    for (const name of Object.keys(oldMarks)) if (!Object.hasOwn(newMarks, name)) change[name] = null;
    for (const [name, attrs] of Object.entries(newMarks)) change[name] = attrs;
    ytext.format(newStart + k, run, change);
    k += run;
  }
}
