/**
 * One document loaded on this server: its `Y.Doc` (held live or, while idle, in compact form: doc-holder.ts), its
 * presence, the peers connected to it and its session epoch.
 * Implements PROTOCOL.md P3–P11: seeding (with `SeedLease`), relaying and committing updates, acks after commit,
 * stamped presence (with `Presence`). Everything durable goes through `Store` and the shared `CommitQueue`; the
 * room holds nothing that a crash could lose after an ack.
 *
 * Other servers may serve the same document (`Fanout`, shared). What they commit arrives as `FanoutEvent`s and is
 * applied with the `REMOTE` origin: relayed to this room's peers, never stored or published again. Because this
 * room no longer sees every update first-hand, two things read the store instead of trusting the doc: compaction
 * (it first applies every stored update, so its state covers everything it replaces) and a remote update that
 * does not integrate (its missing dependencies are committed, so a reload from the store brings them).
 *
 * The room delegates: catching up on other servers' updates to catch-up.ts, compaction to compaction.ts, the REST
 * replace path to replace.ts, the check of a seed to seed-check.ts; its options and default limits are in
 * room-options.ts, its transaction origins in origins.ts.
 */
import * as Y from 'yjs';
import { MessageType, ProtocolError, SyncStep, encodeMessage, pickColor, sanitizeUser } from 'wave-protocol';
import type { Message, StampedPresence } from 'wave-protocol';
import { PeerState } from './peer-state.js';
import type { CommitQueue } from '../store/commit-queue.js';
import type { DocKey, Store } from '../store/types.js';
import type { DocFeed } from '../fanout/types.js';
import type { JoinRequest, RoomPeer } from './peer.js';
import { Presence } from './presence.js';
import { SeedLease } from './seed-lease.js';
import type { SeedLeaseHost } from './seed-lease.js';
import type { SessionTouches } from './session-touches.js';
import { UpdateOverLimit, UpdateRejected, checkUpdate } from './update-check.js';
import { DEFAULT_MAX_TYPE_DEPTH, DEFAULT_MAX_VALUE_DEPTH } from './depth-check.js';
import type { DepthLimits } from './depth-check.js';
import { DEFAULT_COMPACT_IDLE_AFTER_MS, DEFAULT_MAX_DOCUMENT_BYTES, DEFAULT_MAX_STRUCTS_PER_UPDATE } from './room-options.js';
import type { RoomSettings } from './room-options.js';
import { LOADED, REMOTE, SEEDED, describeDoc, dropPending } from './origins.js';
import { normalizeSeed } from './seed-check.js';
import { CatchUp } from './catch-up.js';
import { Compaction } from './compaction.js';
import { replaceContent } from './replace.js';
import { SessionUpkeep } from './session-upkeep.js';
import { SharedOrder } from './shared-order.js';
import { applyStored } from './stored-load.js';
import { DocHolder } from './doc-holder.js';

export interface RoomOptions extends RoomSettings {
  /** Called when the last peer left (the registry unloads the room after a delay). */
  onIdle: (room: Room) => void;
  /** The server's sweep that keeps the sessions of rooms with peers alive. */
  sessions: SessionTouches;
}

