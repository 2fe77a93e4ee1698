/**
 * One document loaded on this server: its `Y.Doc`, its presence, the peers connected to it and its session epoch.
 * Implements PROTOCOL.md P3–P11: seeding (with `SeedLease`), relaying and committing updates, acks after commit,
 * stamped presence (with `Presence`). Everything durable goes through `Store` and the shared `CommitQueue`; the
 * room holds nothing that a crash could lose after an ack.
 *
 * Other servers may serve the same document (`Fanout`, shared). What they commit arrives as `FanoutEvent`s and is
 * applied with the `REMOTE` origin: relayed to this room's peers, never stored or published again. Because this
 * room no longer sees every update first-hand, two things read the store instead of trusting the doc: compaction
 * (it first applies every stored update, so its state covers everything it replaces) and a remote update that
 * does not integrate (its missing dependencies are committed, so a reload from the store brings them).
 */
import * as Y from 'yjs';
import { META_MAP, META_REPLACED_KEY, MessageType, ProtocolError, SyncStep, encodeMessage, pickColor, sanitizeUser } from 'wave-protocol';
import type { Message, StampedPresence } from 'wave-protocol';
import type { CommitQueue } from '../store/commit-queue.js';
import type { DocKey, Store } from '../store/types.js';
import type { DocFeed, Fanout, FanoutEvent } from '../fanout/types.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { JoinRequest, RoomPeer } from './peer.js';
import { Presence } from './presence.js';
import { SeedLease } from './seed-lease.js';
import { UpdateRejected, checkUpdate } from './update-check.js';
import { DEFAULT_MAX_TYPE_DEPTH, DEFAULT_MAX_VALUE_DEPTH } from './depth-check.js';
import type { DepthLimits } from './depth-check.js';
import type { SeedLeaseHost } from './seed-lease.js';

export interface RoomOptions {
  /** Session grace period (`--session-grace`), milliseconds. */
  graceMs: number;
  /** From the key that loaded the room: sessions never end, content is never re-seeded. */
  persistent: boolean;
  /** Identifies this process in seed-lease holders, so that several servers can share a store. */
  serverId: string;
  /**
   * Seed lease lifetime. Renewed every third of it while the holder's socket is open, so it only runs out when
   * the holder's server died; 10 s bounds how long waiting clients stay blocked by a dead seeder.
   */
  leaseTtlMs: number;
  /** How often peers waiting for a seeder elsewhere (another server, or a dead one) re-check the store. */
  leasePollMs: number;
  /**
   * Stored updates after which the document is compacted into one. Loading cost grows with the update count;
   * 500 keeps a cold load to milliseconds while compaction (one `encodeStateAsUpdate`) stays rare.
   */
  compactAfterUpdates: number;
  /**
   * Largest document, as the size of its encoded state, an update may grow it to (`document_too_large`, 4413).
   * Checked before the update is applied.
   */
  maxDocumentBytes?: number;
  /** Structs one update may carry: bounds the integration work of one message (S9, ≤ 50 ms). */
  maxStructsPerUpdate?: number;
  /** Deepest JSON-like value an update may carry (rooms/depth-check.ts, `DEFAULT_MAX_VALUE_DEPTH`). */
  maxValueDepth?: number;
  /** Deepest nesting of shared types (elements) an update may create (`DEFAULT_MAX_TYPE_DEPTH`). */
  maxTypeDepth?: number;
  /** Other servers serving the same documents (a no-op `LocalFanout` when this server is alone). */
  fanout: Fanout;
  metrics: Metrics;
  log: Logger;
  /** Called when a peer left (webhooks: user.left). */
  onLeft?: (peer: RoomPeer) => void;
  /** Called when the last peer left (the registry unloads the room after a delay). */
  onIdle: (room: Room) => void;
  /** `ServerOptions.onAckSent`: called right after an `Ack` frame was handed to a peer's socket. */
  onAckSent?: (doc: DocKey, count: number) => void;
}

interface PeerState {
  identity: StampedPresence;
  permission: 'edit' | 'read';
  /**
   * A read-only peer had a message refused (and was told so, once). Acks are cumulative (P9): any later ack would
   * cover the refused message too, so from then on this peer gets no ack on this connection (RELIABILITY.md S17).
   */
  toldReadOnly: boolean;
  /** Received step1 + step2 of the document; receives relayed updates and presence from now on. */
  synced: boolean;
  /** Update-bearing messages received (P9). */
  received: number;
  /** Highest count committed (and acked, or about to be). */
  acked: number;
  /** An `Ack` send is scheduled. */
  ackQueued: boolean;
}

