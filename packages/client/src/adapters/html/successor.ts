/**
 * Where the text of a node that a peer's transaction deleted went, and this user's typing it took along.
 *
 * Yjs has no move. A peer whose write restructures blocks (a list item indented into a nested list, two blocks merged
 * or one split around carets that peer could not see yet, a paste that rebuilds a list) deletes Y nodes and inserts
 * new ones holding their text. Characters this user typed into such a node concurrently are deleted with it: Yjs
 * integrates an insertion into a deleted parent as deleted, and deleting a type deletes its children (yjs
 * `src/structs/Item.js` `integrate`, `src/structs/ContentType.js` `delete`).
 *
 * The same happens, without a deleted node, when such a write moves part of a text elsewhere (the tail of a paragraph
 * into a new one, when a paste or an Enter splits it): the peer deletes the characters it knew, and what this user
 * typed between them concurrently stays behind, cut off from the rest of its word.
 *
 * `Removal` looks at one remote transaction. For each `Y.XmlText` it deleted, or that lost characters around this
 * user's typing, it finds the receiver: the live text, among those the transaction created or inserted
 * characters into, that shares the most text with what was removed (a character diff). It puts this user's own
 * characters that went with the removed text (or stayed behind) into the receiver, with their formatting, at
 * the place the diff gives; and it maps offsets of the removed text (the caret) into the receiver. Only the author of
 * the characters moves them, so no two peers rescue the same text.
 */
import DiffMatchPatch from 'diff-match-patch';
import * as Y from 'yjs';
import { updateDeleteSet, type DeleteSet } from '../../core/remote-update.js';
import { insertRuns, recreate, type Orphan } from './recreate.js';

const dmp = new DiffMatchPatch();
/** Seconds a diff may take before diff-match-patch settles for a coarser one (its `Diff_Timeout`; default 1 s). */
dmp.Diff_Timeout = 0.05;

/**
 * Receivers looked at, in total characters. Beyond it the transaction replaced much of the document (a large paste,
 * `forceSync`) and nothing is rescued or relocated.
 */
const MAX_RECEIVER_CHARS = 20_000;

/**
 * Shortest run of text a deleted text must share with what the transaction put into a receiver for its text to have
 * gone there (all its kept characters, when it has fewer). Short: a merge may carry over only a word's worth (a
 * deletion across blocks keeps the two ends), and only receivers of this very transaction compete.
 */
const MIN_SHARED = 3;

/** Removed texts × receivers beyond which a receiver is not checked for being another removed text's copy. */
const MAX_PAIRS = 2_500;

/**
 * Shortest run a text holding only this user's characters must share with a receiver (all of it, when shorter): the
 * peer copied the part it had seen. Longer than `MIN_SHARED`, because all of the text is compared, with nothing the
 * peer surely saw to pin it: texts share word beginnings by chance (the fuzz's words all begin "ann", "bob", "cid").
 */
const OWN_TEXT_RUN = 6;

/**
 * Least part that a receiver must share of a text the peer never had (`Removal.unseen`), and of what the peer had
 * seen of a text of only this user's: a copy is mostly what it copies (a copy this user's write made of older text,
 * with what was typed into it since; the peer's copy of what it saw), while a few words in common are chance.
 */
const LEAST_SHARED_PART = 0.5;

/** Fewest characters of kept text on each side of lost characters for them to be put back (see `rescue`). */
const MIN_CONTEXT = 2;

type Attrs = Record<string, unknown>;

/**
 * What the transaction removed from one `Y.XmlText`: all of it (the text was deleted), or the characters it deleted
 * from a text still there together with this user's typing left stranded between them.
 */
interface Removed {
  text: Y.XmlText;
  /** The removed characters, as before the transaction (U+FFFC per embed). */
  before: string;
  /**
   * Per UTF-16 unit of `before`: a character of this user's to put into the receiver (deleted with its node, or
   * stranded).
   */
  lost: boolean[];
  /** Per UTF-16 unit of `before`: its formatting attributes. */
  attrs: Attrs[];
  /** Per UTF-16 unit of `before`: its item ID, for a stranded character (deleted from the text once moved). */
  ids: Array<Y.ID | null>;
  /** Per UTF-16 unit of `before`: its item ID. */
  unitIds: Y.ID[];
  /**
   * From an offset in the text as it was before the transaction to the offset in `before`; null where the text kept
   * that place (nothing to relocate).
   */
  fromBefore: (offset: number) => number | null;
  /**
   * The stranded runs of a trimmed text once `rescue` ran, as offsets in `before`, each with the receiver index it
   * was put back at (null: it stayed where it was).
   */
  runs?: Array<{ from: number; to: number; at: number | null }>;
}

