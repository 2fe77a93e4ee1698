/**
 * Fan-out of a document's committed updates, seeding and session changes, and presence to the other servers that
 * serve the same document. Rooms talk to this interface only; `redis.ts` implements it with a Redis Stream per
 * document (ordered, resumable) and pub/sub for presence, `local.ts` for a single server (nothing to send).
 *
 * Guarantees a room relies on:
 * - Events of one document arrive in the order other servers published them, each server's own events skipped.
 * - A feed delivers everything published after `join` resolved: a room joins **before** it loads the document
 *   from the store, so an update committed after the load started reaches it through the feed (an update both
 *   loaded and received is harmless: applying a Yjs update twice changes nothing).
 * - When the feed cannot vouch for that (the connection to Redis dropped, entries may have been trimmed), it
 *   sends `gap` and the room catches up from the store.
 * - A publish resolves once the fan-out **accepted** it: every server reading the document's feed will receive it
 *   (or a `gap` that makes it reload from the store). Rooms ack an edit only then (RELIABILITY.md D6): an acked edit
 *   is both committed and on its way to every other server, so neither the death of this server right after the
 *   ack nor the loss of its Redis link can strand it. A publish that cannot be accepted stays pending (no ack).
 */
import type { DocKey } from '../store/types.js';

export type FanoutEvent =
  /** An update another server committed for `epoch`. */
  | { kind: 'update'; epoch: number; update: Uint8Array }
  /** Another server committed the seed of `epoch`: waiting peers can load the document. */
  | { kind: 'seeded'; epoch: number }
  /** Another server opened `epoch` (a new session): rooms on an older epoch are stale. */
  | { kind: 'session'; epoch: number }
  /** A y-protocols awareness update (already stamped by the server that received it). */
  | { kind: 'awareness'; update: Uint8Array }
  /** Events may have been missed: reload from the store. */
  | { kind: 'gap' };

export interface DocFeed {
  /** Starts delivering events (those published since `join`, then live ones). Call once. */
  start(listener: (event: FanoutEvent) => void): void;
  /**
   * Publishes updates this server has **committed** (call after the commit resolved, in commit order). Never
   * throws; publishes are queued in order and retried while Redis is unreachable. Resolves once accepted (see
   * the header), in publish order; never rejects, and stays pending while the fan-out cannot take it.
   */
  publishUpdates(epoch: number, updates: readonly Uint8Array[]): Promise<void>;
  /** Like `publishUpdates`: resolves once accepted. */
  publishSeeded(epoch: number): Promise<void>;
  publishSession(epoch: number): Promise<void>;
  /** Presence is best effort (a lost presence update is replaced by the next one, at the latest in 15 s). */
  publishAwareness(update: Uint8Array): void;
  /** The store was compacted: old stream entries are no longer needed by a server that loads from the store. */
  compacted(): void;
  /** Stops delivering. Queued publishes still go out. */
  close(): void;
}

export interface Fanout {
  /** True when other servers may serve the same documents (rooms cannot assume they saw every update). */
  readonly shared: boolean;
  /** Subscribes to a document from now on (see the header for the ordering with the store load). */
  join(doc: DocKey): Promise<DocFeed>;
  /** Rejects when the fan-out cannot work now (health checks). */
  ping(): Promise<void>;
  /** Resolves once every queued publish was sent (graceful shutdown). */
  flush(): Promise<void>;
  /** Publishes not yet sent. */
  readonly pending: number;
  close(): Promise<void>;
}
