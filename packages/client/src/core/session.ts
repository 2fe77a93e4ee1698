/**
 * The DOM-free heart of a Wave client: one Y.Doc, one WebSocket, the join/seed/sync handshake of PROTOCOL.md,
 * acks, reconnects and the awareness-based user list. Editors plug in through `DocBinding`; the browser-facing
 * `Coedit` class wires config, DOM events and presence UI around it. Parts: session-state.ts (lifecycle),
 * connection.ts, session-token.ts, session-presence.ts, seed.ts, read-only-view.ts; shapes in session-types.ts.
 */
import * as Y from 'yjs';
import { Awareness, applyAwarenessUpdate, encodeAwarenessUpdate, removeAwarenessStates } from 'y-protocols/awareness';
import { CloseCode, DOC_FORMAT, MessageType, PROTOCOL_VERSION, SERVER_ERRORS, SyncStep, errorCodeForClose } from 'wave-protocol';
import { META_MAP, META_REPLACED_KEY, type ErrorCode, type HelloPayload, type Message, type WelcomePayload } from 'wave-protocol';
import { AckTracker } from './ack-tracker.js';
import { ConfirmedState } from './confirmed.js';
import { captureEdits, plainText, type Edits } from './reset.js';
import { reapplyEdits, writeHostCopySeed, writeSeed } from './seed.js';
import { CoeditError } from './errors.js';
import { Connection } from './connection.js';
import { spreadPhase } from './backoff.js';
import { ReadOnlyView, rebuildShared } from './read-only-view.js';
import { SessionPresence } from './session-presence.js';
import { SessionLifecycle } from './session-state.js';
import { LocalUndo } from './undo.js';
import { openKept, sameState } from './persistence.js';
import { SessionToken } from './session-token.js';
import { REPLACE_ORIGIN, SEED_ORIGIN, type PresenceState, type SessionOptions, type SessionStatus, type SessionUser } from './session-types.js';

export { REAPPLY_ORIGIN, REPLACE_ORIGIN, SEED_ORIGIN } from './session-types.js';
export type { DocBinding, PresenceState, SessionEvents, SessionOptions, SessionState, SessionStatus, SessionUser } from './session-types.js';

/** How often the heartbeat checks the connection (connection.ts) and presence liveness (awareness-users.ts). */
const HEARTBEAT_TICK_MS = 5_000;
/** `stop()` waits at most this long for pending edits to be acked before closing (API.md: bounded wait). */
const STOP_FLUSH_MS = 3_000;
/** The end of a `document_too_large` error's detail: what became of the edits the server did not take. */
const DISCARDED = 'the edits not saved yet are not stored, nor kept offline; the session stopped (reload to go on with the shared document)';

export class Session {
  private doc = new Y.Doc();
  private awareness = new Awareness(this.doc);
  /** Created with each doc by attachDoc(). */
  private undo!: LocalUndo;
  private readonly connection: Connection;
  private readonly lifecycle = new SessionLifecycle();
  private readonly readOnlyView = new ReadOnlyView({
    bound: () => this.bound,
    applies: () => !this.lifecycle.stopped && this.bound && this.readOnly,
    show: () => this.showShared(),
  });
  private tracker = new AckTracker();
  /** Offline persistence is loading kept updates into the docs. */
  private loading = false;
  /** The doc holds content kept by offline persistence for `epoch` (not yet shown by the editor). */
  private keptContent = false;
  /** At the last reset the editor was bound, i.e. it shows the unsynced edits itself. */
  private editorShowsEdits = false;
  private confirmed: ConfirmedState;
  /** Unsynced edits captured at a session reset, waiting to be re-applied on the new session's content (P8). */
  private reapply: Edits | null = null;
  private epoch: number | undefined;
  private welcome: WelcomePayload | undefined;
  private readonly token: SessionToken;
  /**
   * The editor is bound to the current doc. A fact independent of the lifecycle phase (session-state.ts): a seed
   * binds it before the first sync, and a session reset unbinds it while the session reconnects.
   */
  private bound = false;
  private heartbeat: unknown = null;
  private readonly presence = new SessionPresence({
    awareness: () => this.awareness,
    selfId: () => this.doc.clientID,
    online: () => this.lifecycle.online,
    send: (update) => this.send({ type: MessageType.Awareness, update }),
    emit: (name, payload) => this.opts.emit(name, payload),
  });
  /** The server's state vector from its last step1 on this connection. */
  private serverStateVector: Uint8Array | null = null;
  private startWaiters: Array<{ resolve: () => void; reject: (e: CoeditError) => void }> = [];
  private savedWaiters: Array<() => void> = [];

