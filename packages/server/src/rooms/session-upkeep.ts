/**
 * A room's hold on its stored session (PROTOCOL.md P8), beside the server's sweep that touches it while peers are
 * connected (session-touches.ts): re-read when the room may be out of date (a notice from another server, a lost
 * seed lease, an idle room about to be reused). A session that is no longer the room's (expired during a stall, or
 * deleted) ends the room's (`sessionEnded`).
 */
import type { DocKey, Store } from '../store/types.js';

/** The room as its session upkeep sees it, read at each use. */
export interface SessionRoom {
  readonly key: DocKey;
  readonly epoch: number;
  readonly seeded: boolean;
  readonly closed: boolean;
}

export interface SessionUpkeepOptions {
  room: SessionRoom;
  store: Store;
  /** `RoomSettings.graceMs`. */
  graceMs: number;
  /** `RoomSettings.persistent`. */
  persistent: boolean;
  /** The stored session is no longer the room's. */
  sessionEnded: () => void;
  /** The epoch was seeded elsewhere: loads it, marks the room seeded and syncs its waiting peers. */
  loadSeeded: () => Promise<void>;
  /** The epoch is still unseeded: offers the seed lease to a waiting peer (`SeedLease.offer`). */
  offerLease: () => Promise<void>;
  /** Runs a store call in the room's tracked work (logged on failure, awaited on close). */
  track: (run: Promise<void>, what: string) => void;
}

export class SessionUpkeep {
  private refreshing = false;
  private refreshAgain = false;

  constructor(private readonly opts: SessionUpkeepOptions) {}

  /**
   * For an idle room about to be reused: opens the session again (it may have ended during the grace period) and
   * tells whether the room still matches it.
   */
  async revalidate(): Promise<boolean> {
    const { room, store } = this.opts;
    const session = await store.openSession(room.key, { now: Date.now(), graceMs: this.opts.graceMs, persistent: this.opts.persistent });
    return session.epoch === room.epoch && session.seeded === room.seeded;
  }

  /** Re-reads the session: seeded elsewhere → load and sync the waiting peers; still unseeded → try the lease. */
  async refresh(): Promise<void> {
    const { room, store } = this.opts;
    if (room.closed || room.seeded) return;
    if (this.refreshing) {
      // A notice from another server arrived while the store was being read: that read may predate it.
      this.refreshAgain = true;
      return;
    }
    this.refreshing = true;
    this.refreshAgain = false;
    try {
      const session = await store.getSession(room.key);
      if (room.closed) return;
      if (!session || session.epoch !== room.epoch) {
        this.opts.sessionEnded();
        return;
      }
      if (session.seeded) {
        await this.opts.loadSeeded();
        return;
      }
    } finally {
      this.refreshing = false;
    }
    await this.opts.offerLease();
    if (this.refreshAgain) this.opts.track(this.refresh(), 'checking the seed state');
  }
}
