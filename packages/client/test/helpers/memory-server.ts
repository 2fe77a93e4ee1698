/**
 * The real server core in this process behind an in-memory network flushed by hand (STYLE.md §6), for RELIABILITY.md
 * C1: `Session` cores talk through `MemorySocket`s; every frame waits in a per-direction FIFO until the test
 * delivers it, drops it (cut) or duplicates it.
 *
 * Why the real server and not a fake: everything below the WebSocket is the production code — `authorizeUpgrade`,
 * `Connection` (Hello, arrival-order queue), `RoomRegistry`, `Room` (seed lease, relay, acks after commit),
 * `CommitQueue` and `SqliteStore` (`:memory:`). Only the `ws` socket is replaced, by `ServerSocket`, which offers
 * the part of `ws.WebSocket` that `Connection` uses. The server's own asynchrony (store calls, the commit queue's
 * `setImmediate` batching) still runs on the event loop; the test lets it run with `turn()` between deliveries, so
 * the order of deliveries is the test's and the server's work interleaves with it at points the test chooses.
 * A fake server could be driven more deterministically, but it would test a model of the acks and the relay instead
 * of the code that ships.
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { MessageType, SyncStep } from 'wave-protocol';
import type { WebSocket as WsSocket } from 'ws';
import type { SocketFactory, SocketLike } from '../../src/core/socket.js';
import { assertBrowserCloseCode } from './util.js';
import { authorizeUpgrade } from '../../../server/src/auth.js';
import { LocalFanout } from '../../../server/src/fanout/local.js';
import { silentLogger } from '../../../server/src/log.js';
import { Metrics } from '../../../server/src/metrics.js';
import { RoomRegistry } from '../../../server/src/rooms/registry.js';
import { DEFAULT_LIMITS } from '../../../server/src/server.js';
import { CommitQueue } from '../../../server/src/store/commit-queue.js';
import { SqliteStore } from '../../../server/src/store/sqlite.js';
import type { DocKey } from '../../../server/src/store/types.js';
import { Connection } from '../../../server/src/ws/connection.js';

const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

type Event =
  | { kind: 'open' }
  | { kind: 'data'; bytes: Uint8Array }
  /** A close frame (handshake) from the other side. */
  | { kind: 'close'; code: number; reason: string }
  /** The connection died (cut, terminate): the side learns it now, with 1006. */
  | { kind: 'reset' };

/** One connection: two FIFO queues and its two ends. */
export class Link {
  readonly c2s: Event[] = [];
  readonly s2c: Event[] = [];
  /** Cut or terminated: frames sent from now on are lost. */
  dead = false;
  server: ServerSocket | null = null;

  constructor(
    readonly client: MemorySocket,
    readonly clientIndex: number,
  ) {}

  /** The network dies under this connection: in-flight frames are lost, each end learns it later (1006). */
  cut(): void {
    if (this.dead) return;
    this.dead = true;
    this.c2s.length = 0;
    this.s2c.length = 0;
    this.c2s.push({ kind: 'reset' });
    this.s2c.push({ kind: 'reset' });
  }
}

/** The client end: what `Session` sees as its WebSocket. */
export class MemorySocket implements SocketLike {
  binaryType = 'arraybuffer';
  readyState = CONNECTING;
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  link!: Link;

  constructor(private readonly net: MemoryServer) {}

  send(data: Uint8Array): void {
    if (this.readyState !== OPEN || this.link.dead) return;
    const bytes = data.slice();
    this.net.sentByClients.push(bytes);
    this.link.c2s.push({ kind: 'data', bytes });
  }

  close(code = 1000, reason = ''): void {
    assertBrowserCloseCode(code);
    if (this.readyState >= CLOSING) return;
    this.readyState = CLOSING;
    if (!this.link.dead) this.link.c2s.push({ kind: 'close', code, reason });
  }
}

/** The server end: the part of `ws.WebSocket` that `Connection` uses. */
class ServerSocket extends EventEmitter {
  readonly CONNECTING = CONNECTING;
  readonly OPEN = OPEN;
  readonly CLOSING = CLOSING;
  readonly CLOSED = CLOSED;
  readyState = OPEN;
  private closeEmitted = false;

