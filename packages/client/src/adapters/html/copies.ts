// Concurrent copies of a moved block. Yjs has no move: a write that moves a block (a list item indented, paragraphs
// taken into a new list item, a list the editor's normalisation re-creates) deletes the block and inserts a copy of
// it. Two users who move the same block at the same time each insert a copy, and both stay (the TinyMCE fuzz,
// session 15, seed 2105991961: three paragraphs twice). y-prosemirror has the same limit; Kleppmann et al., "A
// highly-available move operation for replicated trees" (2021), describe it.
//
// Rule: of two concurrent copies of the same text, the one inserted by the lower client ID is kept, and the user
// with the higher client ID deletes their own copy (with the blocks their write made around it that are left empty).
// Only that user deletes, so each copy is deleted at most once and no peer has to agree on more than the IDs. A copy
// is dropped only while its text is still exactly the text it was written with and the kept copy holds the same
// text: nobody's typing is ever deleted, only a second copy of it.
import * as Y from 'yjs';

/**
 * How long a moved copy (or a peer's new block) is remembered, in ms: longer than a reconnection after a short
 * outage, when a peer's concurrent move arrives with the sync step. A copy older than this is never dropped.
 */
export const COPY_WINDOW_MS = 30_000;
/** At most this many copies and peers' new blocks are remembered (the oldest go first). */
const MAX_REMEMBERED = 200;

/** A block that holds text of its own: a paragraph, heading, list item's own line, table cell. */
interface Leaf {
  y: Y.XmlElement;
  /** Its own text (direct text children, U+FFFC per embed) when it was noted. */
  text: string;
  at: number;
}

/** A copy this user's write made of a block it deleted, with the elements that write inserted around it. */
interface Copy extends Leaf {
  made: ReadonlySet<Y.XmlElement>;
}

/** A copy of this user's to delete, and the peer's copy of the same text that stays. */
export interface CopyPair {
  mine: Y.XmlElement;
  theirs: Y.XmlElement;
  made: ReadonlySet<Y.XmlElement>;
}

function itemOf(type: object): Y.Item | null {
  return (type as { _item: Y.Item | null })._item;
}

/** Characters of one text item as a block's own text counts them. */
function charsOf(item: Y.Item): string {
  const content = item.content;
  if (content instanceof Y.ContentString) return content.str;
  return item.countable ? '\ufffc'.repeat(item.length) : '';
}

/** The element's own text: the characters of its direct text children for which `alive` holds. */
function ownText(el: Y.XmlElement, alive: (item: Y.Item) => boolean): string {
  let text = '';
  for (let child = el._start; child; child = child.right) {
    if (!(child.content instanceof Y.ContentType) || !alive(child)) continue;
    const type = child.content.type;
    if (type instanceof Y.XmlText) text += charsIn(type, alive);
  }
  return text;
}

/** The characters of `text`'s items for which `alive` holds. */
function charsIn(text: Y.XmlText, alive: (item: Y.Item) => boolean): string {
  let out = '';
  for (let item = text._start; item; item = item.right) if (alive(item)) out += charsOf(item);
  return out;
}

const live = (item: Y.Item): boolean => !item.deleted;

/** All of its text now, its descendants' included (a list item's nested list), U+FFFC per embed. */
function fullText(el: Y.XmlElement): string {
  let text = '';
  for (const child of el.toArray()) {
    if (child instanceof Y.XmlElement) text += fullText(child);
    else if (child instanceof Y.XmlText) text += charsIn(child, live);
  }
  return text;
}

/** Its own text now. */
export function liveOwnText(el: Y.XmlElement): string {
  return ownText(el, live);
}

/** Whether the element and every element around it are in the document (not deleted). */
export function attached(el: Y.XmlElement | Y.XmlText): boolean {
  for (let t: object | null = el; t; t = (t as { parent: object | null }).parent) {
    const item = itemOf(t);
    if (item?.deleted) return false;
  }
  return true;
}