  constructor(private readonly opts: SessionOptions) {
    this.token = new SessionToken({
      token: opts.token,
      refreshToken: opts.refreshToken,
      onFresh: () => {
        if (this.lifecycle.online) this.sendToken(true);
      },
      report: (error) => this.report(error),
    });
    this.confirmed = this.newConfirmedState();
    const query = `apiKey=${encodeURIComponent(opts.apiKey)}&docId=${encodeURIComponent(opts.docId)}`;
    const target = { url: `${opts.wsUrl}?${query}`, socketFactory: opts.socketFactory, lifecycle: this.lifecycle };
    this.connection = new Connection(target, {
      hello: () => this.hello(),
      message: (message) => this.handle(message),
      report: (error) => this.report(error),
      gone: (code, reason, opened, rejected) => this.onSocketGone(code, reason, opened, rejected),
      refreshToken: () => this.token.refreshBeforeReconnect(),
    });
    this.attachDoc();
  }

  /** Connects and resolves on the first full sync; rejects with a fatal `CoeditError`. */
  start(): Promise<void> {
    const done = new Promise<void>((resolve, reject) => this.startWaiters.push({ resolve, reject }));
    void this.loadKept().then(() => {
      if (this.lifecycle.stopped) return;
      this.token.start();
      this.connection.connect();
      this.heartbeat = setInterval(() => this.checkHeartbeat(), HEARTBEAT_TICK_MS);
    });
    return done;
  }

  /**
   * Loads what offline persistence kept (R3): the doc of the epoch it belonged to, and its confirmed copy. Kept
   * edits the server never acked count as one pending edit; the step2 reply of the first sync uploads them.
   */
  private async loadKept(): Promise<void> {
    const persistence = this.opts.persistence;
    if (!persistence) return;
    this.loading = true;
    const epoch = await openKept(persistence, this.doc, this.confirmed.doc, this.confirmedAtOnce).finally(() => {
      this.loading = false;
    });
    if (epoch === undefined || this.doc.store.clients.size === 0) return;
    this.epoch = epoch;
    this.keptContent = true;
    if (!sameState(this.doc, this.confirmed.doc)) this.tracker.localEdit();
  }

  /** Sends pending edits (waits at most STOP_FLUSH_MS for their acks), leaves and releases everything. */
  async stop(): Promise<void> {
    if (this.lifecycle.stopped) return;
    if (this.lifecycle.online && this.tracker.pending > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, STOP_FLUSH_MS);
        this.savedWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    // A fatal error may have stopped the session while it waited.
    if (this.lifecycle.stopped) return;
    // Tell peers at once that we left instead of letting them wait for the awareness timeout.
    if (this.lifecycle.online) removeAwarenessStates(this.awareness, [this.doc.clientID], 'local');
    this.shutdown(null);
  }

  getStatus(): SessionStatus {
    return { state: this.lifecycle.state, saved: this.tracker.pending === 0, pending: this.tracker.pending };
  }

  getUsers(): SessionUser[] {
    return this.presence.users();
  }

  /** A hint from the host (the browser's `online` event) that the network is back: retry now. */
  retryNow(): void {
    this.connection.retryNow();
  }

