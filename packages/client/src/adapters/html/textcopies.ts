// Concurrent copies of moved text: `copies.ts`'s rule one level down, on characters. A write that splits a
// paragraph (Enter, a paste of several blocks, a list begun mid-line) deletes the characters after the split and
// inserts a copy of them in a new node; Yjs has no move. Two users who split one paragraph at the same time each
// move the part after their own split point, so the part after the later point is there twice (TinyMCE fuzz,
// session 17, seed 2901237251: Ann's paste and Cid's Enter in one paragraph, "ann41q" twice).
//
// Rule: of two concurrent copies of the same characters, the one farther from the text they came from stays (the later
// one when both follow it, a split's tails; the earlier one when both precede it, heads a split moved up), so the
// text reads in its order: "a b c" split after "a" by one user and after "b" by another becomes "a", "b", "c". When
// that tells nothing (one copy on each side), the lower client's copy stays. The other copy's characters are deleted,
// then the nodes its write made around them that are left empty. Only characters live in both copies go, so no
// character anyone typed is lost; and only while the text they came from is still there: a text deleted whole went
// with a block moved whole, which `copies.ts` decides (two rules deciding one pair could keep different copies).
//
// Who acts: a user who sees that a peer's write deleted characters their own concurrent write copied. The server
// relays each update as its writer sent it (wave-server `rooms/room.ts`), so each user usually sees the other's
// deletion and both act; a server that relayed the update its own document emitted would send the write that reached
// it second without the deletions the first had made, and only one user would act. Both then decide alike: Yjs never moves an item, so the order of nodes, deleted
// ones included, is the same on every replica, and deleting the same characters twice is deleting them once.
//
// The same memory serves an undo (`restoredMovedOn`): undoing a write that moved text restores the original and
// deletes the copy; when a peer has moved that copy on since, the copy is gone already and the restored original
// would be a second one. Those restored characters are deleted again, and the text stays where the peer put it.
import * as Y from 'yjs';
import type { DeleteSet } from '../../core/remote-update.js';
import { attached, COPY_WINDOW_MS, empty, removeWithEmptyMade } from './copies.js';

/** At most this many writes of this user's and peers' are remembered (the oldest go first). */
const MAX_REMEMBERED = 200;
/**
 * A shorter common run than this is a copy only when it is all that the write deleted there (and not only white
 * space): a deleted word retyped elsewhere is not a move, but a one-letter tail after a split is.
 */
const MIN_RUN = 4;
/**
 * Texts longer than this (UTF-16 code units) are not compared: a move of a longer paragraph is not deduplicated.
 * Comparing two such texts takes about 0.1 s here (session 18, text of 50 repeated words).
 */
const MAX_COMPARED = 10_000;
/** Places of one `MIN_RUN`-gram looked at, at most (text as repetitive as a run of spaces has many). */
const MAX_CANDIDATES = 32;

/** Characters in document order: their IDs (`client:clock`), their string, and which run each is in. */
interface Chars {
  keys: string[];
  str: string;
  run: number[];
  /** Where each `MIN_RUN`-gram of `str` starts (at most `MAX_CANDIDATES` places), made on first use by `match`. */
  grams?: Map<string, number[]>;
}

/** Characters a write deleted in one text, as they were (read before Yjs collected them). */
interface Source extends Chars {
  text: Y.XmlText;
}

/** Characters a client inserted in one text in one transaction. */
interface Inserted {
  text: Y.XmlText;
  ids: Y.ID[];
  str: string;
}

/** One write's moved characters: source character (`client:clock`) → its copy, with the elements it made. */
interface Moved {
  client: number;
  copies: Map<string, Y.ID>;
  /**
   * A peer's write: its characters like those this user's writes moved, whether or not the update showed it deleted
   * them too (the server relays a write without deletions another had made first). Never used to delete: only to
   * follow a caret whose copy a peer deleted (`keptPlace`).
   */
  like?: Map<string, Y.ID>;
  made: ReadonlySet<Y.XmlElement>;
  at: number;
}

