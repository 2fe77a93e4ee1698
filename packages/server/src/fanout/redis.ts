/**
 * Fan-out across servers through Redis (`--redis redis://…`, ioredis). Per document: a Stream carries committed
 * updates and seeding/session notices in order (resumable from the last id read, so a lagging server loses
 * nothing), and a pub/sub channel carries presence (best effort, like awareness itself). Three connections: one
 * for commands, one for the blocking XREAD (`stream-reader.ts`), one in subscriber mode.
 */
import { Redis } from 'ioredis';
import type { Logger } from '../log.js';
import type { DocKey } from '../store/types.js';
import { decodePresence, decodeStreamEntry, encodePresence, idMillis, presenceChannel, streamFields, streamKey } from './redis-codec.js';
import { StreamPublisher } from './stream-publisher.js';
import { StreamReader } from './stream-reader.js';
import type { StreamSubscription } from './stream-reader.js';
import type { DocFeed, Fanout, FanoutEvent } from './types.js';

export interface RedisFanoutOptions {
  url: string;
  /** Written into every entry so that a server skips its own. */
  serverId: string;
  log: Logger;
}

/**
 * Stream entries younger than this survive trimming. Trimmed by age (XTRIM MINID) rather than by count (MAXLEN):
 * a reader resumes from its last id, so what must be bounded is how far behind in *time* a live reader may be;
 * MAXLEN ~ N would cut a reader a few seconds behind a fast burst. Ten minutes is far beyond the lag of a server
 * that is reading; one whose reads failed reloads from the store anyway (`gap`). Trimmed after compaction, when
 * the store holds everything the trimmed entries carried.
 */
const STREAM_RETENTION_MS = 10 * 60 * 1000;
/** `/healthz` answers within this even when Redis hangs. */
const PING_TIMEOUT_MS = 1_000;

export class RedisFanout implements Fanout {
  readonly shared = true;
  readonly serverId: string;
  private readonly commands: Redis;
  private readonly subscriber: Redis;
  private readonly reader: StreamReader;
  private readonly publisher: StreamPublisher;
  /** Presence channel → feeds listening on it. */
  private readonly channels = new Map<string, Set<RedisFeed>>();
  private readonly log: Logger;
  private closed = false;

  constructor(options: RedisFanoutOptions) {
    this.serverId = options.serverId;
    this.log = options.log;
    const onError = quietErrors(options.log);
    // Named per server in CLIENT LIST (operators, and tests that cut one connection); SETNAME takes no spaces.
    const name = (role: string): string => `wave-${role}-${options.serverId.replace(/[^\w.-]/g, '_')}`;
    // Commands fail after two reconnection attempts instead of queueing for long: callers retry (publisher) or
    // report (join → the client reconnects, healthz → 503).
    this.commands = new Redis(options.url, { maxRetriesPerRequest: 2, connectionName: name('commands') }).on('error', onError);
    // The reader retries by itself; a command sent while disconnected must fail at once, not wait in a queue,
    // and a blocked XREAD must not be re-sent by ioredis after a reconnect (with streams that may be stale).
    const blocking = new Redis(options.url, {
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      connectionName: name('streams'),
    }).on('error', onError);
    this.subscriber = new Redis(options.url, { connectionName: name('presence') }).on('error', onError);
    this.subscriber.on('messageBuffer', (channel: Buffer, message: Buffer) => this.onPresence(channel.toString(), message));
    this.reader = new StreamReader(blocking, this.commands, options.log);
    this.publisher = new StreamPublisher(this.commands, this.serverId, options.log);
  }

  get pending(): number {
    return this.publisher.pending;
  }

  async join(doc: DocKey): Promise<DocFeed> {
    if (this.closed) throw new Error('fan-out is closed');
    const key = streamKey(doc);
    // Recorded before the caller loads the document: every entry after it is delivered (see types.ts). Bounded: a
    // Redis that accepts the command but never answers (frozen, a stalled link) must fail the join (4500, the
    // client retries), not leave the client waiting silently (RELIABILITY.md D6: ≤ 2 s).
    const last = await withDeadline(this.commands.xrevrange(key, '+', '-', 'COUNT', 1), JOIN_TIMEOUT_MS, 'reading the document stream');
    return new RedisFeed(this, doc, key, last[0]?.[0] ?? '0-0');
  }