/** The element and every element below it. */
function elementsIn(el: Y.XmlElement, out: Y.XmlElement[]): void {
  out.push(el);
  for (const child of el.toArray()) if (child instanceof Y.XmlElement) elementsIn(child, out);
}

/** The elements `tr` inserted (new in it) by `client`, live or deleted in it. */
function inserted(tr: Y.Transaction, client: number): Y.XmlElement[] {
  const structs = tr.doc.store.clients.get(client) ?? [];
  const from = tr.beforeState.get(client) ?? 0;
  const out: Y.XmlElement[] = [];
  if (structs.length === 0 || from >= Y.getState(tr.doc.store, client)) return out;
  for (let i = Y.findIndexSS(structs, from); i < structs.length; i++) {
    const s = structs[i];
    if (s instanceof Y.Item && s.content instanceof Y.ContentType && s.content.type instanceof Y.XmlElement) out.push(s.content.type);
  }
  return out;
}

/** The blocks with a non-blank text of their own in the elements given. */
function leaves(els: readonly Y.XmlElement[], text: (el: Y.XmlElement) => string, at: number): Leaf[] {
  const out: Leaf[] = [];
  for (const y of els) {
    const t = text(y);
    if (/\S/.test(t)) out.push({ y, text: t, at });
  }
  return out;
}

/** Remembers moved copies and peers' new blocks, and pairs a copy of this user's with a peer's concurrent one. */
export class Copies {
  private copies: Copy[] = [];
  private theirs: Leaf[] = [];

  constructor(private readonly clientID: () => number) {}

  /**
   * Called from an observer of this user's write transaction `tr` (its delete set is sorted then, and what it
   * deleted is still readable: Yjs garbage-collects it only after the observers, yjs src/utils/Transaction.js):
   * notes each block it inserted whose own text equals that of a block it deleted.
   */
  noteWrite(tr: Y.Transaction, now = Date.now()): void {
    const deleted = new Map<string, number>();
    const before = (item: Y.Item) =>
      item.id.clock < (tr.beforeState.get(item.id.client) ?? 0) && (!item.deleted || Y.isDeleted(tr.deleteSet, item.id));
    Y.iterateDeletedStructs(tr, tr.deleteSet, (s) => {
      if (!(s instanceof Y.Item) || !(s.content instanceof Y.ContentType) || !(s.content.type instanceof Y.XmlElement) || !before(s)) return;
      const t = ownText(s.content.type, before);
      if (/\S/.test(t)) deleted.set(t, (deleted.get(t) ?? 0) + 1);
    });
    if (deleted.size === 0) return;
    const made = inserted(tr, this.clientID()).filter((el) => !itemOf(el)?.deleted);
    const madeSet = new Set(made);
    for (const leaf of leaves(made, liveOwnText, now)) {
      const n = deleted.get(leaf.text) ?? 0;
      if (n === 0) continue;
      deleted.set(leaf.text, n - 1);
      this.copies.push({ ...leaf, made: madeSet });
    }
    this.prune(now);
  }

  /** Called after a peer's transaction `tr`: notes the blocks it inserted. */
  noteRemote(tr: Y.Transaction, now = Date.now()): void {
    const me = this.clientID();
    for (const [client, clock] of tr.afterState) {
      if (client === me || clock <= (tr.beforeState.get(client) ?? 0)) continue;
      const added: Y.XmlElement[] = [];
      for (const el of inserted(tr, client)) if (!itemOf(el)?.deleted) elementsIn(el, added);
      this.theirs.push(...leaves([...new Set(added)], liveOwnText, now));
    }
    this.prune(now);
  }

