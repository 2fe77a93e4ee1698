/**
 * A room's document, held either as a live `Y.Doc` or, once no transaction touched it for `idleMs`, in compact form:
 * its state as one V2 update, its state vector and its delete set (an update of deletes only). A live doc costs a few
 * hundred bytes of heap per struct, the compact form about ten (a document of 200 random edits, ~300 structs: ~85 KB
 * less heap). `doc` rebuilds the live doc on the next use, so memory follows activity rather than the documents
 * loaded.
 *
 * Correct by construction: compacting and rebuilding are synchronous, each one step of the event loop, so no update
 * can arrive between reading the state and dropping the doc, or between applying the state and attaching the room's
 * `update` listener. The listener is attached after the state is applied, so a rebuild emits nothing to relay or
 * store; what the compact form holds is exactly what the dropped doc held.
 *
 * A join is answered from the compact form (`stateVector`, `encodeState`), and so is a client's reply that adds
 * nothing (`addsNothing`): a client that connects to an idle document does not rebuild it.
 *
 * A document loaded from one stored row (a snapshot or a seed) starts in compact form too (`holdStored`): the first
 * sync sends the row as it was stored, and the doc is built after it (`buildSoon`), not on that client's path.
 */
import * as Y from 'yjs';
import { decodeWhole } from './update-check.js';
import { newDoc } from '../new-doc.js';

/**
 * Documents with more structs stay live: their rebuild, which runs inside the handling of the next change (a client
 * message or another server's update) and blocks the event loop for every other document meanwhile, costs about
 * 3–5 µs of CPU per struct on the 2-core test machine under load (typing-like and random-insert text, rising faster
 * above ~8,000 structs). 4,000 keeps a rebuild within ~20 ms, so a rebuild plus the message that caused it stays
 * inside RELIABILITY.md S9's 50 ms per message. Such a document is ~40 KB of compact form; most documents are far
 * smaller, and the few larger ones are few by number.
 */
export const MAX_COMPACT_STRUCTS = 4_000;

type UpdateListener = (update: Uint8Array, origin: unknown, doc: Y.Doc, transaction: Y.Transaction) => void;

export interface DocHolderOptions {
  /** Time without a transaction after which the doc is compacted. */
  idleMs: number;
  /** Docs with more structs than this stay live (`MAX_COMPACT_STRUCTS`). */
  maxStructs?: number;
  /** The room's `update` listener, attached to every live doc. */
  listener: UpdateListener;
  /** Called after each compaction (the room drops what it kept of the loaded state). */
  compacted?: () => void;
}

/** A document's state without a live doc. */
interface CompactForm {
  /**
   * Where the form came from, and so the format of `update`: `idle`, `Y.encodeStateAsUpdateV2` of the idle doc
   * (`compactIfIdle`); `stored`, a stored row, V1 (`holdStored`).
   */
  source: 'idle' | 'stored';
  /** The whole document as one update. */
  update: Uint8Array;
  /** `Y.encodeStateVector` of the doc. */
  stateVector: Uint8Array;
  /** The doc's delete set, as an update (same format) without structs; derived on first use when not yet known. */
  deletes?: Uint8Array;
}

export class DocHolder {
  private live: Y.Doc | null;
  private form: CompactForm | null = null;
  /** `Date.now()` of the live doc's last transaction (or of its rebuild). */
  private usedAt = Date.now();
  /** Armed while the doc is live and may still be compacted; re-armed by the next transaction after a refusal. */
  private timer: NodeJS.Timeout | undefined;
  private destroyed = false;
  /** A `buildSoon` is scheduled. */
  private building = false;

  constructor(private readonly opts: DocHolderOptions) {
    this.live = this.attach(newDoc());
  }

  /** The live doc, rebuilt from the compact form when there is none. */
  get doc(): Y.Doc {
    return this.live ?? this.rebuild();
  }

  /** True while the document is held in compact form. */
  get compact(): boolean {
    return this.live === null;
  }

  /** `Y.encodeStateVector` of the document, live or compact. */
  stateVector(): Uint8Array {
    return this.form ? this.form.stateVector : Y.encodeStateVector(this.doc);
  }

  /**
   * `Y.encodeStateAsUpdate(doc, stateVector)` (V1, the wire format), from the compact form when there is one: the
   * structs the state vector lacks and the whole delete set, as Yjs encodes them from a doc. Throws on a state vector
   * that does not decode.
   */
  encodeState(stateVector?: Uint8Array): Uint8Array {
    const form = this.form;
    if (!form) return Y.encodeStateAsUpdate(this.doc, stateVector);
    if (form.source === 'stored') return stateVector === undefined ? form.update : Y.diffUpdate(form.update, stateVector);
    return Y.convertUpdateFormatV2ToV1(stateVector === undefined ? form.update : Y.diffUpdateV2(form.update, stateVector));
  }

  /**
   * Holds `row`, a whole document as one V1 update, as the compact form, if the live doc is still empty (nothing
   * applied to it yet); true when it did. The row must have no structs or deletes waiting for missing dependencies,
   * which holds for what the server stores as a snapshot or a seed (update-check.ts refuses such updates, and a
   * compaction encodes a doc that has none): so its state vector, read from the bytes, is the doc's.
   */
  holdStored(row: Uint8Array): boolean {
    const live = this.live;
    if (live === null || live.store.clients.size > 0 || this.destroyed) return false;
    const stateVector = Y.encodeStateVectorFromUpdate(row);
    this.form = { source: 'stored', update: row, stateVector };
    this.detach(live);
    live.destroy();
    this.live = null;
    return true;
  }