export class Room implements SeedLeaseHost {
  /** The document, live or compact; every use of the doc goes through `doc`, which rebuilds it when compact. */
  private readonly holder: DocHolder;
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
  private readonly catchUp: CatchUp;
  private readonly compaction: Compaction;
  private readonly session: SessionUpkeep;
  private joinCounter = 0;
  /**
   * Upper estimate of the encoded document size: exact after a load or a recount, plus every update applied since.
   * Recounted (one `encodeStateAsUpdate`) only when an update would push the estimate over the limit.
   */
  private sizeEstimate = 0;
  /** Set by `changed` while a client update is applied: resolves when it may be acked (`shared`). */
  private pendingCommit: Promise<void> | undefined;
  /** Every change of this room committed and accepted by the fan-out, in order: acks wait for it. */
  private readonly shared = new SharedOrder();
  private readonly inflight = new Set<Promise<unknown>>();
  /**
   * While one message's update is applied (`applyOne`): what the document emitted meanwhile, relayed and committed
   * only once Yjs returned.
   */
  private applying: Uint8Array[] | null = null;

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
    this.holder = new DocHolder({
      idleMs: opts.compactIdleAfterMs ?? DEFAULT_COMPACT_IDLE_AFTER_MS,
      listener: this.onDocUpdate,
    });
    this.presence = new Presence(
      (frame, origin) => this.broadcast(frame, origin),
      (update) => this.feed.publishAwareness(update),
    );
    this.lease = new SeedLease(this, store, opts);
    this.session = new SessionUpkeep({
      room: this,
      store,
      graceMs: opts.graceMs,
      persistent: opts.persistent,
      sessionEnded: () => this.sessionEnded(),
      loadSeeded: async () => {
        await this.loadStored();
        if (this.closed) return;
        this.seeded = true;
        this.syncWaiting();
      },
      offerLease: () => this.lease.offer(this.grantSeed),
      track: (run, what) => this.track(run, what),
    });
    this.catchUp = new CatchUp({
      room: this,
      store,
      log: opts.log,
      applyRemote: (update) => this.applyOne(update, REMOTE),
      applyAwareness: (update) => this.presence.applyRemote(update),
      counted: () => this.opts.metrics.remoteUpdates++,
      sessionEnded: () => this.sessionEnded(),
      refresh: () => this.track(this.refresh(), 'loading a document seeded elsewhere'),
      track: (run, what) => this.track(run, what),
    });
    this.compaction = new Compaction({
      room: this,
      store,
      queue,
      feed,
      shared: opts.fanout.shared,
      compactAfterUpdates: opts.compactAfterUpdates,
      track: (run, what) => this.track(run, what),
    });
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
      feed.start(room.catchUp.receive);
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

  /** The live `Y.Doc`, rebuilt from the compact form if the document was idle (doc-holder.ts). */
  get doc(): Y.Doc {
    return this.holder.doc;
  }

  /** True while the document is held in compact form (`wave_documents_compact`). */
  get compact(): boolean {
    return this.holder.compact;
  }

  /** Candidates for the seed lease: waiting peers that may edit (a read-only peer never seeds). */
  waitingPeers(): readonly RoomPeer[] {
    return this.waiting.filter((p) => this.peers.get(p)?.permission !== 'read');
  }