  /**
   * Replaces the whole shared content for everyone in one transaction (API.md `forceSync`): `write` (the adapter's)
   * empties the shared type and writes the new content. Peers receive one update, hence one remote
   * `content_changed`, and clear their undo stacks. Resolves when the replacement is stored on the server.
   */
  async replaceContent(write: (doc: Y.Doc) => void): Promise<void> {
    if (this.lifecycle.stopped || !this.bound) {
      throw new CoeditError('invalid_config', 'forceSync: the session has not synced yet (await start() first)', true);
    }
    this.doc.transact(() => {
      write(this.doc);
      this.doc.getMap(META_MAP).set(META_REPLACED_KEY, `${this.doc.clientID}:${Date.now()}`);
    }, REPLACE_ORIGIN);
    this.undo.manager.clear();
    if (this.tracker.pending === 0) return;
    await new Promise<void>((resolve) => this.savedWaiters.push(resolve));
  }

  /** A hint from the host (the browser's `offline` event): the socket is as good as gone, do not wait for the heartbeat. */
  networkLost(): void {
    if (this.lifecycle.stopped || !this.connection.active) return;
    this.connection.drop(CloseCode.Normal, 'network offline');
    this.onSocketGone(1006, 'the browser reports no network', true, false);
  }

  // ---- connection ----

  /** The Hello for a socket that just opened (P2): the token it carries is the one the server holds from now on. */
  private hello(): HelloPayload {
    const hello: HelloPayload = {
      protocol: PROTOCOL_VERSION,
      format: DOC_FORMAT,
      apiKey: this.opts.apiKey,
      docId: this.opts.docId,
      user: this.opts.user,
      clientId: this.doc.clientID,
    };
    const token = this.token.forHello();
    if (token !== undefined) hello.token = token;
    if (this.epoch !== undefined) hello.epoch = this.epoch;
    return hello;
  }

  private send(message: Message): void {
    this.connection.send(message);
  }

  private sendUpdateBearing(message: Message): void {
    if (this.connection.send(message)) this.tracker.sent();
  }

  /**
   * The socket is gone (the connection has forgotten it): a fatal close stops the session, any other reconnects.
   * `rejected`: this client closed it for a frame it could not use, already reported (one `error` event, R10).
   */
  private onSocketGone(code: number, reason: string, opened: boolean, rejected: boolean): void {
    this.tracker.connectionLost();
    // Read before the peers are dropped: the clients of this document that lose the server together spread their
    // attempts evenly by their rank among the peers each of them saw (R1).
    const phase = spreadPhase(this.awareness.getStates().keys(), this.doc.clientID);
    this.presence.dropRemote();
    if (this.lifecycle.stopped) return;
    const errorCode: ErrorCode | undefined = errorCodeForClose(code);
    const serverError = errorCode !== undefined && Object.hasOwn(SERVER_ERRORS, errorCode)
      ? SERVER_ERRORS[errorCode as keyof typeof SERVER_ERRORS]
      : undefined;
    if (serverError?.fatal && errorCode) {
      const detail = errorCode === 'document_too_large'
        ? `the server refused an edit over its size limit (${code}${reason ? ` ${reason}` : ''}), a paste too large for instance: ${DISCARDED}`
        : reason || `the server closed the connection (${code})`;
      this.fail(new CoeditError(errorCode, detail, true));
      return;
    }
    const { changed, newOutage } = this.lifecycle.connectionLost();
    if (changed) this.emitStatus();
    if (newOutage && !rejected) {
      const detail = opened
        ? `connection to the Wave server lost (${code}${reason ? ` ${reason}` : ''}); reconnecting`
        : `could not connect to the Wave server at ${this.opts.wsUrl} (is it running, and is this page's origin allowed for the apiKey?); retrying`;
      this.report(new CoeditError(errorCode === 'rate_limited' ? 'rate_limited' : 'connection_lost', detail, false));
    }
    this.connection.retryLater(phase);
  }

