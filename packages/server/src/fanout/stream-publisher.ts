/**
 * Ordered, retried XADDs. Rooms hand over entries after their commit; this queue sends them in that order in
 * pipelines (one round trip for everything queued meanwhile) and keeps them while Redis is unreachable. An entry
 * sent twice after a failed pipeline is harmless: a Yjs update applied twice changes nothing.
 *
 * `add` resolves once Redis replied to the entry's XADD: from then on every reader of the stream receives it, so a
 * room may ack it (fanout/types.ts). Entries are accepted in queue order, and an entry dropped to bound memory hands
 * its waiters to the `gap` entry that replaces it (readers that get the gap reload from the store, which has it).
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../log.js';
import { streamFields } from './redis-codec.js';

interface Entry {
  key: string;
  fields: Array<string | Buffer>;
  /** Resolved once Redis accepted this entry (or the gap that replaced it). */
  accepted: Array<() => void>;
}

/** Entries per pipeline: one round trip stays short, a burst still goes out in a few. */
const MAX_PIPELINE = 500;
/**
 * Entries kept while Redis is unreachable. Past it the oldest are dropped and a `gap` entry tells the other
 * servers to reload those documents from the store (where every one of them is already committed), so memory
 * stays bounded during a long outage without any server keeping a wrong document.
 */
const MAX_QUEUED = 50_000;
/**
 * A stream nobody writes to expires after this long: documents that are never opened again leave nothing in Redis.
 * Far longer than any reader lags, and every XADD pushes it back.
 */
const IDLE_TTL_MS = 24 * 3600 * 1000;
const MAX_BACKOFF_MS = 2_000;
/** Streams whose newest id is remembered for trimming. */
const MAX_TRACKED_STREAMS = 10_000;

export class StreamPublisher {
  private queue: Entry[] = [];
  private draining = false;
  private stopped = false;
  private idleWaiters: Array<() => void> = [];
  /** Newest id this server wrote per stream (trimming is measured from it). */
  readonly lastIds = new Map<string, string>();

  constructor(
    private readonly redis: Redis,
    private readonly serverId: string,
    private readonly log: Logger,
  ) {}

  get pending(): number {
    return this.queue.length;
  }

  /** Queues an entry; resolves once Redis accepted it. Never rejects (pending while Redis is unreachable). */
  add(key: string, fields: Array<string | Buffer>): Promise<void> {
    return new Promise<void>((resolve) => {
      this.queue.push({ key, fields, accepted: [resolve] });
      if (this.queue.length > MAX_QUEUED) this.dropOldest();
      void this.drain();
    });
  }

  /** Resolves when everything queued so far was sent (or the publisher stopped). */
  flush(): Promise<void> {
    if (this.queue.length === 0 || this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  stop(): void {
    this.stopped = true;
    this.resolveIdle();
  }

  private dropOldest(): void {
    const dropped = this.queue.splice(0, this.queue.length - MAX_QUEUED);
    const gaps = new Map<string, Entry>();
    for (const entry of dropped) {
      let gap = gaps.get(entry.key);
      if (!gap) gaps.set(entry.key, (gap = { key: entry.key, fields: streamFields(this.serverId, 'gap', 0), accepted: [] }));
      gap.accepted.push(...entry.accepted);
    }
    this.log.error(`fan-out: Redis unreachable for long; dropped ${dropped.length} queued entries of ${gaps.size} document(s), asking their readers to reload`);
    this.queue.push(...gaps.values());
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      let failures = 0;
      // Bounded by the queue; each round sends or backs off.
      while (this.queue.length > 0 && !this.stopped) {
        const batch = this.queue.slice(0, MAX_PIPELINE);
        const pipeline = this.redis.pipeline();
        const keys = new Set<string>();
        for (const entry of batch) {
          pipeline.call('XADD', entry.key, '*', ...entry.fields);
          keys.add(entry.key);
        }
        for (const key of keys) pipeline.pexpire(key, IDLE_TTL_MS);
        const results = await pipeline.exec().catch(() => null);
        let sent = 0;
        for (; results && sent < batch.length; sent++) {
          const [error, id] = results[sent] ?? [new Error('no reply')];
          if (error) break;
          this.lastIds.set(batch[sent]!.key, String(id));
          // One entry per document ever published: bounded, since trimming can also measure from the last read id.
          if (this.lastIds.size > MAX_TRACKED_STREAMS) this.lastIds.clear();
        }
        this.accepted(batch.slice(0, sent));
        if (sent < batch.length) {
          failures++;
          if (failures === 1) this.log.warn(`fan-out: publishing to Redis failed; ${this.queue.length} entries kept, retrying`);
          await delay(Math.min(50 * 2 ** Math.min(failures, 10), MAX_BACKOFF_MS));
        } else {
          failures = 0;
        }
      }
    } finally {
      this.draining = false;
      if (this.queue.length === 0) this.resolveIdle();
    }
  }

  /**
   * Removes entries Redis accepted from the queue and resolves their waiters. Removed by identity, not by position:
   * while their pipeline was in flight, `dropOldest` may have taken entries off the front (their waiters, now also on
   * a `gap` entry, resolve here already, which is right: Redis has them).
   */
  private accepted(entries: readonly Entry[]): void {
    if (entries.every((entry, i) => this.queue[i] === entry)) this.queue.splice(0, entries.length);
    else {
      const sent = new Set(entries);
      this.queue = this.queue.filter((entry) => !sent.has(entry));
    }
    for (const entry of entries) for (const resolve of entry.accepted) resolve();
  }

  private resolveIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