/** Transaction origins of changes that are already stored and must not be relayed or appended again. */
const LOADED = Symbol('loaded from store');
const SEEDED = Symbol('seed committed');
/** Origin of changes committed by another server (or read back from the store): relayed, not stored again. */
const REMOTE = Symbol('remote server');

/**
 * Default document limit: 16 MiB of encoded state is ~8–16 M characters of text, well above the ~1 M-character
 * documents Wave is built for (R8), and small enough that loading, compacting and syncing one stays sub-second.
 */
export const DEFAULT_MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;
/**
 * Default structs per update. Integrating ~20,000 small structs takes ~15–30 ms here; a 1 MB paste is one struct,
 * and a client's step2 after 1,000 offline edits a few thousand. 20,000 keeps one message well under 50 ms.
 */
export const DEFAULT_MAX_STRUCTS_PER_UPDATE = 20_000;

/** Origin of a REST replacement (server-side forceSync): relayed to every peer and stored. */
const SERVER_WRITE = Symbol('server write');
/**
 * A message's update is relayed as it was sent (`onDocUpdate`) while at most this many times, plus
 * `RELAY_AS_SENT_SLACK` bytes, the size of the update the document emitted for it; a larger one mostly repeats
 * content the server had (a reply to a step1 after a reconnection can carry a whole delete set), and peers get the
 * emitted one: a client cannot make the server send its peers more than it changed.
 */
const RELAY_AS_SENT_FACTOR = 2;
const RELAY_AS_SENT_SLACK = 1024;

/** Pause after a failed compaction: the commit queue already retries the store; compaction can wait. */
const COMPACTION_RETRY_MS = 30_000;

export class Room implements SeedLeaseHost {
  readonly doc = new Y.Doc();
  epoch: number;
  seeded: boolean;
  closed = false;
  /**
   * The session ended under this room (expired during a stall, or deleted), or its document failed (`fail`): it must
   * not take new peers; the registry loads the document again.
   */
  stale = false;
  /** Applying or encoding the document threw (`fail`): no more acks, relays or commits from this room. */
  private failed = false;

  private readonly peers = new Map<RoomPeer, PeerState>();
  /** Peers that joined an unseeded epoch, in join order; they get the document once it is seeded. */
  private waiting: RoomPeer[] = [];
  private readonly presence: Presence;
  private readonly lease: SeedLease;
  private refreshing = false;
  private refreshAgain = false;
  private joinCounter = 0;
  private storedSinceCompaction = 0;
  /**
   * Upper estimate of the encoded document size: exact after a load or a recount, plus every update applied since.
   * Recounted (one `encodeStateAsUpdate`) only when an update would push the estimate over the limit.
   */
  private sizeEstimate = 0;
  private compacting = false;
  private compactRetryAt = 0;
  /** Set by `onDocUpdate` while a client update is applied: the commit of what it changed. */
  private pendingCommit: Promise<void> | undefined;
  private touchTimer: NodeJS.Timeout | undefined;
  private readonly inflight = new Set<Promise<unknown>>();
  /** Remote updates received while a store load is under way (or before the seed): applied after it. */
  private held: Uint8Array[] = [];
  /** The update being applied as one message (a client's, or another server's), with its origin: see `onDocUpdate`. */
  private applying: { origin: unknown; update: Uint8Array } | null = null;
  private catchingUp: Promise<void> | undefined;
  private catchUpAgain = false;

  private constructor(
    readonly key: DocKey,
    private readonly store: Store,
    private readonly queue: CommitQueue,
    private readonly opts: RoomOptions,
    session: { epoch: number; seeded: boolean },
    private readonly feed: DocFeed,
  ) {
    this.epoch = session.epoch;
    this.seeded = session.seeded;
    this.presence = new Presence(
      this.doc,
      (frame, origin) => this.broadcast(frame, origin),
      (update) => this.feed.publishAwareness(update),
    );
    this.lease = new SeedLease(this, store, opts);
    this.doc.on('update', this.onDocUpdate);
  }

  /**
   * Opens (or renews, after the grace period) the document's session and loads its stored content. Joins the
   * fan-out first: whatever another server commits after that point reaches this room through the feed, so
   * load + feed leave no gap (fanout/types.ts).
   */
  static async load(key: DocKey, store: Store, queue: CommitQueue, opts: RoomOptions): Promise<Room> {
    const feed = await opts.fanout.join(key);
    let room: Room | undefined;
    try {
      const session = await store.openSession(key, { now: Date.now(), graceMs: opts.graceMs, persistent: opts.persistent });
      room = new Room(key, store, queue, opts, session, feed);
      if (session.seeded) await room.loadStored();
      // Servers still holding an older epoch of this document learn at once that its session ended.
      else feed.publishSession(session.epoch);
      feed.start(room.onFanout);
      return room;
    } catch (error) {
      room?.destroy();
      feed.close();
      throw error;
    }
  }