  /** Deferred unless offline persistence stores the confirmed copy (confirmed.ts). */
  private newConfirmedState(): ConfirmedState {
    return new ConfirmedState(!this.opts.persistence);
  }

  private checkHeartbeat(): void {
    const now = Date.now();
    this.presence.check(now);
    this.connection.check(now);
  }

  // ---- messages ----

  private handle(message: Message): void {
    switch (message.type) {
      case MessageType.Welcome:
        this.onWelcome(message.welcome);
        break;
      case MessageType.SeedRequest:
        this.onSeedRequest(message.epoch);
        break;
      case MessageType.Sync:
        if (message.step === SyncStep.Step1) {
          this.serverStateVector = message.stateVector;
          if (this.readOnly) {
            // A read-only client has nothing the server would take (S17): its reply is empty, hence never refused,
            // and its ack must not count the edits it kept as stored (they are discarded once synced).
            if (this.connection.send({ type: MessageType.Sync, step: SyncStep.Step2, update: EMPTY_UPDATE })) this.tracker.sentNothing();
          } else {
            this.sendUpdateBearing({ type: MessageType.Sync, step: SyncStep.Step2, update: Y.encodeStateAsUpdate(this.doc, message.stateVector) });
          }
        } else {
          if (this.bound) this.opts.binding.flushLocal?.();
          this.applyingRemote = true;
          try {
            Y.applyUpdate(this.doc, message.update, this);
          } finally {
            this.applyingRemote = false;
          }
          if (message.step === SyncStep.Step2 && !this.lifecycle.synced) this.onFirstSync();
          else if (message.step === SyncStep.Step2) this.onResync();
        }
        break;
      case MessageType.Awareness:
        try {
          applyAwarenessUpdate(this.awareness, message.update, this);
        } catch (err) {
          // Presence is ephemeral: the entries read before the bad bytes stay until the next renewal replaces them.
          this.connection.reject(`the server sent presence this client cannot read: ${(err as Error).message}`);
        }
        break;
      case MessageType.Ack:
        if (this.tracker.acked(message.count)) {
          this.confirmed.acked(this.tracker.acknowledged);
          this.emitStatus();
        }
        break;
      case MessageType.Error: {
        const { code, detail, fatal } = message.error;
        const error = new CoeditError(code, detail, fatal);
        if (fatal) this.fail(error);
        else this.report(error);
        break;
      }
      case MessageType.Pong:
        break;
      default:
        // Client-to-server types from a server: ignore rather than trust.
        break;
    }
  }

  private onWelcome(welcome: WelcomePayload): void {
    if (this.epoch !== undefined && welcome.epoch !== this.epoch) this.startNewEpoch(welcome.epoch);
    else this.opts.persistence?.setEpoch(welcome.epoch);
    this.epoch = welcome.epoch;
    const previous = this.welcome?.permission ?? 'edit';
    this.welcome = welcome;
    if (welcome.permission !== previous) {
      this.opts.binding.setReadOnly?.(welcome.permission === 'read');
      this.opts.emit('access_changed', { permission: welcome.permission });
    }
    this.presence.welcomed(welcome);
  }

  /**
   * Merges `fields` into this client's presence (awareness state) and publishes it when welcomed. Identity fields
   * are the server's: it overwrites them anyway (P11), so they are never taken from here.
   */
  setPresence(fields: Record<string, unknown>): void {
    this.presence.set(fields, !this.lifecycle.stopped && this.welcome !== undefined);
  }

  /** The awareness states of everyone connected (self included), for the presence UI. */
  getPresence(): PresenceState[] {
    return this.presence.states();
  }


  /** The Y.Doc the editor is bound to (relative positions resolve against it); replaced at a session reset. */
  get ydoc(): Y.Doc {
    return this.doc;
  }

