/**
 * Group commit for document updates (P9). Rooms enqueue the updates they applied; the queue writes everything
 * enqueued during one turn of the event loop — or, with `windowMs`, during that many milliseconds after the first
 * entry of a batch — with a single `appendUpdates` call (one transaction, one fsync), and resolves each `enqueue`
 * once the batch holding its entries is committed — that is when acks may go out.
 *
 * Batches commit strictly one after another in enqueue order, so a resolved `enqueue` also means every earlier
 * one is committed. A failing store never loses entries: the batch stays in memory and is retried with capped
 * backoff, and nothing behind it resolves until it is committed (no ack for uncommitted edits).
 */
import type { AppendEntry, Store } from './types.js';

export interface CommitQueueOptions {
  /**
   * A batch is sealed and written at once when it reaches this many entries or bytes, without waiting for the end
   * of the event-loop turn. The caps keep one commit to a few milliseconds (every ack in the batch waits for all of
   * it) and bound the memory of a batch; beyond ~500 rows the fsync is already amortised and bigger transactions
   * only add latency for everyone in them.
   */
  maxBatchEntries?: number;
  maxBatchBytes?: number;
  /**
   * Milliseconds a batch stays open after its first entry (0: until the end of the event-loop turn). Rooms relay
   * updates before they are committed, so the window delays only acks, by at most this long; in exchange many
   * documents' updates share one fsync. While one batch commits the next one collects, so with the default 0 the
   * batches grow with the commit time (a commit runs off the event loop: SQLite's writer thread, or Postgres).
   */
  windowMs?: number;
  /** First retry delay after a failed commit; doubles per attempt up to `retryMaxMs`. */
  retryMinMs?: number;
  /** Cap of the retry delay: a store that comes back is used within this long. */
  retryMaxMs?: number;
  /** Called for each failed attempt (logging). */
  onError?: (error: unknown, attempt: number) => void;
}

const DEFAULTS = {
  maxBatchEntries: 500,
  maxBatchBytes: 4 * 1024 * 1024,
  windowMs: 0,
  retryMinMs: 50,
  retryMaxMs: 5_000,
} as const;

interface Batch {
  entries: AppendEntry[];
  bytes: number;
  waiters: Array<() => void>;
}

export class CommitQueue {
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private readonly windowMs: number;
  private readonly retryMinMs: number;
  private readonly retryMaxMs: number;
  private readonly onError: (error: unknown, attempt: number) => void;
  /** Collecting entries of the current event-loop turn. */
  private open: Batch = newBatch();
  /** Waiting to be written, oldest first; `sealed[0]` is being written while `writing`. */
  private readonly sealed: Batch[] = [];
  private writing = false;
  private flushScheduled = false;
  private failures = 0;

  constructor(private readonly store: Pick<Store, 'appendUpdates'>, options: CommitQueueOptions = {}) {
    this.maxEntries = options.maxBatchEntries ?? DEFAULTS.maxBatchEntries;
    this.maxBytes = options.maxBatchBytes ?? DEFAULTS.maxBatchBytes;
    this.windowMs = options.windowMs ?? DEFAULTS.windowMs;
    this.retryMinMs = options.retryMinMs ?? DEFAULTS.retryMinMs;
    this.retryMaxMs = options.retryMaxMs ?? DEFAULTS.retryMaxMs;
    this.onError = options.onError ?? (() => {});
  }

  /**
   * Adds entries to the next batch. Resolves after the batch holding the last of them is committed; with no
   * entries, after every earlier enqueue is committed. Never rejects.
   */
  enqueue(entries: readonly AppendEntry[]): Promise<void> {
    return new Promise<void>((resolve) => {
      let target = this.open;
      for (const entry of entries) {
        target = this.open;
        target.entries.push(entry);
        target.bytes += entry.update.byteLength;
        if (target.entries.length >= this.maxEntries || target.bytes >= this.maxBytes) this.seal();
      }
      target.waiters.push(resolve);
      if (this.sealed.length > 0) void this.drain();
      this.scheduleFlush();
    });
  }

  /** Resolves when everything enqueued so far is committed. */
  flush(): Promise<void> {
    return this.enqueue([]);
  }

  /** Entries enqueued and not yet committed. */
  get pending(): number {
    let n = this.open.entries.length;
    for (const batch of this.sealed) n += batch.entries.length;
    return n;
  }

  /** Consecutive failed commit attempts (0 when the store is healthy). */
  get failingAttempts(): number {
    return this.failures;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || (this.open.entries.length === 0 && this.open.waiters.length === 0)) return;
    this.flushScheduled = true;
    const flush = (): void => {
      this.flushScheduled = false;
      if (this.open.entries.length > 0 || this.open.waiters.length > 0) this.seal();
      void this.drain();
    };
    // setImmediate runs after the I/O callbacks of this turn: every message that arrived together joins one batch.
    // A batch holding only waiters (flush) has nothing to wait for.
    if (this.windowMs > 0 && this.open.entries.length > 0) setTimeout(flush, this.windowMs);
    else setImmediate(flush);
  }

  private seal(): void {
    this.sealed.push(this.open);
    this.open = newBatch();
  }

  private async drain(): Promise<void> {
    if (this.writing) return;
    this.writing = true;
    try {
      while (this.sealed.length > 0) {
        const batch = this.sealed[0]!;
        if (batch.entries.length > 0) await this.write(batch.entries);
        this.sealed.shift();
        for (const resolve of batch.waiters) resolve();
      }
    } finally {
      this.writing = false;
    }
  }

  /** Writes one batch, retrying until it is committed. */
  private async write(entries: AppendEntry[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.store.appendUpdates(entries);
        this.failures = 0;
        return;
      } catch (error) {
        this.failures = attempt;
        this.onError(error, attempt);
        const delay = Math.min(this.retryMinMs * 2 ** Math.min(attempt - 1, 20), this.retryMaxMs);
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }
}

function newBatch(): Batch {
  return { entries: [], bytes: 0, waiters: [] };
}