/** One UTF-16 unit of a text as it was before the transaction. */
interface Unit {
  char: string;
  attrs: Attrs;
  id: Y.ID;
  /** Deleted by the transaction. */
  gone: boolean;
  /** Written by this user (this client). */
  own: boolean;
  /** The character it was typed right after, and right before (Yjs `Item.origin` / `rightOrigin`; null: an edge). */
  origin: Y.ID | null;
  rightOrigin: Y.ID | null;
}

interface Receiver {
  text: Y.XmlText;
  /** Created by the transaction (not only inserted into). */
  created: boolean;
}

/** The items of a type's child list, deleted ones included, in order. */
function* items(type: Y.XmlFragment | Y.XmlElement | Y.XmlText | Y.AbstractType<unknown>): Generator<Y.Item> {
  for (let item = type._start; item; item = item.right) yield item;
}

/** The live characters of `text` (U+FFFC per embed), and per UTF-16 unit whether `fresh` says its item is. */
function charsOf(text: Y.XmlText, fresh: (item: Y.Item) => boolean): { str: string; fresh: boolean[] } {
  let str = '';
  const flags: boolean[] = [];
  for (const item of items(text)) {
    if (item.deleted || !item.countable) continue;
    const chars = item.content instanceof Y.ContentString ? item.content.str : '\ufffc'.repeat(item.length);
    str += chars;
    const f = fresh(item);
    for (let k = 0; k < chars.length; k++) flags.push(f);
  }
  return { str, fresh: flags };
}

/**
 * The characters of `text` that `fresh` says the transaction put there (what a removed text can have gone into: a
 * copy, text an undo restored), and where each one is in the whole text. `at(j)` is the index in `text` of the `j`th
 * of them (for `j` = their count, the index right after the last one).
 */
function freshView(text: Y.XmlText, fresh: (item: Y.Item) => boolean): { str: string; at: (j: number) => number } {
  const { str, fresh: flags } = charsOf(text, fresh);
  let picked = '';
  const index: number[] = [];
  for (let k = 0; k < str.length; k++) {
    if (!flags[k]) continue;
    picked += str[k];
    index.push(k);
  }
  return { str: picked, at: (j) => (j < index.length ? index[j]! : index.length > 0 ? index[index.length - 1]! + 1 : str.length) };
}

/** Deletes the characters with item IDs `ids` from `text` (those still there). */
function deleteUnits(text: Y.XmlText, ids: readonly Y.ID[]): void {
  const wanted = new Set(ids.map((id) => `${id.client}:${id.clock}`));
  const ranges: Array<[number, number]> = [];
  let index = 0;
  for (const item of items(text)) {
    if (item.deleted || !item.countable) continue;
    for (let k = 0; k < item.length; k++) {
      if (!wanted.has(`${item.id.client}:${item.id.clock + k}`)) continue;
      const last = ranges[ranges.length - 1];
      if (last && last[0] + last[1] === index + k) last[1]++;
      else ranges.push([index + k, 1]);
    }
    index += item.length;
  }
  for (let r = ranges.length - 1; r >= 0; r--) text.delete(ranges[r]![0], ranges[r]![1]);
}

/** Every `Y.XmlText` in the subtree of `type` (itself included). */
function textsUnder(type: Y.AbstractType<unknown>, out: Y.XmlText[]): void {
  if (type instanceof Y.XmlText) {
    out.push(type);
    return;
  }
  for (const item of items(type)) if (item.content instanceof Y.ContentType) textsUnder(item.content.type, out);
}

export class Removal {
  private readonly removed: Removed[] = [];
  private readonly receivers: Receiver[] = [];
  private readonly chosen = new Map<Y.XmlText, Receiver | null>();
  /** `shared` per removed text and receiver. */
  private readonly sharedMemo = new Map<Removed, Map<Receiver, number>>();
  /** `leastShared` per removed text. */
  private readonly leastMemo = new Map<Removed, number>();
  /** `charsOf` per receiver, for `copiedElsewhere`. */
  private readonly charsMemo = new Map<Receiver, { str: string; fresh: boolean[] }>();
  /** Whether an item was created by the transaction. */
  private readonly created: (item: Y.Item) => boolean;
  /** Whether an item was live before the transaction (not deleted, or deleted by it). */
  private readonly liveBefore: (item: Y.Item) => boolean;
  private readonly tr: Y.Transaction;
  /** The delete set of the update as its writer sent it (`updateDeleteSet`), read on first use. */
  private peerDeletes: DeleteSet | null = null;