  private onSeedRequest(epoch: number): void {
    if (epoch !== this.epoch) return;
    if (this.reapply && this.opts.fetchHostCopy && this.opts.binding.textName) {
      void this.seedFromHostCopy(epoch, this.reapply, this.opts.binding.textName);
      return;
    }
    const edits = this.reapply;
    this.reapply = null;
    this.sendSeed(epoch, () => writeSeed(this.doc, this.opts.binding, { kept: this.keptContent, edits, editorShowsEdits: this.editorShowsEdits }));
  }

  /** Seeds a new session with the host's stored copy plus this client's unsynced edits (hook, P8). */
  private async seedFromHostCopy(epoch: number, edits: Edits, name: string): Promise<void> {
    let base: string | null = null;
    try {
      base = (await this.opts.fetchHostCopy?.()) ?? null;
    } catch (err) {
      this.report(new CoeditError('session_reset', `fetchDocOnNetworkReconnect failed (${(err as Error).message}); seeding from the editor`, false));
    }
    if (this.lifecycle.stopped || epoch !== this.epoch) return;
    this.reapply = null;
    this.sendSeed(epoch, () => writeHostCopySeed(this.doc, this.opts.binding, base, edits, name));
  }

  /**
   * Writes the seed (`write`, seed.ts) unless the editor is bound already, then sends the doc as the Seed. Bound at
   * once: what the user types while the seed is in flight goes into the doc instead of being overwritten when the
   * server's step2 arrives; goOnline() sends it.
   */
  private sendSeed(epoch: number, write: () => void): void {
    if (!this.bound) {
      write();
      this.bindEditor();
    }
    this.sendUpdateBearing({ type: MessageType.Seed, epoch, update: Y.encodeStateAsUpdate(this.doc) });
  }

  private bindEditor(): void {
    this.opts.binding.bind(this.doc, this.awareness, this.undo);
    this.bound = true;
  }

  private onFirstSync(): void {
    this.onResync();
    for (const w of this.startWaiters.splice(0)) w.resolve();
  }

  private onResync(): void {
    if (!this.bound) {
      this.bindEditor();
      const edits = this.reapply;
      const name = this.opts.binding.textName;
      this.reapply = null;
      if (edits && name) reapplyEdits(this.doc, edits, name);
    }
    // Edits this client kept from before it was read-only (offline storage, a token that changed to `read`) will
    // never be taken by the server: the editor shows the shared document instead (S17).
    if (this.readOnly && this.tracker.pending > 0) this.readOnlyView.revert();
    this.goOnline();
  }

  private goOnline(): void {
    this.connection.online();
    // Local edits made between our step2 reply and now were sent by nobody: send them (duplicates are harmless).
    if (this.tracker.hasUnsent() && this.serverStateVector && !this.readOnly) {
      this.sendUpdateBearing({ type: MessageType.Sync, step: SyncStep.Update, update: Y.encodeStateAsUpdate(this.doc, this.serverStateVector) });
    }
    if (this.lifecycle.goOnline()) this.emitStatus();
    // A token refreshed while this connection joined: the server still holds the older one.
    this.sendToken(false);
    const local = this.awareness.getLocalState();
    if (local !== null) {
      this.send({ type: MessageType.Awareness, update: encodeAwarenessUpdate(this.awareness, [this.doc.clientID]) });
    }
  }

  /**
   * The server's session ended while this client was away (P8): its Yjs history must not be merged into the new
   * session. The editor keeps its content; a new Y.Doc is bound once the new session is synced or seeded.
   */
  private startNewEpoch(epoch: number): void {
    const pending = this.tracker.pending;
    const name = this.opts.binding.textName;
    this.editorShowsEdits = this.bound;
    if (pending > 0) {
      // Bound: the editor shows the live doc. Not bound: the live doc came from offline storage (R3).
      if (name) this.reapply = captureEdits(this.confirmed.text(name), plainText(this.doc.getText(name)));
      this.report(new CoeditError(
        'session_reset',
        `the collaboration session was restarted while this client had ${pending} unsaved edit(s); ` +
          (name || this.bound ? 'they are re-applied on top of the new session' : 'they are kept only if this client seeds the new session'),
        false,
      ));
    }
    this.bound = false;
    this.keptContent = false;
    this.replaceDoc(epoch);
    this.tracker = new AckTracker();
  }

