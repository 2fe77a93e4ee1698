/**
 * Compaction of a room's stored updates into one (the room's `Y.Doc` state), once more than `compactAfterUpdates`
 * were stored since the last load or compaction (loading cost grows with the update count), or once the updates
 * stored after the first row outweigh it and `COMPACT_AFTER_BYTES` (a paste, a document sent as one update): a load
 * then reads at most about twice the document's bytes, and a document loaded from one row can be sent to its first
 * client as stored, without decoding it first (doc-holder.ts, `holdStored`). Through the doc, not
 * `Y.mergeUpdates`, which is super-linear on many small updates (yjs issue 710). Correct because every stored
 * update of the document was applied to the doc before it was enqueued (this server's own), or is read from the
 * store and applied first (other servers', when the fan-out is shared), so the state read after `upToSeq`
 * contains all of them.
 */
import * as Y from 'yjs';
import type { CommitQueue } from '../store/commit-queue.js';
import type { DocKey, Store } from '../store/types.js';
import type { DocFeed } from '../fanout/types.js';
import { REMOTE, dropPending } from './origins.js';

/** Pause after a failed compaction: the commit queue already retries the store; compaction can wait. */
const COMPACTION_RETRY_MS = 30_000;

/**
 * Below this many bytes of updates after the first row, only their count triggers a compaction: a small document's
 * few rows load fast, and compacting it on bytes would rewrite it every few dozen edits.
 */
export const COMPACT_AFTER_BYTES = 64 * 1024;

/** The room as compaction sees it: its document and session, read at each use. */
export interface CompactionRoom {
  readonly key: DocKey;
  readonly doc: Y.Doc;
  readonly epoch: number;
  readonly closed: boolean;
}

export interface CompactionOptions {
  room: CompactionRoom;
  store: Store;
  queue: CommitQueue;
  feed: DocFeed;
  /** Other servers append to the same documents (`Fanout.shared`): the store may hold updates the doc lacks. */
  shared: boolean;
  /** `RoomSettings.compactAfterUpdates`. */
  compactAfterUpdates: number;
  /** Runs a compaction in the room's tracked work (logged on failure, awaited on close). */
  track: (run: Promise<void>, what: string) => void;
}

export class Compaction {
  /** Updates stored since the last compaction; after a load, the rows loaded. */
  private storedSince = 0;
  /** Bytes of the first row: the snapshot or seed the later rows add to. */
  private baseBytes = 0;
  /** Bytes of the rows after the first. */
  private bytesSince = 0;
  private running = false;
  private retryAt = 0;

  constructor(private readonly opts: CompactionOptions) {}

  /** The store now holds these rows of the document, in order (after a load or a seed). */
  reset(rows: readonly Uint8Array[]): void {
    this.storedSince = rows.length;
    this.baseBytes = rows[0]?.length ?? 0;
    this.bytesSince = rows.reduce((sum, row) => sum + row.length, 0) - this.baseBytes;
  }

  /** One more update of `bytes` was enqueued for the store; compacts if they are many or large. */
  stored(bytes: number): void {
    this.bytesSince += bytes;
    this.storedSince++;
    this.maybeCompact();
  }

  /** Starts a compaction unless one runs, the room closed, the updates are few and small, or the last one failed lately. */
  maybeCompact(): void {
    if (this.running || this.opts.room.closed) return;
    const many = this.storedSince > this.opts.compactAfterUpdates;
    const large = this.bytesSince > Math.max(COMPACT_AFTER_BYTES, this.baseBytes);
    if (!many && !large) return;
    if (Date.now() < this.retryAt) return;
    this.running = true;
    this.opts.track(
      this.compact().finally(() => {
        this.running = false;
      }),
      'compacting',
    );
  }

  /** Replaces the stored updates by one: the doc's state. */
  private async compact(): Promise<void> {
    const { room, store, queue, feed } = this.opts;
    const count = this.storedSince;
    const bytes = this.bytesSince;
    this.storedSince = 0;
    this.bytesSince = 0;
    try {
      await queue.flush();
      const epoch = room.epoch;
      let upToSeq: number;
      if (this.opts.shared) {
        // Other servers append too, and some of their updates may still be on their way through the fan-out:
        // apply what the store holds, so that the state below contains every row up to upToSeq. (Appends of one
        // document are serialised by the store, so no row ≤ upToSeq can be committed after this read.)
        const stored = await store.loadDocument(room.key, epoch);
        if (room.closed || epoch !== room.epoch) return;
        room.doc.transact(() => {
          for (const update of stored.updates) Y.applyUpdate(room.doc, update, REMOTE);
        }, REMOTE);
        if (dropPending(room.doc)) throw new Error('stored updates do not integrate; compaction skipped');
        upToSeq = stored.lastSeq;
      } else {
        upToSeq = await store.lastSeq(room.key, epoch);
      }
      if (upToSeq === 0) return;
      const state = Y.encodeStateAsUpdate(room.doc);
      await store.compact(room.key, epoch, state, upToSeq);
      // The updates stored meanwhile add to the snapshot (`stored` counted them from 0).
      this.baseBytes = state.length;
      feed.compacted();
    } catch (error) {
      this.storedSince += count;
      this.bytesSince += bytes;
      this.retryAt = Date.now() + COMPACTION_RETRY_MS;
      throw error;
    }
  }
}