  /**
   * Reads remote transaction `tr` (from `observeDeep`'s `events`). Only characters of `ownClient` (this user's
   * Yjs client ID) are ever moved: the peer had not seen them when they went with a node, or they would have been
   * in its receiver (or deleted where the peer rewrote the place, which `rescue` leaves alone). `recent` tells this
   * user's characters written so shortly before that the peer may not have seen them yet (see `Removed`'s stranded
   * runs); by default none. Null when the transaction removed no text.
   */
  static of(
    events: ReadonlyArray<Y.YEvent<Y.AbstractType<unknown>>>,
    tr: Y.Transaction,
    ownClient: number,
    recent: (id: Y.ID) => boolean = () => false,
  ): Removal | null {
    // Most remote transactions are keys typed: nothing to look at.
    if (tr.deleteSet.clients.size === 0) return null;
    const deleted: Y.XmlText[] = [];
    const trimmed: Y.XmlText[] = [];
    for (const ev of events) {
      if (ev.target instanceof Y.XmlText) {
        // Texts that lost characters are looked at below; fewer than `MIN_SHARED` count only next to this user's
        // stranded typing (a key's deletion elsewhere could not be recognised anywhere).
        for (const item of items(ev.target)) {
          if (item.countable && ev.deletes(item)) {
            trimmed.push(ev.target);
            break;
          }
        }
        continue;
      }
      for (const item of items(ev.target)) {
        if (item.content instanceof Y.ContentType && ev.deletes(item)) textsUnder(item.content.type, deleted);
      }
    }
    if (deleted.length === 0 && trimmed.length === 0) return null;
    return new Removal(events, tr, deleted, trimmed, ownClient, recent);
  }