  /** Nesting limits of the updates this room takes (rooms/depth-check.ts). */
  private get depthLimits(): DepthLimits {
    return {
      maxValueDepth: this.opts.maxValueDepth ?? DEFAULT_MAX_VALUE_DEPTH,
      maxTypeDepth: this.opts.maxTypeDepth ?? DEFAULT_MAX_TYPE_DEPTH,
    };
  }

  get size(): number {
    return this.peers.size;
  }

  /** Candidates for the seed lease: waiting peers that may edit (a read-only peer never seeds). */
  waitingPeers(): readonly RoomPeer[] {
    return this.waiting.filter((p) => this.peers.get(p)?.permission !== 'read');
  }

  /**
   * For an idle room about to be reused: opens the session again (it may have ended during the grace period) and
   * tells whether this room still matches it.
   */
  async revalidate(): Promise<boolean> {
    const session = await this.store.openSession(this.key, {
      now: Date.now(),
      graceMs: this.opts.graceMs,
      persistent: this.opts.persistent,
    });
    return session.epoch === this.epoch && session.seeded === this.seeded;
  }

  // --- joining and leaving ---

  /** Adds a peer (P3): Welcome, then the document, or the seed lease, or a wait for the seed. */
  join(peer: RoomPeer, request: JoinRequest): void {
    if (this.closed || this.stale) throw new Error('join on a closed room');
    const joinIndex = this.joinCounter++;
    const identity: StampedPresence = {
      user: sanitizeUser(request.user),
      color: pickColor(request.user.color, joinIndex),
      joinTime: Date.now(),
    };
    const permission = request.permission ?? 'edit';
    this.peers.set(peer, { identity, permission, toldReadOnly: false, synced: false, received: 0, acked: 0, ackQueued: false });
    if (this.peers.size === 1) this.startTouching();
    peer.send({
      type: MessageType.Welcome,
      welcome: {
        epoch: this.epoch,
        permission,
        user: identity.user,
        color: identity.color,
        joinTime: identity.joinTime,
        persistent: this.opts.persistent,
      },
    });
    if (this.seeded) {
      this.sendDocument([peer]);
    } else {
      this.waiting.push(peer);
      void this.lease.offer(this.grantSeed);
    }
  }

  leave(peer: RoomPeer): void {
    if (!this.peers.delete(peer)) return;
    this.opts.onLeft?.(peer);
    this.waiting = this.waiting.filter((p) => p !== peer);
    // P6: a holder that leaves before seeding passes the lease to the next waiting peer.
    this.track(this.lease.peerLeft(peer, this.grantSeed), 'releasing the seed lease');
    let sameClient = false;
    for (const other of this.peers.keys()) if (other.clientId === peer.clientId) sameClient = true;
    if (!sameClient) this.presence.remove(peer.clientId);
    if (this.peers.size === 0) {
      this.stopTouching();
      this.lease.stopPolling();
      // The grace period starts now.
      this.track(this.store.touchSession(this.key, this.epoch, Date.now()), 'touching the session');
      this.opts.onIdle(this);
    }
  }

  // --- messages ---

  /**
   * Handles one client message of a joined peer, in arrival order. A returned Promise must settle before the
   * peer's next message is handled. Throws `ProtocolError` for input that must close the connection with 4400.
   */
  handle(peer: RoomPeer, message: Message): void | Promise<void> {
    const state = this.peers.get(peer);
    if (!state) return;
    switch (message.type) {
      case MessageType.Sync:
        if (message.step === SyncStep.Step1) return this.answerStep1(peer, state, message.stateVector);
        return this.handleUpdate(peer, state, message.update);
      case MessageType.Awareness:
        return this.presence.apply(peer, state.identity, message.update);
      case MessageType.Seed:
        return this.handleSeed(peer, state, message.epoch, message.update);
      default:
        throw new ProtocolError(`message type ${message.type} is not expected here`);
    }
  }

  private answerStep1(peer: RoomPeer, state: PeerState, stateVector: Uint8Array): void {
    // Before the peer is synced the whole document is on its way (P3); a diff now would be premature.
    if (!state.synced) return;
    let diff: Uint8Array;
    try {
      diff = Y.encodeStateAsUpdate(this.doc, stateVector);
    } catch {
      throw new ProtocolError('Sync step1: the state vector does not decode');
    }
    peer.send({ type: MessageType.Sync, step: SyncStep.Step2, update: diff });
  }