/** A peer's write that moved on characters of this user's copies: copy character (`client:clock`) → the peer's copy. */
interface Onward {
  copies: Map<string, Y.ID>;
  at: number;
}

/** A write of this user's: its moved characters, the text each came from, and every character it deleted. */
interface MyMove extends Moved {
  sources: Source[];
  sourceOf: Map<string, Y.XmlText>;
}

/** A copied character to delete, the copy of it that stays, and the elements the deleted copy's write made. */
export interface CharDrop {
  drop: Y.ID;
  keep: Y.ID;
  made: ReadonlySet<Y.XmlElement>;
}

/** A character's key: `client:clock` of its ID, or of the character `offset` places on in the same item. */
const charKey = (id: Y.ID, offset = 0): string => `${id.client}:${id.clock + offset}`;
function charId(key: string): Y.ID {
  const [client, clock] = key.split(':').map(Number) as [number, number];
  return Y.createID(client, clock);
}

const isChars = (item: Y.Item): boolean => item.content instanceof Y.ContentString && item.parent instanceof Y.XmlText;

/** The characters of `text` deleted in `tr` that were there before it, cut into runs where live characters lie between. */
function deletedIn(tr: Y.Transaction, text: Y.XmlText): Source {
  const out: Source = { text, keys: [], str: '', run: [] };
  let run = 0;
  for (let item = text._start; item; item = item.right) {
    const gone = item.id.clock < (tr.beforeState.get(item.id.client) ?? 0) && Y.isDeleted(tr.deleteSet, item.id);
    if (item.content instanceof Y.ContentString && gone) {
      const str = item.content.str;
      for (let i = 0; i < str.length; i++) {
        out.keys.push(charKey(item.id, i));
        out.run.push(run);
      }
      out.str += str;
    } else if (!item.deleted && item.countable) run++;
  }
  return out;
}

/** The characters of `source` for which `keep` holds, in runs cut where it does not (and where `source`'s runs are cut). */
function within(source: Source, keep: (key: string) => boolean): Source {
  const out: Source = { text: source.text, keys: [], str: '', run: [] };
  let run = 0;
  let last = -1;
  source.keys.forEach((k, i) => {
    if (!keep(k)) return;
    if (last >= 0 && (last !== i - 1 || source.run[last] !== source.run[i])) run++;
    out.keys.push(k);
    out.str += source.str[i];
    out.run.push(run);
    last = i;
  });
  return out;
}

/** The live characters `client` inserted in `tr`, by text in document order, and the elements it made there. */
function insertedBy(tr: Y.Transaction, client: number): { texts: Inserted[]; made: Set<Y.XmlElement> } {
  const from = tr.beforeState.get(client) ?? 0;
  const structs = tr.doc.store.clients.get(client) ?? [];
  const made = new Set<Y.XmlElement>();
  if (from >= Y.getState(tr.doc.store, client)) return { texts: [], made };
  const targets = new Set<Y.XmlText>();
  for (let i = Y.findIndexSS(structs, from); i < structs.length; i++) {
    const s = structs[i];
    if (!(s instanceof Y.Item) || s.deleted) continue;
    if (isChars(s)) targets.add(s.parent as Y.XmlText);
    else if (s.content instanceof Y.ContentType && s.content.type instanceof Y.XmlElement) made.add(s.content.type);
  }
  const texts = [...targets].map((text) => {
    const out: Inserted = { text, ids: [], str: '' };
    for (let item = text._start; item; item = item.right) {
      if (!(item.content instanceof Y.ContentString) || item.deleted || item.id.client !== client || item.id.clock < from) continue;
      for (let i = 0; i < item.content.str.length; i++) out.ids.push(Y.createID(client, item.id.clock + i));
      out.str += item.content.str;
    }
    return out;
  });
  return { texts, made };
}