  /**
   * Pairs of this user's copies and peers' copies of the same text, where the peer's client ID is lower (that copy
   * stays). Both must still be in the document with the text they were noted with, and hold the same text below
   * them too (what a dropped copy holds, such as a nested list, goes with it). Paired entries are forgotten.
   */
  pairs(now = Date.now()): CopyPair[] {
    this.prune(now);
    if (this.copies.length === 0 || this.theirs.length === 0) return [];
    const me = this.clientID();
    const out: CopyPair[] = [];
    const usedTheirs = new Set<Leaf>();
    const usedMine = new Set<Copy>();
    for (const mine of this.copies) {
      if (!attached(mine.y) || liveOwnText(mine.y) !== mine.text) continue;
      let mineFull: string | undefined;
      const match = this.theirs.find(
        (t) =>
          !usedTheirs.has(t) &&
          t.text === mine.text &&
          (itemOf(t.y)?.id.client ?? me) < me &&
          !mine.made.has(t.y) &&
          attached(t.y) &&
          liveOwnText(t.y) === t.text &&
          fullText(t.y) === (mineFull ??= fullText(mine.y)),
      );
      if (!match) continue;
      usedTheirs.add(match);
      usedMine.add(mine);
      out.push({ mine: mine.y, theirs: match.y, made: mine.made });
    }
    this.copies = this.copies.filter((c) => !usedMine.has(c));
    this.theirs = this.theirs.filter((t) => !usedTheirs.has(t));
    return out;
  }

  private prune(now: number): void {
    const fresh = (l: Leaf) => now - l.at < COPY_WINDOW_MS;
    this.copies = this.copies.filter(fresh).slice(-MAX_REMEMBERED);
    this.theirs = this.theirs.filter(fresh).slice(-MAX_REMEMBERED);
  }
}

/** Whether an element holds nothing: no live text character and no element that holds something. */
export function empty(el: Y.XmlElement): boolean {
  return el.toArray().every((child) => (child instanceof Y.XmlText ? child.length === 0 : child instanceof Y.XmlElement && empty(child)));
}

/**
 * Deletes `el`, or the highest element above it that `made` holds and that holds nothing else (call inside a
 * transaction). Returns whether anything was deleted (not when `el` is no longer in the document).
 */
export function removeWithEmptyMade(el: Y.XmlElement, made: ReadonlySet<Y.XmlElement>): boolean {
  let target: Y.XmlElement = el;
  // Going up while the parent is the same write's and would hold nothing else.
  for (;;) {
    const parent = target.parent;
    if (!(parent instanceof Y.XmlElement) || !made.has(parent) || !attached(parent)) break;
    if (!parent.toArray().every((child) => child === target || (child instanceof Y.XmlText ? child.length === 0 : child instanceof Y.XmlElement && empty(child)))) break;
    target = parent;
  }
  const parent = target.parent as Y.XmlElement | Y.XmlFragment | null;
  if (!parent || !attached(el)) return false;
  const index = parent.toArray().indexOf(target);
  if (index < 0) return false;
  parent.delete(index, 1);
  return true;
}

/**
 * Deletes each pair's own copy, then each element around it that the same write made and that is now empty (call
 * inside a transaction). Returns how many elements were deleted.
 */
export function dropCopies(pairs: readonly CopyPair[]): number {
  let count = 0;
  for (const pair of pairs) if (removeWithEmptyMade(pair.mine, pair.made)) count++;
  return count;
}

/**
 * Where offset `index` of `text` (a direct text child of `mine`) is in `theirs`, a block with the same own text:
 * the text child of `theirs` and the offset in it. Null when `text` is not `mine`'s.
 */
export function sameOwnPlace(mine: Y.XmlElement, text: Y.XmlText, index: number, theirs: Y.XmlElement): { text: Y.XmlText; index: number } | null {
  const own = (el: Y.XmlElement) => el.toArray().filter((c): c is Y.XmlText => c instanceof Y.XmlText);
  const mineTexts = own(mine);
  const k = mineTexts.indexOf(text);
  if (k < 0) return null;
  let offset = index;
  for (const before of mineTexts.slice(0, k)) offset += before.length;
  const theirTexts = own(theirs);
  for (const [i, t] of theirTexts.entries()) {
    if (offset <= t.length || i === theirTexts.length - 1) return { text: t, index: Math.min(offset, t.length) };
    offset -= t.length;
  }
  return null;
}