  private handleUpdate(peer: RoomPeer, state: PeerState, update: Uint8Array): void {
    const n = ++state.received;
    if (!state.synced) {
      throw new ProtocolError('update sent before the document was synced (P3: wait for step2)');
    }
    const started = performance.now();
    let facts;
    try {
      facts = checkUpdate(this.doc, update, this.opts.maxStructsPerUpdate ?? DEFAULT_MAX_STRUCTS_PER_UPDATE, this.depthLimits);
    } catch (error) {
      if (!(error instanceof UpdateRejected)) throw error;
      // A read-only client's later edits build on its earlier (refused) ones: refused too, not a protocol error.
      if (state.permission === 'read' && !error.malformed) return this.refuseReadOnly(peer, state);
      throw new ProtocolError(error.message);
    }
    if (state.permission === 'read') {
      if (facts.changes) return this.refuseReadOnly(peer, state);
      // A read-only client's reply to step1 carries nothing new: acked, it changes nothing.
      void this.queue.flush().then(() => this.ack(peer, n));
      return;
    }
    if (facts.changes && !this.fits(update.length)) {
      peer.fail('document_too_large', `this update would make the document larger than ${this.opts.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES} bytes`);
      return;
    }
    this.pendingCommit = undefined;
    try {
      this.applyOne(update, peer);
    } catch (error) {
      // The update passed the check, so Yjs failed while integrating or encoding it: the document may now hold part
      // of it, neither stored nor relayed.
      this.pendingCommit = undefined;
      return this.fail('applying an update', error);
    }
    if (this.dropPending()) {
      // Only a broken or hostile client sends an update whose dependencies the server does not have: it cannot be
      // stored as integrated content, so it gets no ack (RELIABILITY.md S9).
      throw new ProtocolError('update does not integrate: it depends on changes the server does not have');
    }
    const committing = this.pendingCommit;
    this.pendingCommit = undefined;
    if (facts.changes && committing === undefined) {
      // The update changed the document, yet the document emitted no update to store and relay: Yjs failed without
      // throwing (a transaction left broken by an earlier failure). An ack now would promise what is not stored.
      return this.fail('applying an update', new Error('the document changed without emitting an update'));
    }
    if (facts.changes) this.sizeEstimate += update.length;
    const commit = committing ?? this.queue.flush();
    void commit.then(() => {
      this.opts.metrics.ackLatency.observe((performance.now() - started) / 1000);
      this.ack(peer, n);
    });
  }

  /** Whether `bytes` more still fit under `maxDocumentBytes` (recounting the document when the estimate says no). */
  private fits(bytes: number): boolean {
    const limit = this.opts.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES;
    if (this.sizeEstimate + bytes <= limit) return true;
    this.sizeEstimate = Y.encodeStateAsUpdate(this.doc).length;
    return this.sizeEstimate + bytes <= limit;
  }

  /**
   * RELIABILITY.md D7, the second line behind the update check: applying or encoding the document threw (or
   * changed it without emitting an update), so the document may hold changes that are not stored, and what it
   * does from now on cannot be trusted. Every peer is closed with `server_error` (4500; clients reconnect and send
   * again what was not acked), nothing more is acked, and the room is marked stale: the registry unloads it and the
   * next join or REST read loads the document from the store.
   */
  private fail(what: string, error: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.stale = true;
    this.opts.metrics.rejected('server_error');
    this.opts.log.error(`${what} failed in ${describeDoc(this.key)}; closing its connections and reloading it from the store`, error);
    for (const peer of [...this.peers.keys()]) {
      peer.fail('server_error', 'the document failed on the server and is reloaded from the store; reconnect');
    }
  }

  /** S3: a read-only peer's change is not applied, stored, relayed or acked. */
  private refuseReadOnly(peer: RoomPeer, state: PeerState): void {
    this.opts.metrics.rejected('access_denied');
    if (state.toldReadOnly) return;
    state.toldReadOnly = true;
    peer.send({
      type: MessageType.Error,
      error: { code: 'access_denied', detail: 'this connection is read-only: its edits are not saved or shared', fatal: false },
    });
  }

  /** Discards structs/deletes waiting for missing dependencies; true when there were some. */
  private dropPending(): boolean {
    const store = this.doc.store;
    if (store.pendingStructs === null && store.pendingDs === null) return false;
    store.pendingStructs = null;
    store.pendingDs = null;
    return true;
  }