/** Whether `n` characters of `src` from `i` are a whole run (all that was deleted between live characters). */
function wholeRun(src: Chars, i: number, n: number): boolean {
  const run = src.run[i];
  return src.run[i + n - 1] === run && (i === 0 || src.run[i - 1] !== run) && (i + n === src.run.length || src.run[i + n] !== run);
}

/** Where each `MIN_RUN`-gram of `str` starts (the first `MAX_CANDIDATES` places of each). */
function gramsOf(str: string): Map<string, number[]> {
  const grams = new Map<string, number[]>();
  for (let i = 0; i + MIN_RUN <= str.length; i++) {
    const gram = str.slice(i, i + MIN_RUN);
    const at = grams.get(gram);
    if (!at) grams.set(gram, [i]);
    else if (at.length < MAX_CANDIDATES) at.push(i);
  }
  return grams;
}

/**
 * Pairs each character of `dst` that copies one of `src`: runs of `MIN_RUN` or more, found left to right through an
 * index of `src`'s `MIN_RUN`-grams (the longest from each place; a copy is verbatim, so this is about linear), then
 * whole deleted runs shorter than that with a non-space in them, where `dst` holds them unpaired.
 */
function match(src: Chars, dst: Inserted, out: Map<string, Y.ID>): void {
  const a = src.str;
  const b = dst.str;
  if (a.length === 0 || b.length === 0 || a.length > MAX_COMPARED || b.length > MAX_COMPARED) return;
  const usedS = new Uint8Array(a.length);
  const usedD = new Uint8Array(b.length);
  const pair = (i: number, j: number, n: number) => {
    for (let k = 0; k < n; k++) {
      usedS[i + k] = 1;
      usedD[j + k] = 1;
      out.set(src.keys[i + k]!, dst.ids[j + k]!);
    }
  };
  const grams = (src.grams ??= gramsOf(a));
  for (let j = 0; j + MIN_RUN <= b.length; ) {
    let best = { i: -1, n: 0 };
    for (const i of grams.get(b.slice(j, j + MIN_RUN)) ?? []) {
      let n = 0;
      while (i + n < a.length && j + n < b.length && a[i + n] === b[j + n] && !usedS[i + n]) n++;
      if (n > best.n) best = { i, n };
    }
    if (best.n < MIN_RUN) {
      j++;
      continue;
    }
    pair(best.i, j, best.n);
    j += best.n;
  }
  for (let i = 0; i < a.length; ) {
    let n = 1;
    while (i + n < a.length && src.run[i + n] === src.run[i]) n++;
    const part = a.slice(i, i + n);
    // White space alone is no copy: paired by chance, a space dropped would glue two words.
    if (n < MIN_RUN && /\S/.test(part) && wholeRun(src, i, n) && !usedS.subarray(i, i + n).includes(1)) {
      for (let j = b.indexOf(part); j >= 0; j = b.indexOf(part, j + 1)) {
        if (usedD.subarray(j, j + n).includes(1)) continue;
        pair(i, j, n);
        break;
      }
    }
    i += n;
  }
}

/** `sources`' characters that `texts` (in other texts than theirs) copy. */
function copiesOf(sources: readonly Source[], texts: readonly Inserted[]): Map<string, Y.ID> {
  const copies = new Map<string, Y.ID>();
  for (const src of sources) for (const dst of texts) if (dst.text !== src.text) match(src, dst, copies);
  return copies;
}

/** The item holding the live character with this ID; null when it is deleted or collected. */
function liveChar(doc: Y.Doc, id: Y.ID): Y.Item | null {
  const item = Y.getItem(doc.store, id);
  return item instanceof Y.Item && !item.deleted && isChars(item) ? item : null;
}

