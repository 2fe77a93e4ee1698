/**
 * Keeps the stored sessions of this server's rooms with connections alive (PROTOCOL.md P8): every third of the
 * grace period, one `Store.touchSessions` call touches all of them in one transaction. The store's work per sweep is
 * one transaction and one fsync whatever the number of rooms, instead of one per room at its own moment. A room whose
 * document no longer has a session of the room's epoch (expired during a stall, or deleted) is told.
 */
import type { Store } from '../store/types.js';
import type { Logger } from '../log.js';
import type { SessionRoom } from './session-upkeep.js';

export class SessionTouches {
  /** Each room (read at each sweep) with what to call when its stored session is no longer the room's. */
  private readonly rooms = new Map<SessionRoom, () => void>();
  private timer: NodeJS.Timeout | undefined;
  /** The sweep in progress: sweeps never overlap, and `close` waits for it. */
  private running: Promise<void> | undefined;

  /** `graceMs`: the session grace period (`--session-grace`). */
  constructor(
    private readonly store: Store,
    private readonly graceMs: number,
    private readonly log: Logger,
  ) {}

  /** Rooms touched by each sweep. */
  get size(): number {
    return this.rooms.size;
  }

  /** Touches `room`'s session from the next sweep on, until `remove`; `sessionEnded` when it is no longer the room's. */
  add(room: SessionRoom, sessionEnded: () => void): void {
    this.rooms.set(room, sessionEnded);
    if (this.timer) return;
    // A third of the grace period: two sweeps may be late or fail before a live session could expire.
    this.timer = setInterval(() => {
      if (!this.running) this.running = this.sweep().finally(() => (this.running = undefined));
    }, Math.max(100, Math.floor(this.graceMs / 3)));
    this.timer.unref();
  }

  remove(room: SessionRoom): void {
    this.rooms.delete(room);
    if (this.rooms.size > 0 || !this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Stops sweeping; resolves once a sweep in progress has settled. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.rooms.clear();
    await this.running;
  }

  private async sweep(): Promise<void> {
    const touched = [...this.rooms.keys()].filter((room) => !room.closed).map((room) => ({ room, epoch: room.epoch }));
    if (touched.length === 0) return;
    let ended: number[];
    try {
      ended = await this.store.touchSessions(
        touched.map(({ room, epoch }) => ({ doc: room.key, epoch })),
        Date.now(),
      );
    } catch (error) {
      this.log.error(`touching ${touched.length} sessions`, error);
      return;
    }
    for (const i of ended) {
      const { room, epoch } = touched[i]!;
      // Still the room's session as touched: a room that moved on to another epoch meanwhile holds that one.
      if (!room.closed && room.epoch === epoch) this.rooms.get(room)?.();
    }
  }
}