  private async handleSeed(peer: RoomPeer, state: PeerState, epoch: number, update: Uint8Array): Promise<void> {
    const n = ++state.received;
    // A read-only peer is never offered the lease (waitingPeers): its Seed is an edit, refused like one.
    if (state.permission === 'read') return this.refuseReadOnly(peer, state);
    if (!this.lease.isHolder(peer) || epoch !== this.epoch || this.seeded) {
      // P7: ignored, not stored, not relayed, but counted so the client's ack arithmetic stays simple.
      await this.queue.flush();
      this.ack(peer, n);
      return;
    }
    // A seed is a whole document (rarely more than a few structs: an editor's content); it may carry more than an
    // incremental update, but stays bounded.
    const content = normalizeSeed(update, 5 * (this.opts.maxStructsPerUpdate ?? DEFAULT_MAX_STRUCTS_PER_UPDATE), this.depthLimits);
    if (content.length > (this.opts.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES)) {
      peer.fail('document_too_large', `the seed is larger than ${this.opts.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES} bytes`);
      return;
    }
    const holder = this.lease.takeForCommit(peer);
    // P5: stored and marked seeded in one transaction, only if this peer still holds the lease.
    const committed = await this.store.commitSeed(this.key, epoch, holder, content, Date.now());
    if (!committed) {
      this.opts.log.warn(`seed of ${describeDoc(this.key)} epoch ${epoch} refused by the store (lease lost)`);
      await this.queue.flush();
      this.ack(peer, n);
      await this.refresh();
      return;
    }
    if (!this.adoptSeed(epoch, content)) return;
    await this.queue.flush();
    this.ack(peer, n);
  }

  /**
   * After the store committed `content` as the seed of `epoch`: tells the other servers, takes it into the room's doc
   * and answers the clients waiting for it. False when the room closed meanwhile (nothing to update).
   */
  private adoptSeed(epoch: number, content: Uint8Array): boolean {
    this.feed.publishSeeded(epoch);
    if (this.closed) return false;
    this.seeded = true;
    this.storedSinceCompaction = 1;
    Y.applyUpdate(this.doc, content, SEEDED);
    this.sizeEstimate = content.length;
    this.syncWaiting();
    return true;
  }

  /**
   * Records that the peer's first `count` update-bearing messages are committed. One `Ack` goes out per commit:
   * the waiters of a batch resolve together, so the send is deferred to a microtask that runs after all of them.
   */
  private ack(peer: RoomPeer, count: number): void {
    const state = this.peers.get(peer);
    if (!state || state.toldReadOnly || count <= state.acked || this.failed) return;
    state.acked = count;
    if (state.ackQueued) return;
    state.ackQueued = true;
    queueMicrotask(() => {
      state.ackQueued = false;
      if (this.peers.get(peer) === state && peer.open && !this.failed) {
        peer.send({ type: MessageType.Ack, count: state.acked });
        this.opts.onAckSent?.(this.key, state.acked);
      }
    });
  }

  // --- REST (server-side forceSync, delete) ---

  /**
   * Replaces the content for everyone in one transaction (`write` empties and fills the shared types) and resolves
   * once it is committed. An unseeded session is seeded with it instead (under the seed lease, P5); throws
   * `JoinRefused('session_full')`-like errors as plain `Error`s when a client holds that lease right now.
   */
  async replaceContent(write: (doc: Y.Doc) => void): Promise<void> {
    if (!this.seeded) {
      const scratch = new Y.Doc();
      scratch.transact(() => write(scratch));
      const content = Y.encodeStateAsUpdate(scratch);
      scratch.destroy();
      const holder = `rest:${this.opts.serverId}:${Date.now()}`;
      const now = Date.now();
      if (!(await this.store.acquireSeedLease(this.key, this.epoch, holder, now, this.opts.leaseTtlMs))) {
        throw new Error('a client is seeding this document right now; retry');
      }
      if (!(await this.store.commitSeed(this.key, this.epoch, holder, content, Date.now()))) {
        throw new Error('the document could not be seeded; retry');
      }
      this.adoptSeed(this.epoch, content);
      return;
    }
    this.pendingCommit = undefined;
    try {
      this.doc.transact(() => {
        write(this.doc);
        this.doc.getMap(META_MAP).set(META_REPLACED_KEY, `server:${Date.now()}`);
      }, SERVER_WRITE);
    } catch (error) {
      // The document may hold part of the replacement, unstored (D7).
      this.pendingCommit = undefined;
      this.fail('replacing the content', error);
      throw error;
    }
    const commit = this.pendingCommit ?? Promise.resolve();
    this.pendingCommit = undefined;
    this.sizeEstimate = Y.encodeStateAsUpdate(this.doc).length;
    await commit;
  }

  /** The document was deleted (REST DELETE): peers are closed (1012) and reconnect into a new session. */
  deleted(): void {
    this.sessionEnded();
  }

  // --- relaying ---

  /** `Y.applyUpdate`, with the update's bytes kept for `onDocUpdate` to relay. */
  private applyOne(update: Uint8Array, origin: unknown): void {
    this.applying = { origin, update };
    try {
      Y.applyUpdate(this.doc, update, origin);
    } finally {
      this.applying = null;
    }
  }