/** Where the live character `id` is: its text and index there; null when it is not live or not in the document. */
export function placeOfChar(doc: Y.Doc, id: Y.ID): { text: Y.XmlText; index: number } | null {
  const item = liveChar(doc, id);
  if (!item) return null;
  const text = item.parent as Y.XmlText;
  if (!attached(text)) return null;
  // A relative position anchored at the character itself resolves to its index (assoc 0: the character's own place).
  const rel = Y.createRelativePositionFromJSON({ item: { client: id.client, clock: id.clock }, assoc: 0 });
  const pos = Y.createAbsolutePositionFromRelativePosition(rel, doc);
  return pos && pos.type === text ? { text, index: pos.index } : null;
}

/** Remembers this user's and peers' moved characters, and pairs this user's copies with peers' concurrent ones. */
export class TextCopies {
  private mine: MyMove[] = [];
  private theirs: Moved[] = [];
  /** Peers' writes that moved on characters of this user's copies: copy character → the peer's copy of it. */
  private onward: Onward[] = [];
  /** Source characters (`client:clock`) and peers whose copies of them were paired, and when: each pair is decided once. */
  private decided = new Map<string, number>();

  constructor(private readonly clientID: () => number) {}

  /**
   * Called from an observer of this user's write `tr` (its delete set is sorted then, and what it deleted is still
   * readable: Yjs collects it only after the observers, yjs src/utils/Transaction.js).
   */
  noteWrite(tr: Y.Transaction, now = Date.now()): void {
    const texts = new Set<Y.XmlText>();
    Y.iterateDeletedStructs(tr, tr.deleteSet, (s) => {
      if (s instanceof Y.Item && isChars(s) && s.id.clock < (tr.beforeState.get(s.id.client) ?? 0)) texts.add(s.parent as Y.XmlText);
    });
    // A text the write deleted went whole: that is a block moved, `copies.ts`'s case.
    for (const text of texts) if (text._item?.deleted) texts.delete(text);
    if (texts.size === 0) return;
    const { texts: inserted, made } = insertedBy(tr, this.clientID());
    const sources = [...texts].map((text) => deletedIn(tr, text));
    const copies = copiesOf(sources, inserted);
    if (copies.size === 0) return;
    const sourceOf = new Map<string, Y.XmlText>();
    for (const src of sources) for (const k of src.keys) sourceOf.set(k, src.text);
    this.mine.push({ client: this.clientID(), copies, made, sources, sourceOf, at: now });
    this.prune(now);
  }

  /**
   * Called from an observer of a peer's transaction `tr`, with a reader of the delete set of the update it applied
   * (`deletes`, read only when needed; the transaction's own delete set holds only what was live here, not what this
   * user had deleted too): notes each client's copies in it of characters this user's remembered writes moved.
   * Nothing to do when there are none.
   */
  noteRemote(tr: Y.Transaction, deletes: () => DeleteSet, now = Date.now()): void {
    this.prune(now);
    if (this.mine.length === 0) return;
    const me = this.clientID();
    for (const [client, clock] of tr.afterState) {
      if (client === me || clock <= (tr.beforeState.get(client) ?? 0)) continue;
      const { texts, made } = insertedBy(tr, client);
      if (texts.length === 0) continue;
      const like = copiesOf(this.mine.flatMap((m) => m.sources), texts);
      if (like.size === 0) continue;
      const ds = deletes();
      const copies = copiesOf(this.mine.flatMap((m) => m.sources.map((src) => within(src, (k) => Y.isDeleted(ds, charId(k))))), texts);
      this.theirs.push({ client, copies, like, made, at: now });
    }
    // Characters of this user's copies that the peer's write deleted and wrote again in its own new text: moved on.
    // A transaction that deleted nothing (most: typing) moved nothing on.
    if (tr.deleteSet.clients.size === 0) return;
    let sources: Source[] | undefined;
    for (const [client, clock] of tr.afterState) {
      if (client === me || clock <= (tr.beforeState.get(client) ?? 0)) continue;
      sources ??= this.copiesDeletedIn(tr);
      if (sources.length === 0) return;
      const onward = copiesOf(sources, insertedBy(tr, client).texts);
      if (onward.size > 0) this.onward.push({ copies: onward, at: now });
    }
  }