  /**
   * Unbinds the editor and replaces the doc, its awareness and its confirmed copy by empty ones (offline storage
   * follows, for `epoch`). `keepClientId`: the new doc keeps the old one's client id, and its awareness starts without
   * a local state (the caller restores it once the doc holds its content).
   */
  private replaceDoc(epoch: number | undefined, keepClientId = false): void {
    const clientId = this.doc.clientID;
    this.opts.binding.unbind();
    this.detachDoc();
    this.doc = new Y.Doc();
    if (keepClientId) this.doc.clientID = clientId;
    this.awareness = new Awareness(this.doc);
    if (keepClientId) this.awareness.setLocalState(null);
    this.confirmed = this.newConfirmedState();
    this.attachDoc();
    if (epoch !== undefined) void this.opts.persistence?.reset(this.doc, this.confirmed.doc, epoch, this.confirmedAtOnce);
  }


  // ---- document and presence ----

  /** True while a remote update is being applied: local transactions made meanwhile are Yjs' own cleanups. */
  private applyingRemote = false;

  /** An update of the live doc that is not an edit of this user: the server's, applied with the session as origin. */
  private isRemote(origin: unknown, tr: Y.Transaction): boolean {
    return origin === this || !tr.local;
  }

  /** The updates `onDocUpdate` puts into the confirmed copy as they happen: offline persistence keeps them there only. */
  private readonly confirmedAtOnce = (origin: unknown, tr: Y.Transaction): boolean => this.isRemote(origin, tr) || origin === SEED_ORIGIN;

  private readonly onDocUpdate = (update: Uint8Array, origin: unknown, _doc: Y.Doc, tr: Y.Transaction): void => {
    if (this.loading) return; // offline persistence replaying what it kept: neither an edit nor confirmed
    if (this.isRemote(origin, tr)) {
      this.confirmed.remote(update);
      this.opts.emit('content_changed', { source: 'remote' });
      return;
    }
    if (this.readOnly) {
      // S17: the server refuses every change of a read-only client, so none is sent or counted. One made in the
      // editor (a script, an undo, forceSync …) is reverted at once: the editor is rebound to the shared document.
      // Yjs' own formatting cleanup after a remote update is not a change of this user (every peer makes it).
      if (!(origin === null && this.applyingRemote)) this.readOnlyView.revert();
      return;
    }
    this.tracker.localEdit();
    // The seed is the host's content, not an edit of this user: a reset must never re-apply it (it would
    // duplicate the host's text), so it counts as confirmed at once, while still pending for `saved`.
    if (origin === SEED_ORIGIN) this.confirmed.remote(update);
    else this.confirmed.local(this.tracker.edits, update);
    // Yjs' own formatting cleanup after a remote update (a transaction of its own, origin null, made while that
    // update is applied) must reach the server like an edit, but nobody here changed anything.
    const derived = origin === null && this.applyingRemote;
    this.opts.emit('content_changed', { source: derived ? 'remote' : 'local' });
    if (this.lifecycle.online) {
      this.sendUpdateBearing({ type: MessageType.Sync, step: SyncStep.Update, update });
    }
    this.emitStatus();
  };

  /** Another user's forceSync replaced the content: undoing into the old content would resurrect it. */
  private readonly onMetaChange = (event: Y.YMapEvent<unknown>): void => {
    if (event.keysChanged.has(META_REPLACED_KEY) && !event.transaction.local) this.undo.manager.clear();
  };

  private attachDoc(): void {
    // One undo manager per doc: a replaced doc (session reset) starts with empty stacks.
    this.undo = new LocalUndo(this.doc);
    this.doc.on('update', this.onDocUpdate);
    this.doc.getMap(META_MAP).observe(this.onMetaChange);
    this.awareness.on('update', this.presence.onUpdate);
    this.awareness.on('change', this.presence.onChange);
  }