  /**
   * Relays a change to the peers, and commits and publishes one that came from a peer. Peers get a message's update
   * as its writer sent it, not the update this document emitted for it: that one also deletes what was inserted
   * into the nodes the update deletes, here, including what its writer had not seen, while a client reads from an
   * update's delete set what its writer saw (the rich-text adapter keeps text written into a block a peer deleted
   * without having seen it, `adapters/html/successor.ts`). Both have the same effect on a document: the update
   * integrated whole here (`dropPending`), and deleting a node deletes what a replica holds inside it. The store keeps
   * the emitted update (what changed here).
   */
  private readonly onDocUpdate = (emitted: Uint8Array, origin: unknown): void => {
    if (origin === LOADED || origin === SEEDED) return;
    // Not when part of it did not integrate: that part is dropped (`dropPending`), and never relayed. Nor when it is
    // much larger than what it changed (content the server already had): peers would get all of it again.
    const whole = this.doc.store.pendingStructs === null && this.doc.store.pendingDs === null;
    const sent = this.applying && this.applying.origin === origin && whole ? this.applying.update : null;
    const update = sent && sent.length <= RELAY_AS_SENT_FACTOR * emitted.length + RELAY_AS_SENT_SLACK ? sent : emitted;
    this.broadcast(encodeMessage({ type: MessageType.Sync, step: SyncStep.Update, update }), origin);
    // Committed and published by the server it came from.
    if (origin === REMOTE) return;
    const epoch = this.epoch;
    const commit = this.queue.enqueue([{ doc: this.key, epoch, update: emitted }]);
    this.pendingCommit = commit;
    // Published only once committed: a server that reads it from the stream and then loads the document from the
    // store must find it there. Registered before the ack (in handleUpdate), so it is queued first.
    void commit.then(() => {
      this.opts.metrics.updates++;
      this.feed.publishUpdates(epoch, [update]);
    });
    this.storedSinceCompaction++;
    this.maybeCompact();
  };

  /** Sends a frame to every synced peer except `origin`. */
  private broadcast(frame: Uint8Array, origin: unknown): void {
    if (this.closed || this.failed) return;
    for (const [peer, state] of this.peers) {
      if (peer !== origin && state.synced) peer.sendFrame(frame);
    }
  }

  /** P3: step1 + step2 of the whole document, then the current presence; the peers are synced from now on. */
  private sendDocument(peers: RoomPeer[]): void {
    if (peers.length === 0) return;
    let step1: Uint8Array;
    let step2: Uint8Array;
    try {
      step1 = encodeMessage({ type: MessageType.Sync, step: SyncStep.Step1, stateVector: Y.encodeStateVector(this.doc) });
      step2 = encodeMessage({ type: MessageType.Sync, step: SyncStep.Step2, update: Y.encodeStateAsUpdate(this.doc) });
    } catch (error) {
      return this.fail('encoding the document', error);
    }
    for (const peer of peers) {
      const state = this.peers.get(peer);
      if (!state) continue;
      state.synced = true;
      peer.sendFrame(step1);
      peer.sendFrame(step2);
      const presence = this.presence.snapshot(peer.clientId);
      if (presence) peer.sendFrame(presence);
    }
  }

  // --- seeding (P4–P6) ---

  private readonly grantSeed = (peer: RoomPeer): void => {
    peer.send({ type: MessageType.SeedRequest, epoch: this.epoch });
  };

  /** The epoch is seeded: every waiting peer, the seeder included, gets the document (P5). */
  private syncWaiting(): void {
    this.lease.stopPolling();
    const waiting = this.waiting;
    this.waiting = [];
    this.sendDocument(waiting.filter((p) => p.open && this.peers.has(p)));
  }

  /** Re-reads the session: seeded elsewhere → load and sync the waiting peers; still unseeded → try the lease. */
  async refresh(): Promise<void> {
    if (this.closed || this.seeded) return;
    if (this.refreshing) {
      // A notice from another server arrived while the store was being read: that read may predate it.
      this.refreshAgain = true;
      return;
    }
    this.refreshing = true;
    this.refreshAgain = false;
    try {
      const session = await this.store.getSession(this.key);
      if (this.closed) return;
      if (!session || session.epoch !== this.epoch) {
        this.sessionEnded();
        return;
      }
      if (session.seeded) {
        await this.loadStored();
        if (this.closed) return;
        this.seeded = true;
        this.syncWaiting();
        return;
      }
    } finally {
      this.refreshing = false;
    }
    await this.lease.offer(this.grantSeed);
    if (this.refreshAgain) this.track(this.refresh(), 'checking the seed state');
  }