  private constructor(
    events: ReadonlyArray<Y.YEvent<Y.AbstractType<unknown>>>,
    tr: Y.Transaction,
    deleted: readonly Y.XmlText[],
    trimmed: readonly Y.XmlText[],
    ownClient: number,
    recent: (id: Y.ID) => boolean,
  ) {
    const createdBefore = (id: Y.ID) => id.clock < (tr.beforeState.get(id.client) ?? 0);
    this.created = (item) => !createdBefore(item.id);
    // Live before the transaction: existed, and not deleted or deleted by it.
    const liveBefore = (item: Y.Item) => createdBefore(item.id) && (!item.deleted || Y.isDeleted(tr.deleteSet, item.id));
    this.liveBefore = liveBefore;
    this.tr = tr;
    /** A text's units as before the transaction. */
    const unitsOf = (text: Y.XmlText): Unit[] => {
      const units: Unit[] = [];
      let attrs: Attrs = {};
      for (const item of items(text)) {
        if (!liveBefore(item)) continue;
        if (item.content instanceof Y.ContentFormat) {
          const { key, value } = item.content;
          attrs = { ...attrs };
          if (value === null) delete attrs[key];
          else attrs[key] = value;
          continue;
        }
        if (!item.countable) continue;
        const str = item.content instanceof Y.ContentString ? item.content.str : '\ufffc'.repeat(item.length);
        for (let k = 0; k < str.length; k++) {
          const id = Y.createID(item.id.client, item.id.clock + k);
          const own = item.content instanceof Y.ContentString && id.client === ownClient;
          // Inside an item each character follows the one before it (Yjs splits an item where a deletion cuts it).
          const origin = k === 0 ? item.origin : Y.createID(item.id.client, item.id.clock + k - 1);
          const rightOrigin = k === str.length - 1 ? item.rightOrigin : Y.createID(item.id.client, item.id.clock + k + 1);
          units.push({ char: str[k]!, attrs, id, gone: item.deleted, own, origin, rightOrigin });
        }
      }
      return units;
    };
    for (const text of deleted) {
      if (!text._item || !liveBefore(text._item)) continue;
      const units = unitsOf(text);
      this.removed.push({
        text,
        before: units.map((u) => u.char).join(''),
        lost: units.map((u) => u.own),
        attrs: units.map((u) => u.attrs),
        ids: units.map(() => null),
        unitIds: units.map((u) => u.id),
        fromBefore: (offset) => offset,
      });
    }
    for (const text of trimmed) {
      const units = unitsOf(text);
      // A run of this user's typing still there, with removed characters right before and right after it: the peer
      // removed the text around it without knowing it (a range it knew would have been removed whole). A run at the
      // edge of the text, with removed characters on its inner side, is stranded only when it was typed onto those
      // characters (its first one right after them, or its last one right before them) and all of it just now
      // (`recent`): a split moves everything the peer knew on one side of it, so the peer had not seen such a run
      // (the Froala fuzz: a peer's Enter moved "ann11" into a new paragraph while "q " was typed after it, and
      // "q " stayed behind). Other edge runs stay: typing that only met the moved text at the same place (two
      // users typing a line at the start of one paragraph and pressing Enter), or older text next to a moved part.
      const same = (a: Y.ID | null, b: Y.ID) => a !== null && a.client === b.client && a.clock === b.clock;
      const stranded = units.map(() => false);
      for (let k = 0; k < units.length; ) {
        if (!units[k]!.own || units[k]!.gone) {
          k++;
          continue;
        }
        let end = k + 1;
        while (end < units.length && units[end]!.own && !units[end]!.gone) end++;
        const left = k > 0 && units[k - 1]!.gone;
        const right = end < units.length && units[end]!.gone;
        const typedOn = (left && end === units.length && same(units[k]!.origin, units[k - 1]!.id)) || (right && k === 0 && same(units[end - 1]!.rightOrigin, units[end]!.id));
        const unseen = typedOn && units.slice(k, end).every((u) => recent(u.id));
        if ((left && right) || unseen) for (let m = k; m < end; m++) stranded[m] = true;
        k = end;
      }
      const kept = units.map((u, k) => u.gone || stranded[k]!);
      // Too little removed to recognise where it went (a re-spelled space, a key's deletion), unless this user's
      // typing was stranded next to it: then the receiver must hold all of it (the TinyMCE fuzz: a peer's Enter moved
      // the "ci" Cid had just typed into a new paragraph while he typed "d8q", which stayed behind).
      const removedCount = kept.filter(Boolean).length - stranded.filter(Boolean).length;
      if (removedCount === 0 || (removedCount < MIN_SHARED && !stranded.includes(true))) continue;
      const index: number[] = []; // offset in the text before → offset in `before`
      let n = 0;
      for (let k = 0; k <= units.length; k++) {
        index.push(n);
        if (k < units.length && kept[k]) n++;
      }
      const picked = units.filter((_, k) => kept[k]);
      this.removed.push({
        text,
        before: picked.map((u) => u.char).join(''),
        lost: units.flatMap((_, k) => (kept[k] ? [stranded[k]!] : [])),
        attrs: picked.map((u) => u.attrs),
        ids: units.flatMap((u, k) => (kept[k] ? [stranded[k] ? u.id : null] : [])),
        unitIds: picked.map((u) => u.id),
        // The caret follows the removed text when the text on both sides of it (at an edge, the one side) was removed.
        fromBefore: (offset) => {
          const before = offset === 0 || kept[offset - 1] === true;
          const after = offset >= units.length || kept[offset] === true;
          return before && after && units.length > 0 ? index[Math.min(offset, units.length)]! : null;
        },
      });
    }
    const seen = new Set<Y.XmlText>();
    const add = (text: Y.XmlText, created: boolean) => {
      if (seen.has(text) || text._item?.deleted) return;
      seen.add(text);
      this.receivers.push({ text, created });
    };
    for (const ev of events) {
      if (ev.target instanceof Y.XmlText) {
        // Characters inserted into a text that already existed (a merge into the block above).
        for (const item of items(ev.target)) {
          if (!item.deleted && item.countable && ev.adds(item)) {
            add(ev.target, false);
            break;
          }
        }
        continue;
      }
      for (const item of items(ev.target)) {
        if (item.deleted || !(item.content instanceof Y.ContentType) || !ev.adds(item)) continue;
        const texts: Y.XmlText[] = [];
        textsUnder(item.content.type, texts);
        for (const text of texts) add(text, true);
      }
    }
  }

  /** Whether any of this user's characters went with a deleted text or were left stranded. */
  get lostAny(): boolean {
    return this.removed.some((r) => r.lost.includes(true));
  }