  constructor(private readonly link: Link) {
    super();
  }

  send(frame: Uint8Array): void {
    if (this.readyState !== OPEN || this.link.dead) return;
    this.link.s2c.push({ kind: 'data', bytes: frame.slice() });
  }

  close(code = 1000, reason = ''): void {
    if (this.readyState >= CLOSING) return;
    this.readyState = CLOSING;
    if (!this.link.dead) this.link.s2c.push({ kind: 'close', code, reason });
  }

  terminate(): void {
    if (this.readyState === CLOSED) return;
    this.link.cut();
    this.closed(1006);
  }

  ping(): void {}

  closed(code: number): void {
    this.readyState = CLOSED;
    if (this.closeEmitted) return;
    this.closeEmitted = true;
    this.emit('close', code, Buffer.alloc(0));
  }
}

export interface MemoryServerOptions {
  /** Chooses which queue delivers next and when a duplicate is made. */
  random: () => number;
  /** Probability that a delivered update-carrying Sync frame is queued again at the tail of its FIFO. */
  duplicateRate: number;
}

export class MemoryServer {
  readonly links: Link[] = [];
  /** Every frame any client sent, in send order (the "all updates" of STYLE.md §5 come from here). */
  readonly sentByClients: Uint8Array[] = [];
  duplicated = 0;
  delivered = 0;
  private readonly connections = new Set<Connection>();

  private constructor(
    readonly store: SqliteStore,
    readonly queue: CommitQueue,
    readonly registry: RoomRegistry,
    readonly apiKey: string,
    readonly account: string,
    private readonly options: MemoryServerOptions,
  ) {}

  static async start(options: MemoryServerOptions): Promise<MemoryServer> {
    const store = new SqliteStore(':memory:');
    const { record } = await store.createKey({ name: 'c1' });
    const queue = new CommitQueue(store);
    // The production defaults (server.ts), except a grace period no test run reaches.
    const registry = new RoomRegistry(store, queue, {
      graceMs: 3_600_000,
      serverId: 'memory',
      leaseTtlMs: DEFAULT_LIMITS.leaseTtlMs,
      leasePollMs: DEFAULT_LIMITS.leasePollMs,
      compactAfterUpdates: DEFAULT_LIMITS.compactAfterUpdates,
      unloadDelayMs: DEFAULT_LIMITS.unloadDelayMs,
      maxUsersPerDoc: DEFAULT_LIMITS.maxUsersPerDoc,
      fanout: new LocalFanout(),
      metrics: new Metrics(),
      log: silentLogger,
    });
    return new MemoryServer(store, queue, registry, record.apiKey, record.account, options);
  }

  docKey(docId: string): DocKey {
    return { account: this.account, docId };
  }

  /** The socket factory of client `index`: each call is a new connection. */
  factory(index: number): SocketFactory {
    return (url) => {
      const socket = new MemorySocket(this);
      const link = new Link(socket, index);
      socket.link = link;
      this.links.push(link);
      void this.accept(link, url);
      return socket;
    };
  }

  /** The upgrade: authorised by the production code, then a `Connection` on the server end. */
  private async accept(link: Link, url: string): Promise<void> {
    const path = new URL(url).pathname + new URL(url).search;
    const req = { url: path, headers: { host: 'memory' } } as unknown as IncomingMessage;
    const decision = await authorizeUpgrade(req, this.store);
    if (decision.kind !== 'accept') throw new Error(`memory upgrade refused: ${JSON.stringify(decision)}`);
    if (link.dead) return;
    const server = new ServerSocket(link);
    link.server = server;
    const connection = new Connection(server as unknown as WsSocket, {
      apiKey: decision.apiKey,
      docId: decision.docId,
      key: decision.key,
      doc: decision.doc,
      registry: this.registry,
      limits: DEFAULT_LIMITS,
      log: silentLogger,
      metrics: new Metrics(),
      onClose: (c) => this.connections.delete(c),
    });
    this.connections.add(connection);
    link.s2c.push({ kind: 'open' });
  }

  /** Live connections on the server side. */
  get connectionCount(): number {
    return this.connections.size;
  }