  /** The characters of this user's remembered copies that `tr` deleted, by text (read before Yjs collects them). */
  private copiesDeletedIn(tr: Y.Transaction): Source[] {
    const keys = new Set<string>();
    const texts = new Set<Y.XmlText>();
    for (const m of this.mine) {
      for (const id of m.copies.values()) {
        if (!Y.isDeleted(tr.deleteSet, id)) continue;
        const item = Y.getItem(tr.doc.store, id);
        if (!(item instanceof Y.Item) || !isChars(item)) continue;
        keys.add(charKey(id));
        texts.add(item.parent as Y.XmlText);
      }
    }
    return [...texts].map((text) => within(deletedIn(tr, text), (k) => keys.has(k)));
  }

  /**
   * Right after this user's undo, given the delete set of the step it undid (`Y.UndoManager`'s stack item
   * `deletions`): the characters it restored that a peer has moved on since, to delete again, each with the
   * peer's copy that stays. Yjs's undo restores what the step deleted and deletes what it inserted (yjs
   * src/utils/UndoManager.js, `popStackItem`); when the step moved text (deleted it, wrote a copy) and a peer then
   * moved that copy on (deleted it, wrote its own), the copy it deletes is gone already and the text it restores is
   * there twice (TinyMCE fuzz, session 20, seed 1789580499: "bob22q"). A restored character is found through the
   * item it restores (`Item.redone`). Only moves remembered (`COPY_WINDOW_MS`) are known.
   */
  restoredMovedOn(doc: Y.Doc, undone: DeleteSet, now = Date.now()): CharDrop[] {
    this.prune(now);
    const out: CharDrop[] = [];
    if (this.onward.length === 0) return out;
    const movedOn = new Map<string, Y.ID>();
    for (const o of this.onward) for (const [copy, theirs] of o.copies) movedOn.set(copy, theirs);
    for (const m of this.mine) {
      for (const [src, copy] of m.copies) {
        const id = charId(src);
        if (!Y.isDeleted(undone, id)) continue;
        const onward = movedOn.get(charKey(copy));
        if (!onward || !liveChar(doc, onward)) continue;
        const item = Y.getItem(doc.store, id);
        if (!(item instanceof Y.Item) || !item.redone) continue;
        const restored = Y.createID(item.redone.client, item.redone.clock + id.clock - item.id.clock);
        if (liveChar(doc, restored)) out.push({ drop: restored, keep: onward, made: new Set() });
      }
    }
    return out;
  }

  /**
   * Characters that both one of this user's writes and a peer's concurrent write copied from the same source
   * characters, with the copy of each to delete (see the rule above), where both copies are still live and in the
   * document. Each pair is given once.
   */
  drops(doc: Y.Doc, now = Date.now()): CharDrop[] {
    this.prune(now);
    const me = this.clientID();
    const out: CharDrop[] = [];
    for (const theirs of this.theirs) {
      for (const mine of this.mine) {
        for (const [src, dst] of mine.copies) {
          const other = theirs.copies.get(src);
          const pairKey = `${src}>${theirs.client}`;
          if (!other || this.decided.has(pairKey)) continue;
          const a = placeOfChar(doc, dst);
          const b = placeOfChar(doc, other);
          const source = mine.sourceOf.get(src);
          // A source text deleted since was a block moved whole (by the peer, or since): `copies.ts` decides those,
          // and two rules deciding one copy could each keep a different one.
          if (!a || !b || a.text === b.text || !source || !attached(source)) continue;
          const keepMine = keeps(source, a.text, b.text, me < theirs.client);
          out.push(keepMine ? { drop: other, keep: dst, made: theirs.made } : { drop: dst, keep: other, made: mine.made });
          this.decided.set(pairKey, now);
        }
      }
    }
    return out;
  }