  /** For an idle room about to be reused: whether it still matches its stored session (`SessionUpkeep`). */
  revalidate(): Promise<boolean> {
    return this.session.revalidate();
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
    this.peers.set(peer, new PeerState(peer, identity, permission));
    if (this.peers.size === 1) this.opts.sessions.add(this, () => this.sessionEnded());
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
      this.opts.sessions.remove(this);
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
      diff = this.holder.encodeState(stateVector);
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
    if (this.holder.addsNothing(update)) {
      // A reply to step1 that brings nothing the idle document lacks (a join): acked as any update that changes
      // nothing, without rebuilding the doc to check it.
      void this.shared.settled.then(() => {
        if (state.permission !== 'read') this.opts.metrics.ackLatency.observe((performance.now() - started) / 1000);
        this.ack(peer, n);
      });
      return;
    }
    let facts;
    try {
      facts = checkUpdate(this.doc, update, this.opts.maxStructsPerUpdate ?? DEFAULT_MAX_STRUCTS_PER_UPDATE, this.depthLimits);
    } catch (error) {
      if (!(error instanceof UpdateRejected)) throw error;
      // A read-only client's later edits build on its earlier (refused) ones: refused too, not a protocol error.
      if (state.permission === 'read' && !error.malformed) return this.refuseReadOnly(state);
      if (error instanceof UpdateOverLimit) return peer.fail('document_too_large', `${error.message}: this edit is too large`);
      throw new ProtocolError(error.message);
    }
    if (state.permission === 'read') {
      if (facts.changes) return this.refuseReadOnly(state);
      // A read-only client's reply to step1 carries nothing new: acked, it changes nothing.
      void this.shared.settled.then(() => this.ack(peer, n));
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
    if (dropPending(this.doc)) {
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
    const commit = committing ?? this.shared.settled;
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

  /** S3: a read-only peer's change is refused (`PeerState.refuseReadOnly`). */
  private refuseReadOnly(state: PeerState): void {
    this.opts.metrics.rejected('access_denied');
    state.refuseReadOnly();
  }

  private async handleSeed(peer: RoomPeer, state: PeerState, epoch: number, update: Uint8Array): Promise<void> {
    const n = ++state.received;
    // A read-only peer is never offered the lease (waitingPeers): its Seed is an edit, refused like one.
    if (state.permission === 'read') return this.refuseReadOnly(state);
    if (!this.lease.isHolder(peer) || epoch !== this.epoch || this.seeded) {
      // P7: ignored, not stored, not relayed, but counted so the client's ack arithmetic stays simple.
      await this.shared.settled;
      this.ack(peer, n);
      return;
    }
    // A seed is a whole document (rarely more than a few structs: an editor's content); it may carry more than an
    // incremental update, but stays bounded.
    let content: Uint8Array;
    try {
      content = normalizeSeed(update, 5 * (this.opts.maxStructsPerUpdate ?? DEFAULT_MAX_STRUCTS_PER_UPDATE), this.depthLimits);
    } catch (error) {
      if (error instanceof UpdateOverLimit) return peer.fail('document_too_large', `the seed: ${error.message}`);
      throw error;
    }
    if (content.length > (this.opts.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES)) {
      peer.fail('document_too_large', `the seed is larger than ${this.opts.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES} bytes`);
      return;
    }
    const holder = this.lease.takeForCommit(peer);
    // P5: stored and marked seeded in one transaction, only if this peer still holds the lease.
    const committed = await this.store.commitSeed(this.key, epoch, holder, content, Date.now());
    if (!committed) {
      this.opts.log.warn(`seed of ${describeDoc(this.key)} epoch ${epoch} refused by the store (lease lost)`);
      await this.shared.settled;
      this.ack(peer, n);
      await this.refresh();
      return;
    }
    if (!this.adoptSeed(epoch, content)) return;
    await this.shared.settled;
    this.ack(peer, n);
  }

  /**
   * After the store committed `content` as the seed of `epoch`: tells the other servers, takes it into the room's doc
   * and answers the clients waiting for it. False when the room closed meanwhile (nothing to update).
   */
  private adoptSeed(epoch: number, content: Uint8Array): boolean {
    // The seed's ack waits for this too: servers with peers waiting for the seed learn of it before the ack.
    this.shared.add(this.feed.publishSeeded(epoch));
    if (this.closed) return false;
    this.seeded = true;
    this.compaction.reset([content]);
    Y.applyUpdate(this.doc, content, SEEDED);
    this.sizeEstimate = content.length;
    this.syncWaiting();
    return true;
  }

  /** The peer's first `count` update-bearing messages are committed: acks them (`PeerState.ack`). */
  private ack(peer: RoomPeer, count: number): void {
    const state = this.peers.get(peer);
    if (!state || this.failed) return;
    state.ack(count, (acked) => {
      if (this.peers.get(peer) !== state || !peer.open || this.failed) return;
      peer.send({ type: MessageType.Ack, count: acked });
      this.opts.onAckSent?.(this.key, acked);
    });
  }


  // --- REST (server-side forceSync, delete) ---

  /** Replaces the content for everyone and resolves once it is committed (rooms/replace.ts). */
  async replaceContent(write: (doc: Y.Doc) => void): Promise<void> {
    return replaceContent(
      {
        room: this,
        store: this.store,
        serverId: this.opts.serverId,
        leaseTtlMs: this.opts.leaseTtlMs,
        adoptSeed: (epoch, content) => void this.adoptSeed(epoch, content),
        transactStored: (change, origin, what) => this.transactStored(change, origin, what),
      },
      write,
    );
  }

  /**
   * `change` as one transaction with `origin`, resolved once what it changed is committed; the size estimate is
   * recounted (a replacement's size is not its update's). When `change` throws, the document may hold part of it,
   * unstored (D7): the room fails and the error is thrown again.
   */
  private transactStored(change: () => void, origin: unknown, what: string): Promise<void> {
    this.pendingCommit = undefined;
    try {
      this.doc.transact(change, origin);
    } catch (error) {
      this.pendingCommit = undefined;
      this.fail(what, error);
      throw error;
    }
    const commit = this.pendingCommit ?? Promise.resolve();
    this.pendingCommit = undefined;
    this.sizeEstimate = Y.encodeStateAsUpdate(this.doc).length;
    return commit;
  }

  /** The document was deleted (REST DELETE): peers are closed (1012) and reconnect into a new session. */
  deleted(): void {
    this.sessionEnded();
  }

  // --- relaying ---

  /**
   * `Y.applyUpdate` of one message's update (a client's, or another server's). What the document emits for it is
   * relayed and committed only after Yjs returned: when Yjs throws midway, its transaction still emits what
   * integrated before the throw, and that part reaches nobody; the caller fails the room (`fail`), which drops the
   * document and reloads it from the store.
   */
  private applyOne(update: Uint8Array, origin: unknown): void {
    const emitted: Uint8Array[] = [];
    this.applying = emitted;
    try {
      Y.applyUpdate(this.doc, update, origin);
    } finally {
      this.applying = null;
    }
    for (const change of emitted) this.changed(change, origin);
  }

  private readonly onDocUpdate = (emitted: Uint8Array, origin: unknown): void => {
    if (origin === LOADED || origin === SEEDED) return;
    if (this.applying) this.applying.push(emitted);
    else this.changed(emitted, origin);
  };

  /**
   * Relays a change to the peers and commits and publishes one that came from a peer. Peers get the update this
   * document emitted (what changed here, encoded by this server), never a client's bytes as sent: what they receive
   * is exactly what integrated here and is stored.
   */
  private changed(update: Uint8Array, origin: unknown): void {
    this.broadcast(encodeMessage({ type: MessageType.Sync, step: SyncStep.Update, update }), origin);
    // Committed and published by the server it came from.
    if (origin === REMOTE) return;
    const epoch = this.epoch;
    const commit = this.queue.enqueue([{ doc: this.key, epoch, update }]);
    // Published only once committed: a server that reads it from the stream and then loads the document from the
    // store must find it there. Acked (in handleUpdate) only once published too (D6, shared-order.ts).
    this.pendingCommit = this.shared.add(
      commit.then(() => {
        this.opts.metrics.updates++;
        return this.feed.publishUpdates(epoch, [update]);
      }),
    );
    this.compaction.stored(update.length);
  }

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
      step1 = encodeMessage({ type: MessageType.Sync, step: SyncStep.Step1, stateVector: this.holder.stateVector() });
      step2 = encodeMessage({ type: MessageType.Sync, step: SyncStep.Step2, update: this.holder.encodeState() });
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
    this.holder.buildSoon();
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

  /** Re-reads the session (rooms/session-upkeep.ts); `SeedLeaseHost.refresh`. */
  refresh(): Promise<void> {
    return this.session.refresh();
  }

  private async loadStored(): Promise<void> {
    // Remote updates received until now were committed before they were published, so this load contains them;
    // those that arrive while it runs are held and applied after it.
    this.catchUp.clear();
    const stored = await this.store.loadDocument(this.key, this.epoch);
    const rows = stored.updates;
    // One row (a snapshot or the seed) is held as stored: the first sync sends it without decoding it into a doc.
    if (rows.length !== 1 || !this.holder.holdStored(rows[0]!)) applyStored(this.doc, rows, this.onDocUpdate);
    this.compaction.reset(rows);
    this.sizeEstimate = rows.reduce((sum, u) => sum + u.length, 0);
    this.catchUp.resume();
    this.compaction.maybeCompact();
  }

  // --- session ---

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
    this.opts.sessions.remove(this);
    this.lease.close();
    // Bounded: every tracked call settles on its own; no new ones start once closed.
    for (let i = 0; i < 10 && this.inflight.size > 0; i++) await Promise.all([...this.inflight]);
    await this.queue.flush();
    this.destroy();
  }

  private destroy(): void {
    this.closed = true;
    this.feed.close();
    this.catchUp.clear();
    this.lease.close();
    this.holder.destroy();
    this.presence.destroy();
  }
}