  /**
   * Re-inserts, into each removed text's receiver, this user's lost characters the receiver lacks (call it inside a
   * transaction): a deleted text's by a diff of all of it (the peer may have copied some), a trimmed text's stranded
   * runs by `putBackStranded`. Returns how many UTF-16 units were re-inserted.
   */
  rescue(): number {
    let count = 0;
    const moved = new Map<Y.XmlText, Y.ID[]>();
    const orphans: Orphan[] = [];
    for (const removed of this.removed) {
      if (!removed.lost.includes(true)) continue;
      const receiver = this.receiverOf(removed);
      if (!receiver) {
        const orphan = this.orphanOf(removed);
        if (orphan) orphans.push(orphan);
        continue;
      }
      if (removed.ids.some((id) => id !== null)) {
        count += this.putBackStranded(removed, receiver, moved);
        continue;
      }
      // Only what the transaction put there is matched: a word of the receiver's own older text can look like the lost
      // one (the TinyMCE fuzz: a peer's undo removed a paragraph holding "ann12q" and restored its other text after
      // "ann2q" in the paragraph above; matched against all of it, only the "1" went back, into "ann2q").
      const view = freshView(receiver.text, this.created);
      const now = view.str;
      const diffs = dmp.diff_main(removed.before, now, false);
      // Edits slid to word boundaries: "bob54q bob68q bob69qbob55q" against "bob54q bob55q" aligns as "bob54q bob" +
      // "68q bob69qbob" + "55q", and the lost characters alone went back as "bob54q bob68q bob69q55q" (the fuzz).
      dmp.diff_cleanupSemanticLossless(diffs);
      // Units of `before` missing from the receiver (DIFF_DELETE) that are lost characters of ours go back in at the
      // receiver's index the diff gives; everything else there (a peer's own deletion, text moved elsewhere) stays out.
      // Only where the receiver kept the text on both sides as it was: a deletion between two kept runs (or a kept
      // run and the end of both texts). Inside text the peer rewrote (it replaced the document, or typed over the
      // place), the peer had seen those characters, and they stay deleted.
      let i = 0;
      let j = 0;
      let shift = 0; // units put into the receiver so far, before the places still to come
      diffs.forEach(([op, str], n) => {
        if (op === DiffMatchPatch.DIFF_EQUAL) {
          i += str.length;
          j += str.length;
          return;
        }
        if (op === DiffMatchPatch.DIFF_INSERT) {
          j += str.length;
          return;
        }
        // A kept neighbour is long enough to pin the place, or reaches the start (the end) of both texts: the TinyMCE
        // fuzz lost "ann164q" typed after the first of two leading spaces, with one space of kept text before it.
        const kept = (neighbour: [number, string] | undefined, atEdge: boolean, reachesEdge: boolean) =>
          neighbour === undefined ? atEdge : neighbour[0] === DiffMatchPatch.DIFF_EQUAL && (neighbour[1].length >= MIN_CONTEXT || reachesEdge);
        const prev = diffs[n - 1]?.[1].length ?? 0;
        const next = diffs[n + 1]?.[1].length ?? 0;
        const anchored =
          kept(diffs[n - 1], i === 0 && j === 0, i === prev && j === prev) &&
          kept(diffs[n + 1], i + str.length === removed.before.length && j === now.length, i + str.length + next === removed.before.length && j + next === now.length) &&
          !this.copiedElsewhere(str, receiver);
        for (let k = i; anchored && k < i + str.length; ) {
          if (!removed.lost[k]) {
            k++;
            continue;
          }
          let end = k + 1;
          while (end < i + str.length && removed.lost[end]) end++;
          insertUnits(receiver.text, view.at(j) + shift, removed, k, end);
          shift += end - k;
          count += end - k;
          k = end;
        }
        i += str.length;
      });
    }
    // Stranded characters now in their receiver leave the place they were cut off in.
    for (const [text, ids] of moved) deleteUnits(text, ids);
    for (const [old, text] of recreate(orphans, this.liveBefore)) {
      this.chosen.set(old, { text, created: true });
      count += text.length;
    }
    return count;
  }

  /**
   * The characters of a deleted text with no receiver that go back where it was (`recreate.ts`): this user's lost
   * characters that the update deleting the node did not delete itself. Deleting a type deletes the children it
   * holds (yjs `ContentType.delete`), so the peer had not seen these (the TinyMCE fuzz: Ann's undo put
   * "bob6q cid19q cid21q" back into a list item that Bob, who saw it empty, removed at the same time). This needs the
   * update as its writer sent it (wave-server relays it so: `rooms/room.ts` `onDocUpdate`); an update encoded from a
   * whole document after these characters reached it (a sync reply) deletes them too, and they stay deleted, as the
   * peer may have seen them (a peer that deletes a paragraph on purpose deletes what it saw in it). Null when none,
   * or when the transaction was too large for receivers to be looked at (`MAX_RECEIVER_CHARS`: a document replaced).
   */
  private orphanOf(removed: Removed): Orphan | null {
    if (!removed.text._item?.deleted || removed.ids.some((id) => id !== null) || !this.receiversLooked) return null;
    const peerDeleted = this.peerDeleted;
    let chars = '';
    const attrs: Orphan['attrs'][number][] = [];
    for (let k = 0; k < removed.before.length; k++) {
      if (!removed.lost[k] || Y.isDeleted(peerDeleted, removed.unitIds[k]!)) continue;
      chars += removed.before[k];
      attrs.push(removed.attrs[k]!);
    }
    return chars.length > 0 ? { text: removed.text, chars, attrs } : null;
  }