  /** Frames (and open/close events) waiting in any queue. */
  get inFlight(): number {
    let n = 0;
    for (const link of this.links) n += link.c2s.length + link.s2c.length;
    return n;
  }

  /** The live connection of client `index` (the last one opened), if any. */
  linkOf(index: number): Link | undefined {
    for (let i = this.links.length - 1; i >= 0; i--) {
      const link = this.links[i]!;
      if (link.clientIndex === index) return link.dead || link.client.readyState >= CLOSING ? undefined : link;
    }
    return undefined;
  }

  /**
   * Delivers the head of one non-empty queue chosen at random (FIFO per direction of a connection; any order across
   * connections, as WebSockets allow). Returns false when nothing is in flight.
   */
  deliverOne(): boolean {
    const queues: Array<{ link: Link; toServer: boolean }> = [];
    for (const link of this.links) {
      if (link.c2s.length > 0) queues.push({ link, toServer: true });
      if (link.s2c.length > 0) queues.push({ link, toServer: false });
    }
    if (queues.length === 0) {
      this.prune();
      return false;
    }
    const { link, toServer } = queues[Math.floor(this.options.random() * queues.length)]!;
    const queue = toServer ? link.c2s : link.s2c;
    const event = queue.shift()!;
    this.delivered++;
    if (event.kind === 'data' && isUpdateCarryingSync(event.bytes) && this.options.random() < this.options.duplicateRate) {
      queue.push({ kind: 'data', bytes: event.bytes });
      this.duplicated++;
    }
    if (toServer) this.toServer(link, event);
    else this.toClient(link, event);
    return true;
  }

  private toServer(link: Link, event: Event): void {
    const server = link.server;
    if (!server) return;
    switch (event.kind) {
      case 'data':
        if (server.readyState === OPEN) server.emit('message', Buffer.from(event.bytes), true);
        return;
      case 'close':
        // The client's close frame: the server end closes and echoes it (the client's onclose follows).
        if (server.readyState === OPEN) link.s2c.push({ kind: 'close', code: event.code, reason: event.reason });
        server.closed(event.code);
        return;
      case 'reset':
        server.closed(1006);
        return;
      case 'open':
        return;
    }
  }

  private toClient(link: Link, event: Event): void {
    const client = link.client;
    switch (event.kind) {
      case 'open':
        if (client.readyState !== CONNECTING) return;
        client.readyState = OPEN;
        client.onopen?.({});
        return;
      case 'data':
        // As in browsers: a socket that is closing delivers no more messages.
        if (client.readyState === OPEN) client.onmessage?.({ data: event.bytes });
        return;
      case 'close': {
        const wasClosed = client.readyState === CLOSED;
        client.readyState = CLOSED;
        // The server's close frame (or its echo of ours): the handshake completes on the server end as well.
        if (link.server && link.server.readyState !== CLOSED) link.server.closed(event.code);
        if (!wasClosed) client.onclose?.({ code: event.code, reason: event.reason });
        return;
      }
      case 'reset':
        if (client.readyState === CLOSED) return;
        client.readyState = CLOSED;
        client.onclose?.({ code: 1006, reason: '' });
        return;
    }
  }

  /** Forgets connections that are over on both ends (keeps `deliverOne` cheap on long runs). */
  private prune(): void {
    for (let i = this.links.length - 1; i >= 0; i--) {
      const link = this.links[i]!;
      const serverDone = !link.server || link.server.readyState === CLOSED;
      if (link.client.readyState === CLOSED && serverDone && link.c2s.length === 0 && link.s2c.length === 0) {
        this.links.splice(i, 1);
      }
    }
  }

  /** Closes the registry (rooms flush their commits) and the store. */
  async close(): Promise<void> {
    for (const link of this.links) link.cut();
    while (this.deliverOne()) {
      /* every end learns that its connection is gone */
    }
    await this.registry.close();
    await this.queue.flush();
    await this.store.close();
  }
}

/** `Sync step2` or `Sync update`: a frame whose duplicate is a duplicated document update. */
function isUpdateCarryingSync(bytes: Uint8Array): boolean {
  return bytes[0] === MessageType.Sync && (bytes[1] === SyncStep.Step2 || bytes[1] === SyncStep.Update);
}
