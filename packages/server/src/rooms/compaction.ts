/**
 * Compaction of a room's stored updates into one (the room's `Y.Doc` state), once more than `compactAfterUpdates`
 * were stored since the last load or compaction: loading cost grows with the update count. Through the doc, not
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
  private storedSince = 0;
  private running = false;
  private retryAt = 0;

  constructor(private readonly opts: CompactionOptions) {}

  /** The store now holds `count` updates of the document (after a load or a seed). */
  reset(count: number): void {
    this.storedSince = count;
  }

  /** One more update was enqueued for the store; compacts if they are many. */
  stored(): void {
    this.storedSince++;
    this.maybeCompact();
  }

  /** Starts a compaction unless one runs, the room closed, the updates are few, or the last one failed lately. */
  maybeCompact(): void {
    if (this.running || this.opts.room.closed || this.storedSince <= this.opts.compactAfterUpdates) return;
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
    this.storedSince = 0;
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
      feed.compacted();
    } catch (error) {
      this.storedSince += count;
      this.retryAt = Date.now() + COMPACTION_RETRY_MS;
      throw error;
    }
  }
}