  private async loadStored(): Promise<void> {
    // Remote updates received until now were committed before they were published, so this load contains them;
    // those that arrive while it runs are held and applied after it.
    this.held = [];
    const stored = await this.store.loadDocument(this.key, this.epoch);
    this.doc.transact(() => {
      for (const update of stored.updates) Y.applyUpdate(this.doc, update, LOADED);
    }, LOADED);
    this.storedSinceCompaction = stored.updates.length;
    this.sizeEstimate = stored.updates.reduce((sum, u) => sum + u.length, 0);
    if (this.applyHeld()) this.track(this.catchUp(), 'catching up from the store');
    this.maybeCompact();
  }

  // --- other servers (fan-out) ---

  private readonly onFanout = (event: FanoutEvent): void => {
    if (this.closed) return;
    switch (event.kind) {
      case 'update':
        if (event.epoch < this.epoch) return; // from a session that has ended
        if (event.epoch > this.epoch) return this.sessionEnded();
        this.opts.metrics.remoteUpdates++;
        if (!this.seeded || this.catchingUp) {
          this.held.push(event.update);
          if (!this.seeded) this.track(this.refresh(), 'loading a document seeded elsewhere');
          return;
        }
        return this.applyRemote(event.update);
      case 'seeded':
        if (event.epoch > this.epoch) return this.sessionEnded();
        if (event.epoch === this.epoch && !this.seeded) this.track(this.refresh(), 'loading a document seeded elsewhere');
        return;
      case 'session':
        if (event.epoch > this.epoch) this.sessionEnded();
        return;
      case 'awareness':
        return this.presence.applyRemote(event.update);
      case 'gap':
        if (this.seeded) this.track(this.catchUp(), 'catching up from the store');
        else this.track(this.refresh(), 'loading a document seeded elsewhere');
        return;
    }
  };

  /**
   * Applies an update another server committed. One that does not integrate depends on updates this room has not
   * received (a server died between its commit and its publish, or entries were lost): they are in the store, so
   * the room catches up from there and applies this one again after.
   */
  private applyRemote(update: Uint8Array): void {
    try {
      this.applyOne(update, REMOTE);
    } catch (error) {
      this.dropPending();
      this.opts.log.error(`an update from another server for ${describeDoc(this.key)} does not decode; dropped`, error);
      return;
    }
    if (this.dropPending()) {
      this.held.push(update);
      this.track(this.catchUp(), 'catching up from the store');
    }
  }

  /**
   * Applies the held remote updates. True when some still do not integrate: they stay held for the next store
   * read (their dependencies were committed after the last one began). Applying one twice changes nothing.
   */
  private applyHeld(): boolean {
    const held = this.held;
    this.held = [];
    if (held.length === 0) return false;
    this.doc.transact(() => {
      for (const update of held) Y.applyUpdate(this.doc, update, REMOTE);
    }, REMOTE);
    if (!this.dropPending()) return false;
    this.held = held;
    return true;
  }

  /**
   * Applies every stored update of the epoch with the `REMOTE` origin (what this room lacked is relayed to its
   * peers), then the held ones. Serialised; a request during a run schedules one more run.
   */
  private catchUp(): Promise<void> {
    if (this.catchingUp) {
      this.catchUpAgain = true;
      return this.catchingUp;
    }
    const run = async (): Promise<void> => {
      // Bounded: a new run is only requested by a gap or a non-integrating update during this one.
      for (let round = 0; round < 5 && !this.closed; round++) {
        this.catchUpAgain = false;
        const stored = await this.store.loadDocument(this.key, this.epoch);
        if (this.closed) return;
        this.doc.transact(() => {
          for (const update of stored.updates) Y.applyUpdate(this.doc, update, REMOTE);
        }, REMOTE);
        this.dropPending();
        if (this.applyHeld()) this.catchUpAgain = true;
        if (!this.catchUpAgain) return;
      }
    };
    this.catchingUp = run().finally(() => {
      this.catchingUp = undefined;
      if (this.closed || !this.applyHeld()) return;
      // Five store reads did not bring their dependencies: a broken server; the store has what was committed.
      this.opts.log.warn(`updates from another server for ${describeDoc(this.key)} do not integrate; dropped`);
      this.held = [];
    });
    return this.catchingUp;
  }

  // --- session upkeep ---

  private startTouching(): void {
    this.stopTouching();
    // A third of the grace period: two touches may be late or fail before a live session could expire.
    this.touchTimer = setInterval(() => {
      this.track(this.touch(), 'touching the session');
    }, Math.max(100, Math.floor(this.opts.graceMs / 3)));
    this.touchTimer.unref();
  }

  private stopTouching(): void {
    if (this.touchTimer) clearInterval(this.touchTimer);
    this.touchTimer = undefined;
  }