  private get peerDeleted(): DeleteSet {
    return (this.peerDeletes ??= updateDeleteSet(this.tr));
  }

  /**
   * Whether `removed` is a deleted text the peer never had: it was deleted only because a node the peer deleted held
   * it. A writer's update deletes every node it knew inside one it deletes (yjs `ContentType.delete`), so this one is
   * not in its delete set. Only as sound as the delete set: an update the server re-encoded deletes every node, and
   * then none is unseen.
   */
  private unseen(removed: Removed): boolean {
    const item = removed.text._item;
    return item !== null && item.deleted && !Y.isDeleted(this.peerDeleted, item.id);
  }

  /**
   * The characters a receiver must share with `removed` (see `shared`), before `LEAST_SHARED_PART`: all of a text the
   * peer never had; of a text of only this user's, those the peer had seen, which its update deletes itself
   * (deleting a type deletes the children its writer holds, yjs `ContentType.delete`; the rest went with their node,
   * unseen); 0 for other texts.
   */
  private leastShared(removed: Removed): number {
    let least = this.leastMemo.get(removed);
    if (least === undefined) {
      if (this.unseen(removed)) least = removed.before.length;
      else if (removed.lost.every(Boolean)) least = removed.unitIds.reduce((n, id) => n + (Y.isDeleted(this.peerDeleted, id) ? 1 : 0), 0);
      else least = 0;
      this.leastMemo.set(removed, least);
    }
    return least;
  }

  /** Whether the receivers are few enough to be looked at (`MAX_RECEIVER_CHARS`). */
  private get receiversLooked(): boolean {
    return this.receivers.reduce((n, r) => n + r.text.length, 0) <= MAX_RECEIVER_CHARS;
  }

  /**
   * Whether `str`, a part of a deleted text its receiver lacks, is in another receiver where the transaction wrote:
   * the peer split the text and moved that part there (the TinyMCE fuzz: Bob's write turned a paragraph into two list
   * items, the receiver chosen was the first, and Cid's "cid201q " in the second went back into the first as well).
   * The place must hold a character the transaction put there: the text diff can build a copy mostly from a text's
   * older characters (Bob's "cid201q " was an older "cid1q " with "20" inserted), while an older occurrence elsewhere
   * in the receiver is a like word by chance. Only a part of `OWN_TEXT_RUN` or more with a non-space in it.
   */
  private copiedElsewhere(str: string, receiver: Receiver): boolean {
    if (str.length < OWN_TEXT_RUN || !/\S/.test(str)) return false;
    return this.receivers.some((r) => {
      if (r === receiver) return false;
      let chars = this.charsMemo.get(r);
      if (!chars) this.charsMemo.set(r, (chars = charsOf(r.text, this.created)));
      for (let k = chars.str.indexOf(str); k >= 0; k = chars.str.indexOf(str, k + 1)) {
        if (chars.fresh.slice(k, k + str.length).includes(true)) return true;
      }
      return false;
    });
  }

  /**
   * Puts the stranded runs of a trimmed text (`removed.ids`) into `receiver`. The peer had not seen them, so they are
   * not in the receiver: the diff aligns only the characters the peer removed (it knew them) with the receiver, and
   * each run goes in whole where the text on both sides of it was kept as it was. Diffed together with its
   * neighbours, a run that starts like the text after it is cut: "ann18q ann8q" against "ann8q" aligns as "ann" +
   * "18q ann" + "8q" (the fuzz put "18q " into "ann8q" and left "ann" behind). Returns the UTF-16 units put back.
   */
  private putBackStranded(removed: Removed, receiver: Receiver, moved: Map<Y.XmlText, Y.ID[]>): number {
    let known = '';
    const runs: Array<{ at: number; from: number; to: number }> = [];
    for (let k = 0; k < removed.before.length; ) {
      if (!removed.lost[k]) {
        known += removed.before[k];
        k++;
        continue;
      }
      let end = k + 1;
      while (end < removed.before.length && removed.lost[end]) end++;
      runs.push({ at: known.length, from: k, to: end });
      k = end;
    }
    // As in `rescue`: matched against what the transaction put into the receiver.
    const view = freshView(receiver.text, this.created);
    const now = view.str;
    const diffs = dmp.diff_main(known, now, false);
    let count = 0;
    removed.runs = [];
    for (const run of runs) {
      const kept = keptAround(diffs, run.at, now.length);
      const found = kept === null ? null : view.at(kept);
      removed.runs.push({ from: run.from, to: run.to, at: found === null ? null : found + count });
      if (found === null) continue;
      insertUnits(receiver.text, found + count, removed, run.from, run.to);
      const ids = removed.ids.slice(run.from, run.to).filter((id): id is Y.ID => id !== null);
      moved.set(removed.text, [...(moved.get(removed.text) ?? []), ...ids]);
      count += run.to - run.from;
    }
    return count;
  }