  async ping(): Promise<void> {
    if (this.commands.status !== 'ready') throw new Error(`Redis connection is ${this.commands.status}`);
    if (!this.reader.healthy) throw new Error('reading document streams from Redis fails');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis did not answer PING within ${PING_TIMEOUT_MS} ms`)), PING_TIMEOUT_MS);
    });
    await Promise.race([this.commands.ping(), timeout]).finally(() => clearTimeout(timer));
  }

  flush(): Promise<void> {
    return this.publisher.flush();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.reader.close();
    this.publisher.stop();
    this.subscriber.disconnect();
    await this.commands.quit().catch(() => this.commands.disconnect());
  }

  // --- used by RedisFeed ---

  /** @internal */
  publish(key: string, fields: Array<string | Buffer>): Promise<void> {
    return this.publisher.add(key, fields);
  }

  /** @internal */
  publishPresence(channel: string, update: Uint8Array): void {
    if (this.closed) return;
    this.commands.publish(channel, encodePresence(this.serverId, update)).catch(() => {
      // Best effort: the client renews its presence every 15 s.
    });
  }

  /** @internal */
  subscribe(feed: RedisFeed): void {
    if (this.closed) return;
    this.reader.add(feed);
    const listeners = this.channels.get(feed.channel);
    if (listeners) {
      listeners.add(feed);
      return;
    }
    this.channels.set(feed.channel, new Set([feed]));
    this.subscriber.subscribe(feed.channel).catch((error: unknown) => this.log.warn(`subscribing to ${feed.channel}`, error));
  }

  /** @internal */
  unsubscribe(feed: RedisFeed): void {
    this.reader.remove(feed);
    const listeners = this.channels.get(feed.channel);
    if (!listeners?.delete(feed) || listeners.size > 0) return;
    this.channels.delete(feed.channel);
    if (!this.closed) this.subscriber.unsubscribe(feed.channel).catch(() => {});
  }

  /** @internal Trims entries older than the retention, measured from the newest entry this server knows. */
  trim(key: string, lastReadId: string): void {
    const newest = Math.max(idMillis(lastReadId), idMillis(this.publisher.lastIds.get(key) ?? '0-0'));
    const threshold = newest - STREAM_RETENTION_MS;
    if (this.closed || !(threshold > 0)) return;
    // `~`: Redis trims whole internal nodes only, which is cheap; a few older entries may stay a while.
    this.commands.call('XTRIM', key, 'MINID', '~', String(threshold)).catch((error: unknown) => this.log.warn(`trimming ${key}`, error));
  }

  private onPresence(channel: string, message: Buffer): void {
    const update = decodePresence(message, this.serverId);
    if (!update) return;
    for (const feed of this.channels.get(channel) ?? []) feed.emit({ kind: 'awareness', update });
  }
}

class RedisFeed implements DocFeed, StreamSubscription {
  readonly channel: string;
  private listener: ((event: FanoutEvent) => void) | undefined;
  private closed = false;

  constructor(
    private readonly fanout: RedisFanout,
    doc: DocKey,
    readonly key: string,
    public lastId: string,
  ) {
    this.channel = presenceChannel(doc);
  }

  start(listener: (event: FanoutEvent) => void): void {
    if (this.listener || this.closed) return;
    this.listener = listener;
    this.fanout.subscribe(this);
  }

  async publishUpdates(epoch: number, updates: readonly Uint8Array[]): Promise<void> {
    await Promise.all(updates.map((update) => this.fanout.publish(this.key, streamFields(this.fanout.serverId, 'update', epoch, update))));
  }

  publishSeeded(epoch: number): Promise<void> {
    return this.fanout.publish(this.key, streamFields(this.fanout.serverId, 'seeded', epoch));
  }

  publishSession(epoch: number): Promise<void> {
    return this.fanout.publish(this.key, streamFields(this.fanout.serverId, 'session', epoch));
  }

  publishAwareness(update: Uint8Array): void {
    this.fanout.publishPresence(this.channel, update);
  }

  compacted(): void {
    this.fanout.trim(this.key, this.lastId);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.fanout.unsubscribe(this);
    this.listener = undefined;
  }

  deliver(fields: Buffer[]): void {
    const event = decodeStreamEntry(fields, this.fanout.serverId);
    if (event) this.emit(event);
  }

  gap(): void {
    this.emit({ kind: 'gap' });
  }

  emit(event: FanoutEvent): void {
    if (!this.closed) this.listener?.(event);
  }
}

/** Logs the first error of a run of connection errors (ioredis emits one per reconnection attempt). */
function quietErrors(log: Logger): (error: Error) => void {
  let last = 0;
  return (error) => {
    const now = Date.now();
    if (now - last > 10_000) log.warn('Redis connection', error);
    last = now;
  };
}

/** Longest wait for Redis when a room joins its document's stream (D6: a join fails within 2 s). */
const JOIN_TIMEOUT_MS = 1_500;

/** `promise`, or a rejection naming `what` after `ms` (the command itself may still complete; its result is dropped). */
function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer ${what} within ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
