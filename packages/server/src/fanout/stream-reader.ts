/**
 * One loop per server reads every subscribed document stream with a single blocking `XREAD` on its own Redis
 * connection, resuming each stream from the last id it delivered: a reader that falls behind (GC pause, slow
 * event loop) reads what it missed on its next call, nothing is lost while the entries are in the stream.
 *
 * A blocking XREAD cannot take new streams while it waits, so a subscription change wakes it with
 * `CLIENT UNBLOCK` (from the command connection) and the loop starts over with the new set of streams.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../log.js';
import { compareIds } from './redis-codec.js';

/** What the reader needs from a subscription. */
export interface StreamSubscription {
  readonly key: string;
  /** Id of the last entry delivered (or the id recorded at join: entries after it are delivered). */
  lastId: string;
  deliver(fields: Buffer[]): void;
  /** Entries may have been lost (Redis connection failed); the subscriber reloads from the store. */
  gap(): void;
}

/**
 * How long one XREAD blocks. Only bounds how late a subscription added during the rare race with the wake-up is
 * picked up, and how often an idle server talks to Redis: 2 s does both well.
 */
const BLOCK_MS = 2_000;
/** Entries per stream per read; a burst longer than this is read over several calls, in order. */
const READ_COUNT = 500;
/** Backoff after a failed read: doubles from 50 ms up to this, so a Redis that comes back is used within 2 s. */
const MAX_BACKOFF_MS = 2_000;

export class StreamReader {
  private readonly subscriptions = new Set<StreamSubscription>();
  /** Bumped on every change of `subscriptions`. */
  private generation = 0;
  /** Generation of the XREAD in flight, or -1 when none is. */
  private reading = -1;
  private readerId: number | undefined;
  private wakeIdle: (() => void) | undefined;
  private waking = false;
  private closed = false;
  private failures = 0;
  private readonly done: Promise<void>;

  constructor(
    private readonly reader: Redis,
    private readonly control: Redis,
    private readonly log: Logger,
  ) {
    this.done = this.run();
  }

  /** False while reads fail (health checks). */
  get healthy(): boolean {
    return this.failures === 0;
  }

  add(subscription: StreamSubscription): void {
    this.subscriptions.add(subscription);
    this.changed();
  }

  remove(subscription: StreamSubscription): void {
    if (this.subscriptions.delete(subscription)) this.changed();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wakeIdle?.();
    // Fails the blocked XREAD at once; the loop sees `closed` and ends.
    this.reader.disconnect();
    await this.done;
  }

  private changed(): void {
    this.generation++;
    this.wakeIdle?.();
    void this.wake();
  }

  /**
   * Unblocks an XREAD that was sent with an older set of streams. The XREAD may still be on its way to Redis
   * (UNBLOCK answers 0): then try again shortly. Bounded; past it the block timeout picks the change up.
   */
  private async wake(): Promise<void> {
    if (this.waking) return;
    this.waking = true;
    try {
      for (let attempt = 0; attempt < 20; attempt++) {
        if (this.closed || this.reading === -1 || this.reading >= this.generation || this.readerId === undefined) return;
        const unblocked = await this.control.client('UNBLOCK', this.readerId).catch(() => 0);
        if (unblocked === 1) return;
        await delay(5);
      }
    } finally {
      this.waking = false;
    }
  }

  private async run(): Promise<void> {
    while (!this.closed) {
      if (this.subscriptions.size === 0) {
        await new Promise<void>((resolve) => (this.wakeIdle = resolve));
        this.wakeIdle = undefined;
        continue;
      }
      try {
        // Not connected yet (start, reconnect): wait for it rather than fail a read that cannot be sent.
        if (this.reader.status !== 'ready') await ready(this.reader, MAX_BACKOFF_MS);
        this.readerId ??= await this.reader.client('ID');
        if (this.failures > 0) {
          // Reads failed for a while: Redis may have restarted (it keeps nothing on disk here) and lost entries
          // nobody read. Now that it answers again, every subscriber reloads from the store once (cheap next to
          // the outage); the reads below resume from the last ids, so the two overlap rather than leave a hole.
          this.failures = 0;
          for (const s of this.subscriptions) s.gap();
        }
        // One id per stream: the smallest among its subscriptions (normally there is one per stream).
        const from = new Map<string, string>();
        for (const s of this.subscriptions) {
          const current = from.get(s.key);
          if (current === undefined || compareIds(s.lastId, current) < 0) from.set(s.key, s.lastId);
        }
        this.reading = this.generation;
        const reply = await this.reader.callBuffer('XREAD', 'COUNT', READ_COUNT, 'BLOCK', BLOCK_MS, 'STREAMS', ...from.keys(), ...from.values());
        this.reading = -1;
        this.dispatch(reply);
      } catch (error) {
        this.reading = -1;
        if (this.closed) return;
        this.failures++;
        this.readerId = undefined; // a reconnected socket has a new client id
        if (this.failures === 1) this.log.warn('reading document streams from Redis failed; retrying', error);
        await delay(Math.min(50 * 2 ** Math.min(this.failures, 10), MAX_BACKOFF_MS));
      }
    }
  }

  private dispatch(reply: unknown): void {
    if (!Array.isArray(reply)) return; // null: timed out or unblocked
    for (const stream of reply as Array<[Buffer, Array<[Buffer, Buffer[]]>]>) {
      const key = stream[0].toString();
      const subscribers = [...this.subscriptions].filter((s) => s.key === key);
      for (const [rawId, fields] of stream[1]) {
        const id = rawId.toString();
        for (const s of subscribers) {
          if (!this.subscriptions.has(s) || compareIds(id, s.lastId) <= 0) continue;
          s.lastId = id;
          try {
            s.deliver(fields);
          } catch (error) {
            this.log.error(`handling stream entry ${id} of ${key}`, error);
          }
        }
      }
    }
  }
}

/**
 * Resolves when the connection is ready, has ended (closed for good), or after `ms` (the caller's next command
 * then fails and backs off).
 */
function ready(redis: Redis, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      redis.off('ready', done);
      redis.off('end', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    redis.once('ready', done);
    redis.once('end', done);
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