  private async touch(): Promise<void> {
    await this.store.touchSession(this.key, this.epoch, Date.now());
    const session = await this.store.getSession(this.key);
    if (!this.closed && (!session || session.epoch !== this.epoch)) this.sessionEnded();
  }

  /**
   * The stored session is no longer this room's (it expired while this process was stalled, or the document was
   * deleted): edits applied here belong to a session that is gone. Peers reconnect and learn the new epoch (P8).
   */
  private sessionEnded(): void {
    if (this.stale) return;
    this.stale = true;
    this.opts.log.warn(`session of ${describeDoc(this.key)} epoch ${this.epoch} ended under a loaded room`);
    for (const peer of [...this.peers.keys()]) peer.close(1012, 'session ended; reconnect');
  }

  // --- compaction ---

  private maybeCompact(): void {
    if (this.compacting || this.closed || this.storedSinceCompaction <= this.opts.compactAfterUpdates) return;
    if (Date.now() < this.compactRetryAt) return;
    this.compacting = true;
    this.track(
      this.compact().finally(() => {
        this.compacting = false;
      }),
      'compacting',
    );
  }

  /**
   * Replaces the stored updates by one: the room's `Y.Doc` state. Through the doc, not `Y.mergeUpdates`, which is
   * super-linear on many small updates (yjs issue 710). Correct because every stored update of this document was
   * applied to the doc before it was enqueued, so the state read after `lastSeq` contains all of them.
   */
  private async compact(): Promise<void> {
    const count = this.storedSinceCompaction;
    this.storedSinceCompaction = 0;
    try {
      await this.queue.flush();
      const epoch = this.epoch;
      let upToSeq: number;
      if (this.opts.fanout.shared) {
        // Other servers append too, and some of their updates may still be on their way through the fan-out:
        // apply what the store holds, so that the state below contains every row up to upToSeq. (Appends of one
        // document are serialised by the store, so no row ≤ upToSeq can be committed after this read.)
        const stored = await this.store.loadDocument(this.key, epoch);
        if (this.closed || epoch !== this.epoch) return;
        this.doc.transact(() => {
          for (const update of stored.updates) Y.applyUpdate(this.doc, update, REMOTE);
        }, REMOTE);
        if (this.dropPending()) throw new Error('stored updates do not integrate; compaction skipped');
        upToSeq = stored.lastSeq;
      } else {
        upToSeq = await this.store.lastSeq(this.key, epoch);
      }
      if (upToSeq === 0) return;
      const state = Y.encodeStateAsUpdate(this.doc);
      await this.store.compact(this.key, epoch, state, upToSeq);
      this.feed.compacted();
    } catch (error) {
      this.storedSinceCompaction += count;
      this.compactRetryAt = Date.now() + COMPACTION_RETRY_MS;
      throw error;
    }
  }

  // --- lifetime ---

  private track(promise: Promise<unknown>, what: string): void {
    const tracked = promise.catch((error: unknown) => this.opts.log.error(`${what} (${describeDoc(this.key)})`, error));
    this.inflight.add(tracked);
    void tracked.finally(() => this.inflight.delete(tracked));
  }

  /** Waits for its commits and store calls, then frees the doc. Call only without peers. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopTouching();
    this.lease.close();
    // Bounded: every tracked call settles on its own; no new ones start once closed.
    for (let i = 0; i < 10 && this.inflight.size > 0; i++) await Promise.all([...this.inflight]);
    await this.queue.flush();
    this.destroy();
  }

  private destroy(): void {
    this.closed = true;
    this.feed.close();
    this.held = [];
    this.lease.close();
    this.doc.off('update', this.onDocUpdate);
    this.presence.destroy();
    this.doc.destroy();
  }
}

/** Checks a seed update and returns it normalised (one state update without pending parts). */
function normalizeSeed(update: Uint8Array, maxStructs: number, depth: DepthLimits): Uint8Array {
  const doc = new Y.Doc();
  try {
    try {
      checkUpdate(doc, update, maxStructs, depth);
    } catch (error) {
      if (error instanceof UpdateRejected) throw new ProtocolError(`Seed: ${error.message}`);
      throw error;
    }
    Y.applyUpdate(doc, update);
    if (doc.store.pendingStructs !== null || doc.store.pendingDs !== null) {
      throw new ProtocolError('Seed update is not a complete document state');
    }
    return Y.encodeStateAsUpdate(doc);
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    throw new ProtocolError('Seed update does not decode');
  } finally {
    doc.destroy();
  }
}

export function describeDoc(key: DocKey): string {
  return `${JSON.stringify(key.account)}/${JSON.stringify(key.docId)}`;
}