  /**
   * Builds the live doc on the next turn of the event loop, after what was sent meanwhile, when the compact form
   * came from `holdStored`: such a document can be of any size, and its build must not run inside the handling of a
   * later message (RELIABILITY.md S9) as a lazy rebuild would.
   */
  buildSoon(): void {
    if (this.form?.source !== 'stored' || this.building) return;
    this.building = true;
    setImmediate(() => {
      this.building = false;
      if (!this.destroyed && this.live === null) this.rebuild();
    });
  }

  /**
   * True when the document is compact and applying `update` (V1) would change nothing: it has no structs and deletes
   * only what the document has deleted already (a client's reply to step1 after it joined). False also when it does
   * not decode: the room's full check gives the reason.
   */
  addsNothing(update: Uint8Array): boolean {
    if (!this.form) return false;
    let decoded;
    try {
      decoded = decodeWhole(update);
    } catch {
      return false;
    }
    if (decoded.structs.length > 0) return false;
    if (decoded.ds.clients.size === 0) return true;
    const deleted = deleteSet(this.form).clients;
    for (const [client, ranges] of decoded.ds.clients) {
      for (const range of ranges) if (!covered(deleted.get(client), range.clock, range.len)) return false;
    }
    return true;
  }

  /**
   * Compacts the live doc if no transaction touched it for `idleMs`, it has at most `maxStructs` structs and nothing
   * waits for missing dependencies. True when the document is compact now. The idle timer calls it.
   */
  compactIfIdle(): boolean {
    const live = this.live;
    if (live === null) return true;
    if (this.destroyed || Date.now() - this.usedAt < this.opts.idleMs) return false;
    if (live.store.pendingStructs !== null || live.store.pendingDs !== null) return false;
    if (structCount(live) > (this.opts.maxStructs ?? MAX_COMPACT_STRUCTS)) return false;
    const stateVector = Y.encodeStateVector(live);
    this.form = { source: 'idle', update: Y.encodeStateAsUpdateV2(live), stateVector, deletes: Y.encodeStateAsUpdateV2(live, stateVector) };
    this.detach(live);
    live.destroy();
    this.live = null;
    this.opts.compacted?.();
    return true;
  }

  /** Drops the doc or its compact form for good; the holder is not used afterwards. */
  destroy(): void {
    this.destroyed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.live) {
      this.detach(this.live);
      this.live.destroy();
    }
    this.form = null;
  }

  /** Applies the compact form to a new doc, then attaches the listeners: the rebuild itself emits no update. */
  private rebuild(): Y.Doc {
    if (this.destroyed) throw new Error('the document holder was destroyed');
    const doc = newDoc();
    const form = this.form!;
    if (form.source === 'idle') Y.applyUpdateV2(doc, form.update);
    else Y.applyUpdate(doc, form.update);
    this.form = null;
    this.live = this.attach(doc);
    return doc;
  }

  private attach(doc: Y.Doc): Y.Doc {
    doc.on('update', this.opts.listener);
    doc.on('afterTransaction', this.used);
    this.used();
    return doc;
  }

  private detach(doc: Y.Doc): void {
    doc.off('update', this.opts.listener);
    doc.off('afterTransaction', this.used);
  }

  private readonly used = (): void => {
    this.usedAt = Date.now();
    if (this.timer === undefined && !this.destroyed) this.arm(this.opts.idleMs);
  };

  private arm(ms: number): void {
    this.timer = setTimeout(this.idle, ms);
    this.timer.unref();
  }

  private readonly idle = (): void => {
    this.timer = undefined;
    if (this.live === null || this.destroyed) return;
    const left = this.usedAt + this.opts.idleMs - Date.now();
    // Used meanwhile: wait for the rest. Refused (too large, pending): the next transaction arms the timer again.
    if (left > 0) this.arm(left);
    else this.compactIfIdle();
  };
}

/** The compact form's delete set, derived (and kept) on first use for a form held from a stored row. */
function deleteSet(form: CompactForm): { clients: Map<number, Array<{ clock: number; len: number }>> } {
  if (form.source === 'idle') return Y.decodeUpdateV2((form.deletes ??= Y.diffUpdateV2(form.update, form.stateVector))).ds;
  return Y.decodeUpdate((form.deletes ??= Y.diffUpdate(form.update, form.stateVector))).ds;
}

/** Structs in the doc's store: what a rebuild creates. */
function structCount(doc: Y.Doc): number {
  let count = 0;
  for (const structs of doc.store.clients.values()) count += structs.length;
  return count;
}

/** True when the clocks [clock, clock + len) lie within `ranges` (one client's delete set, sorted by clock). */
function covered(ranges: ReadonlyArray<{ clock: number; len: number }> | undefined, clock: number, len: number): boolean {
  if (!ranges) return false;
  let lo = 0;
  let hi = ranges.length;
  // First range that ends after `clock`.
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const r = ranges[mid]!;
    if (r.clock + r.len <= clock) lo = mid + 1;
    else hi = mid;
  }
  let reached = clock;
  const end = clock + len;
  for (let i = lo; i < ranges.length && reached < end; i++) {
    const r = ranges[i]!;
    if (r.clock > reached) return false;
    reached = Math.max(reached, r.clock + r.len);
  }
  return reached >= end;
}