  private detachDoc(): void {
    this.doc.off('update', this.onDocUpdate);
    this.doc.getMap(META_MAP).unobserve(this.onMetaChange);
    this.awareness.off('update', this.presence.onUpdate);
    this.awareness.off('change', this.presence.onChange);
    this.awareness.destroy();
    this.undo.destroy();
    this.doc.destroy();
    this.confirmed.destroy();
  }

  // ---- read-only view (RELIABILITY.md S17) ----

  /** The server granted only `read` on this connection. */
  private get readOnly(): boolean {
    return this.welcome?.permission === 'read';
  }

  private showShared(): void {
    const refused = this.tracker.pending;
    if (refused > 0) {
      // Not one of them can be stored: they stop counting as pending (`saved` is true again). This connection has
      // no unacked message left but its empty step2 reply, so the new tracker's empty count loses nothing.
      this.tracker = new AckTracker();
      this.report(new CoeditError('access_denied', `this connection is read-only: ${refused} unsaved edit(s) made before were discarded`, false));
    }
    rebuildShared({
      doc: this.doc,
      awareness: this.awareness,
      shared: Y.encodeStateAsUpdate(this.confirmed.doc),
      origin: this,
      replace: () => {
        this.replaceDoc(this.epoch, true);
        return { doc: this.doc, awareness: this.awareness };
      },
      bind: () => this.bindEditor(),
    });
    if (refused > 0) this.emitStatus();
  }

  // ---- state and errors ----

  private emitStatus(): void {
    const status = this.getStatus();
    if (status.saved) for (const w of this.savedWaiters.splice(0)) w();
    this.opts.emit('status', status);
  }

  private report(error: CoeditError): void {
    this.opts.emit('error', error);
  }

  /** A fatal error: report it, reject `start()`, and stop without retrying. */
  private fail(error: CoeditError): void {
    this.report(error);
    this.shutdown(error);
  }

  private shutdown(error: CoeditError | null): void {
    this.lifecycle.stop();
    this.token.stop();
    if (this.heartbeat !== null) clearInterval(this.heartbeat);
    this.heartbeat = null;
    this.connection.stop(CloseCode.Normal, 'stopped');
    // The editor goes back to the host as the session found it: editable (a `read` token had locked it).
    if (this.welcome?.permission === 'read') this.opts.binding.setReadOnly?.(false);
    this.opts.binding.unbind();
    this.bound = false;
    // Everything stored on the server: nothing to keep offline. Else keep it for the next page load (R3), unless the
    // server refused it for its size: sent again at every load, it would be refused again, and the document could
    // not be opened in this browser any more (R9).
    if (this.tracker.pending === 0 || error?.code === 'document_too_large') void this.opts.persistence?.clear();
    else this.opts.persistence?.close();
    this.detachDoc();
    this.presence.stopped();
    this.emitStatus();
    const reason = error ?? new CoeditError('connection_lost', 'the session was stopped before it synced', false);
    for (const w of this.startWaiters.splice(0)) w.reject(reason);
    for (const w of this.savedWaiters.splice(0)) w();
  }

  /**
   * A fresh token (the config's token function, called again before `exp`): sent on the open connection, which the
   * server then keeps open until the new `exp` (P2b), and used by every later Hello.
   */
  setToken(token: string): void {
    this.token.set(token);
  }

  /** Sends the current token (`always` false: unless the server holds it already; session-token.ts). */
  private sendToken(always: boolean): void {
    this.token.send((token) => this.connection.send({ type: MessageType.Token, token }), always);
  }

  /** The permission the server granted, once welcomed. */
  get permission(): 'edit' | 'read' | undefined {
    return this.welcome?.permission;
  }
}

/** A Yjs update (v1) with no structs and no deletions. */
const EMPTY_UPDATE = new Uint8Array([0, 0]);