  /**
   * Where offset `offset` of `text` (the offset as before the transaction) now is, when the text there was removed:
   * the matching index in its receiver. Null when the transaction left that place alone or its text went nowhere
   * recognisable. Call it after `rescue`, when that ran: a caret at this user's stranded typing follows the typing.
   */
  locate(text: Y.XmlText, offset: number): { text: Y.XmlText; index: number } | null {
    const removed = this.removed.find((r) => r.text === text);
    const at = removed ? removed.fromBefore(offset) : null;
    const receiver = removed && at !== null ? this.receiverOf(removed) : null;
    if (!removed || at === null || !receiver) return null;
    // A caret in or at the edge of this user's stranded typing goes where that typing went: a run left in place
    // keeps it (the TinyMCE fuzz wrote a held space into "cid|22q" in the receiver while "cid35q" stayed behind).
    const run = removed.runs?.find((r) => at >= r.from && at <= r.to);
    if (run) return run.at === null ? null : { text: receiver.text, index: run.at + (at - run.from) };
    const view = freshView(receiver.text, this.created);
    const diffs = dmp.diff_main(removed.before, view.str, false);
    return { text: receiver.text, index: view.at(dmp.diff_xIndex(diffs, Math.min(at, removed.before.length))) };
  }

  /**
   * The receiver sharing the most characters with `removed` (see `MIN_SHARED`), passing over one that another removed
   * text shares more with: that one is its copy (a document can hold the same words twice, and a write that rebuilt
   * a list copies every item; the fuzz matched "bob54q bob68q bob69qbob55q" with the copy of "cid49q bob54q … bob55q").
   * Several texts can go into one (a merge): when every candidate is another's copy, the best is taken still.
   * A text that held only this user's characters is matched on all of them (`OWN_TEXT_RUN`): the peer may have seen
   * its older part and copied that. Failing that, it goes to the one empty text the transaction created, if exactly
   * one (an empty item the peer indented while this user typed the first words into it).
   */
  private receiverOf(removed: Removed): Receiver | null {
    if (this.chosen.has(removed.text)) return this.chosen.get(removed.text)!;
    let best: Receiver | null = null;
    if (this.receiversLooked) {
      // A text keeps its own places (relative positions follow them); its removed text went elsewhere.
      const candidates = this.receivers
        .filter((r) => r.text !== removed.text)
        .map((receiver) => ({ receiver, shared: this.shared(removed, receiver) }))
        .filter((c) => c.shared > 0)
        .sort((x, y) => y.shared - x.shared);
      const copyOfAnother = (c: { receiver: Receiver; shared: number }): boolean =>
        this.removed.length * this.receivers.length <= MAX_PAIRS &&
        this.removed.some((other) => other !== removed && other.text !== c.receiver.text && this.shared(other, c.receiver) > c.shared);
      best = (candidates.find((c) => !copyOfAnother(c)) ?? candidates[0])?.receiver ?? null;
      if (!best && removed.lost.every(Boolean) && !this.unseen(removed)) {
        const empty = this.receivers.filter((r) => r.created && r.text.length === 0);
        if (empty.length === 1) best = empty[0]!;
      }
    }
    this.chosen.set(removed.text, best);
    return best;
  }