  /**
   * Where the copy that stays of the copied character `id` is, once `id` was deleted as a second copy (here or by
   * the peer who decided): a live copy of the same source character, remembered by this user. Null when there is
   * none.
   */
  keptPlace(doc: Y.Doc, id: Y.ID): { text: Y.XmlText; index: number } | null {
    const all: Moved[] = [...this.mine, ...this.theirs];
    const same = (a: Y.ID, b: Y.ID) => a.client === b.client && a.clock === b.clock;
    for (const m of all) {
      for (const [src, dst] of m.copies) {
        if (!same(dst, id)) continue;
        for (const o of all) {
          const other = o.copies.get(src) ?? o.like?.get(src);
          const place = other && !same(other, id) ? placeOfChar(doc, other) : null;
          if (place) return place;
        }
        return null;
      }
    }
    return null;
  }

  private prune(now: number): void {
    const fresh = (m: { at: number }) => now - m.at < COPY_WINDOW_MS;
    this.mine = this.mine.filter(fresh).slice(-MAX_REMEMBERED);
    this.theirs = this.theirs.filter(fresh).slice(-MAX_REMEMBERED);
    this.onward = this.onward.filter(fresh).slice(-MAX_REMEMBERED);
    for (const [pair, at] of this.decided) if (now - at >= COPY_WINDOW_MS) this.decided.delete(pair);
  }
}

/**
 * Where a node is in the document, deleted nodes counted: the index of its item among its parent's items, from the
 * root down. Yjs never moves an item, so two nodes compare alike on every replica that holds both.
 */
function pathOf(type: { _item: Y.Item | null }): number[] {
  const path: number[] = [];
  for (let item = type._item; item; item = (item.parent as { _item: Y.Item | null })._item) {
    let index = 0;
    for (let left = item.left; left; left = left.left) index++;
    path.unshift(index);
  }
  return path;
}

/** Negative when `a` comes before `b` in the document (an ancestor before what it holds), positive after. */
function compare(a: readonly number[], b: readonly number[]): number {
  for (let k = 0; k < Math.min(a.length, b.length); k++) if (a[k] !== b[k]) return a[k]! - b[k]!;
  return a.length - b.length;
}

/**
 * Whether `mine` is the copy to keep of characters that came from `source`: the one farther from it when both are
 * on the same side of it; else the lower client's (`mineIsLower`).
 */
function keeps(source: Y.XmlText, mine: Y.XmlText, theirs: Y.XmlText, mineIsLower: boolean): boolean {
  const s = pathOf(source);
  const m = compare(pathOf(mine), s);
  const t = compare(pathOf(theirs), s);
  const order = compare(pathOf(mine), pathOf(theirs));
  if (m > 0 && t > 0) return order > 0;
  if (m < 0 && t < 0) return order < 0;
  return mineIsLower;
}

/**
 * Deletes the characters of `drops` (call inside a transaction), then each element their write made that is left
 * holding nothing. Returns how many characters were deleted.
 */
export function dropChars(doc: Y.Doc, drops: readonly CharDrop[]): number {
  const byText = new Map<Y.XmlText, { indexes: number[]; made: ReadonlySet<Y.XmlElement> }>();
  for (const d of drops) {
    const place = placeOfChar(doc, d.drop);
    if (!place) continue;
    const entry = byText.get(place.text) ?? { indexes: [], made: d.made };
    entry.indexes.push(place.index);
    byText.set(place.text, entry);
  }
  let count = 0;
  for (const [text, { indexes, made }] of byText) {
    // From the end, so the earlier indexes stay right; consecutive ones in one delete.
    indexes.sort((a, b) => b - a);
    for (let k = 0; k < indexes.length; ) {
      let n = 1;
      while (k + n < indexes.length && indexes[k + n] === indexes[k]! - n) n++;
      text.delete(indexes[k + n - 1]!, n);
      count += n;
      k += n;
    }
    const parent = text.parent;
    if (parent instanceof Y.XmlElement && made.has(parent) && empty(parent)) removeWithEmptyMade(parent, made);
  }
  return count;
}