  /**
   * Characters `removed` shares with `receiver` in runs the transaction put there, each at least `MIN_SHARED` long
   * (all its kept characters, when it has fewer; `OWN_TEXT_RUN` for a text of only this user's), and at least
   * `LEAST_SHARED_PART` of all of a text the peer never had, or of what the peer saw of a text of only this user's;
   * 0 below that.
   */
  private shared(removed: Removed, receiver: Receiver): number {
    let memo = this.sharedMemo.get(removed);
    if (!memo) this.sharedMemo.set(removed, (memo = new Map()));
    const known = memo.get(receiver);
    if (known !== undefined) return known;
    const kept = removed.lost.filter((l) => !l).length;
    const run = kept > 0 ? Math.min(MIN_SHARED, kept) : Math.min(OWN_TEXT_RUN, removed.before.length);
    // Runs of text the transaction put there count (a run it only kept was there before, from elsewhere); not
    // letters that two unrelated texts happen to share. What it put there must be more than white space: a
    // peer's undo that deleted a pasted list put one space back before "ann1q" in another paragraph, which then
    // looked like the receiver of an "ann31q" typed in the list (the fuzz; "3" was put into "ann1q").
    const now = charsOf(receiver.text, this.created);
    // A trimmed text's stranded typing is what the peer had not seen: only the characters it removed can be in a
    // receiver, and with the typing left out they are one run (the TinyMCE fuzz, CI's seed, session 21: Ann's Enter
    // moved a "c" and the space after the "id21q" Cid was typing onto it; "c" and " " apart were each too short).
    const stranded = removed.ids.some((id) => id !== null);
    let source = removed.before;
    if (stranded) {
      // By UTF-16 unit, as `lost` is.
      source = '';
      for (let k = 0; k < removed.before.length; k++) if (!removed.lost[k]) source += removed.before[k];
    }
    let shared = 0;
    let j = 0;
    for (const [op, str] of dmp.diff_main(source, now.str, false)) {
      if (op === DiffMatchPatch.DIFF_DELETE) continue;
      if (op === DiffMatchPatch.DIFF_EQUAL && str.length >= run && [...str].some((c, k) => now.fresh[j + k] && /\S/.test(c))) shared += str.length;
      j += str.length;
    }
    // A text the peer never had can be in a receiver only where its characters copy text the peer had (this user's
    // split moved older text into it): then that copy is most of it. A few words in common are chance (the TinyMCE
    // fuzz, CI's seed, session 21: Cid's pasted "cid138q cid139q cid140q" shared "q cid1" with the copy of "cid116q
    // cid107q" that Ann's write made, and went into it nowhere); it goes back where it was (`orphanOf`).
    // Likewise a text of only this user's that the peer had seen: a write that moved it copied what the peer saw of
    // it, so the copy holds most of that; one that deleted it on purpose (a paste over a selection) leaves nothing to
    // put back, however much its new text looks like it (the TinyMCE fuzz, seed 2528532710, session 21: Cid's pasted
    // "cid86q cid87q cid88q" went into Ann's paste over it, which shared "0q cid" with it, and cut her "cid80q").
    const enough = shared >= run && shared >= LEAST_SHARED_PART * this.leastShared(removed);
    const result = run > 0 && enough ? shared : 0;
    memo.set(receiver, result);
    return result;
  }
}

/** Inserts units `from`..`to` of `removed.before` into `text` at `at`, each with its own formatting. */
function insertUnits(text: Y.XmlText, at: number, removed: Removed, from: number, to: number): void {
  insertRuns(text, at, removed.before, removed.attrs, from, to);
}

/**
 * The index in the new text of offset `at` of the old one, when the diff `diffs` (old → new) kept the text on each
 * side of it as it was: at least `MIN_CONTEXT` unchanged characters, possibly beyond characters only deleted (text
 * the peer removed, such as a selection its paste replaced), or the start or end of both texts. Null where the peer
 * wrote new text at the place.
 */
function keptAround(diffs: ReadonlyArray<[number, string]>, at: number, newLength: number): number | null {
  let i = 0;
  let j = 0;
  const ops = diffs.map(([op, str]) => {
    const o = { op, length: str.length, i, j };
    if (op !== DiffMatchPatch.DIFF_INSERT) i += str.length;
    if (op !== DiffMatchPatch.DIFF_DELETE) j += str.length;
    return o;
  });
  // The first op whose old text goes past `at` (an insertion right at `at` stays on the left).
  let s = ops.findIndex((o) => o.i + (o.op === DiffMatchPatch.DIFF_INSERT ? 0 : o.length) > at);
  if (s < 0) s = ops.length;
  const o = ops[s];
  // Kept text on one side of the place: `have` characters next to it, then, outward past characters only deleted,
  // the next unchanged run; the start (the end) of both texts pins it however short. One character, then a deleted
  // space, then more kept text is context enough: the Froala fuzz's paste took one of three spaces before a "c" it had
  // seen, and the diff kept "  " + (" " deleted) + "cann17q…", so Cid's "id41q" after the "c" stayed behind.
  const pinned = (have: number, from: number, step: number): boolean => {
    if (have >= MIN_CONTEXT) return true;
    for (let n = from; n >= 0 && n < ops.length; n += step) {
      const op = ops[n]!;
      if (op.op === DiffMatchPatch.DIFF_DELETE) continue;
      return op.op === DiffMatchPatch.DIFF_EQUAL && have + op.length >= MIN_CONTEXT;
    }
    return true;
  };
  if (o && o.op === DiffMatchPatch.DIFF_EQUAL && o.i < at) {
    const before = at - o.i;
    return pinned(before, s - 1, -1) && pinned(o.i + o.length - at, s + 1, 1) ? o.j + before : null;
  }
  return pinned(0, s - 1, -1) && pinned(0, s, 1) ? (o ? o.j : newLength) : null;
}
