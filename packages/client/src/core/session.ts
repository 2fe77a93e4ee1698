/**
 * The DOM-free heart of a Wave client: one Y.Doc, one WebSocket, the join/seed/sync handshake of PROTOCOL.md,
 * acks, reconnects and the awareness-based user list. Editors plug in through `DocBinding`; the browser-facing
 * `Coedit` class wires config, DOM events and presence UI around it.
 */
import * as Y from 'yjs';
import { Awareness, applyAwarenessUpdate, encodeAwarenessUpdate, removeAwarenessStates } from 'y-protocols/awareness';
import {
  CloseCode,
  MessageType,
  PROTOCOL_VERSION,
  SERVER_ERRORS,
  SyncStep,
  decodeMessage,
  encodeMessage,
  errorCodeForClose,
  META_MAP,
  META_REPLACED_KEY,
  type ErrorCode,
  type HelloPayload,
  type Message,
  type UserIdentity,
  type WelcomePayload,
} from 'wave-protocol';
import { AckTracker } from './ack-tracker.js';
import { ConfirmedState } from './confirmed.js';
import { applyEdits, captureEdits, writeDifference, type Patches } from './reset.js';
import type { LocalPersistence } from './persistence.js';
import { Backoff } from './backoff.js';
import { CoeditError } from './errors.js';
import { SOCKET_CONNECTING, SOCKET_OPEN, frameBytes, type SocketFactory, type SocketLike } from './socket.js';
import { LocalUndo } from './undo.js';
import { applyRemoteUpdate } from './remote-update.js';
import { TokenRefresher } from './token-refresh.js';

/** Transaction origin of the editor content written while seeding (P5). */
export const SEED_ORIGIN = Symbol('wave-seed');
/** Transaction origin of unsynced edits re-applied after a session reset (P8); adapters show it like a remote edit. */
export const REAPPLY_ORIGIN = Symbol('wave-reapply');
/** Transaction origin of `forceSync` (the host replaced the whole content); adapters show it like a remote edit. */
export const REPLACE_ORIGIN = Symbol('wave-replace');

/** What an editor adapter offers the session: the document side only. */
export interface DocBinding {
  /** Writes the editor's current content into the empty `doc` (the session wraps it in a SEED_ORIGIN transaction). */
  seed(doc: Y.Doc): void;
  /**
   * Shows `doc`'s content in the editor (replacing what it had) and syncs both ways from now on. `undo` is this
   * doc's undo manager: the adapter declares its own origin with `undo.track()` and routes the editor's undo/redo
   * keys and commands to it, so that undo reverts only this user's edits.
   */
  bind(doc: Y.Doc, awareness: Awareness, undo: LocalUndo): void;
  /** Stops syncing; the editor keeps its content. Safe to call when not bound. */
  unbind(): void;
  /**
   * Writes edits the editor has made but not yet written into the doc (adapters that learn of edits
   * asynchronously, through a MutationObserver). Called before each remote update is applied, so that a remote
   * edit never lands between a local edit and its write — a write diffed against the older content would then put
   * the local edit at stale offsets (split words, marks on the wrong characters).
   */
  flushLocal?(): void;
  /**
   * Name of the `Y.Text` the editor binds to, for editors whose content is one text (text, B, C). When set, a
   * session reset re-applies unsynced edits as text patches; without it they are kept only when this client seeds.
   */
  readonly textName?: string;
  /** Makes the editor read-only (`true`) or editable again, when the server's permission changes (issue #6). */
  setReadOnly?(readOnly: boolean): void;
}

export type SessionState = 'connecting' | 'online' | 'offline' | 'stopped';

export interface SessionStatus {
  state: SessionState;
  /** True when every local edit has been acked by the server after commit. */
  saved: boolean;
  /** Local edits not yet acked. */
  pending: number;
}

export interface SessionUser {
  user: UserIdentity;
  joinTime: Date;
  color: string;
  self: boolean;
}

/** One awareness state as the presence UI reads it: identity (server-stamped) plus presence fields. */
export interface PresenceState {
  clientId: number;
  self: boolean;
  state: Record<string, unknown>;
}

export interface SessionEvents {
  status: SessionStatus;
  /** Internal (not a public event): every awareness change, carets and pointers included. */
  presence: PresenceState[];
  content_changed: { source: 'local' | 'remote' };
  users_update: SessionUser[];
  error: CoeditError;
  access_changed: { permission: 'edit' | 'read' };
}

export interface SessionOptions {
  /** `ws(s)://host/v2/ws` — the session adds the query. */
  wsUrl: string;
  apiKey: string;
  docId: string;
  user: HelloPayload['user'];
  token?: string;
  /**
   * The host's token function (config `token` as a function): called again before the token's `exp`; each fresh
   * token is sent on the open connection (`Token`, PROTOCOL.md P2b) and used by later Hellos (token-refresh.ts).
   */
  refreshToken?: () => Promise<string>;
  binding: DocBinding;
  socketFactory: SocketFactory;
  emit: <K extends keyof SessionEvents>(name: K, payload: SessionEvents[K]) => void;
  /** Injected for tests; defaults to Math.random. */
  random?: () => number;
  /**
   * The host's stored copy (hook `fetchDocOnNetworkReconnect`), asked for when this client must seed a new session
   * while it holds unsynced edits; they are re-applied on top of it. Null or absent: the editor's content seeds.
   */
  fetchHostCopy?: () => Promise<string | null>;
  /** Keeps the document across page loads (offline edits survive a closed tab, R3). */
  persistence?: LocalPersistence;
}

/**
 * Send a Ping after this long without sending anything, or without hearing anything (P12): a client alone on a
 * document keeps sending presence renewals that the server does not echo, and must still prove the socket alive.
 */
const PING_AFTER_MS = 15_000;
/** Declare the socket dead after this long without hearing anything: two missed pings plus slack (P12, R4 ≤ 45 s). */
const DEAD_AFTER_MS = 35_000;
/** A connection attempt not open after this long is abandoned and retried (a server that accepts TCP but hangs). */
const CONNECT_TIMEOUT_MS = 10_000;
/** How often the heartbeat checks the timers above. */
const HEARTBEAT_TICK_MS = 5_000;
/**
 * Presence liveness (issue #4: a silent loss disappears from peers within 30 s). Each client re-announces its state
 * this often (y-protocols' own renewal is 15 s) …
 */
const PRESENCE_RENEW_MS = 8_000;
/**
 * … and drops a peer's state not renewed for this long. Both checks run every HEARTBEAT_TICK_MS, so a live peer renews
 * at least every 8 + 5 s (7 s of margin for late timers), and one that went silent is gone after at most 20 + 5 s.
 */
const PRESENCE_TIMEOUT_MS = 20_000;
/** `stop()` waits at most this long for pending edits to be acked before closing (API.md: bounded wait). */
const STOP_FLUSH_MS = 3_000;

export class Session {
  private doc = new Y.Doc();
  private awareness = new Awareness(this.doc);
  /** Created with each doc by attachDoc(). */
  private undo!: LocalUndo;
  private socket: SocketLike | null = null;
  private state: SessionState = 'connecting';
  private tracker = new AckTracker();
  /** Offline persistence is loading kept updates into the docs. */
  private loading = false;
  /** The doc holds content kept by offline persistence for `epoch` (not yet shown by the editor). */
  private keptContent = false;
  /** At the last reset the editor was bound, i.e. it shows the unsynced edits itself. */
  private editorShowsEdits = false;
  private confirmed: ConfirmedState;
  /** Unsynced edits captured at a session reset, waiting to be re-applied on the new session's content (P8). */
  private reapply: Patches | null = null;
  private readonly backoff: Backoff;
  private epoch: number | undefined;
  private welcome: WelcomePayload | undefined;
  /** `opts.token`, replaced by `setToken` when the host's token function gives a fresh one. */
  private token: string | undefined;
  /** The token the server holds for the current connection (sent in its Hello or in a later `Token`). */
  private sentToken: string | undefined;
  private readonly refresher: TokenRefresher | undefined;
  /** A reconnect waits for the token function (connect()): no second attempt meanwhile. */
  private awaitingToken = false;
  private bound = false;
  private synced = false;
  private stopped = false;
  private reportedOutage = false;
  private reconnectTimer: unknown = null;
  private heartbeat: unknown = null;
  private lastSent = 0;
  private connectStartedAt = 0;
  private lastReceived = 0;
  private usersSignature = '';
  /** This client's presence fields (cursor, pointer …), kept across reconnects and session resets. */
  private presence: Record<string, unknown> = {};
  /** The server's state vector from its last step1 on this connection. */
  private serverStateVector: Uint8Array | null = null;
  private startWaiters: Array<{ resolve: () => void; reject: (e: CoeditError) => void }> = [];
  private savedWaiters: Array<() => void> = [];

  constructor(private readonly opts: SessionOptions) {
    this.token = opts.token;
    if (opts.refreshToken && opts.token !== undefined) {
      this.refresher = new TokenRefresher(opts.refreshToken, (token) => this.setToken(token), (error) => this.report(error));
    }
    this.confirmed = this.newConfirmedState();
    this.backoff = new Backoff(undefined, undefined, opts.random);
    this.attachDoc();
  }

  /** Connects and resolves on the first full sync; rejects with a fatal `CoeditError`. */
  start(): Promise<void> {
    const done = new Promise<void>((resolve, reject) => this.startWaiters.push({ resolve, reject }));
    void this.loadKept().then(() => {
      if (this.stopped) return;
      if (this.token !== undefined) this.refresher?.start(this.token);
      this.connect();
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
    let epoch: number | undefined;
    try {
      epoch = await persistence.open(this.doc, this.confirmed.doc);
    } catch (err) {
      console.warn('[wave] offline storage unavailable:', err);
    } finally {
      this.loading = false;
    }
    if (epoch === undefined || this.doc.store.clients.size === 0) return;
    this.epoch = epoch;
    this.keptContent = true;
    if (!bytesEqual(Y.encodeStateAsUpdate(this.doc), Y.encodeStateAsUpdate(this.confirmed.doc))) this.tracker.localEdit();
  }

  /** Sends pending edits (waits at most STOP_FLUSH_MS for their acks), leaves and releases everything. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    if (this.state === 'online' && this.tracker.pending > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, STOP_FLUSH_MS);
        this.savedWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    // Tell peers at once that we left instead of letting them wait for the awareness timeout.
    if (this.state === 'online') removeAwarenessStates(this.awareness, [this.doc.clientID], 'local');
    this.shutdown(null);
  }

  getStatus(): SessionStatus {
    return { state: this.state, saved: this.tracker.pending === 0, pending: this.tracker.pending };
  }

  getUsers(): SessionUser[] {
    return this.collectUsers();
  }

  /** A hint from the host (the browser's `online` event) that the network is back: retry now. */
  retryNow(): void {
    if (this.stopped || this.socket) return;
    if (this.reconnectTimer !== null) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.connect();
  }

  /**
   * Replaces the whole shared content for everyone in one transaction (API.md `forceSync`): `write` (the adapter's)
   * empties the shared type and writes the new content. Peers receive one update, hence one remote
   * `content_changed`, and clear their undo stacks. Resolves when the replacement is stored on the server.
   */
  async replaceContent(write: (doc: Y.Doc) => void): Promise<void> {
    if (this.stopped || !this.bound) {
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
    const socket = this.socket;
    if (this.stopped || !socket) return;
    socket.close(CloseCode.Normal, 'network offline');
    this.onSocketGone(1006, 'the browser reports no network', true);
  }

  // ---- connection ----

  /** `tokenAsked`: this attempt already asked the token function (a failed call does not hold the reconnect). */
  private connect(tokenAsked = false): void {
    if (this.stopped || this.awaitingToken) return;
    // Reconnecting after the page was offline or asleep past the token's exp: ask for a fresh token first. (The
    // first connection's token was just fetched by the host.)
    if (!tokenAsked && this.refresher && this.sentToken !== undefined && TokenRefresher.expired(this.token, Date.now())) {
      this.awaitingToken = true;
      void this.refresher.refreshNow(this.token!).then(() => {
        this.awaitingToken = false;
        this.connect(true);
      });
      return;
    }
    const query = `apiKey=${encodeURIComponent(this.opts.apiKey)}&docId=${encodeURIComponent(this.opts.docId)}`;
    let socket: SocketLike;
    try {
      socket = this.opts.socketFactory(`${this.opts.wsUrl}?${query}`);
    } catch (err) {
      this.onSocketGone(1006, `could not open a WebSocket: ${(err as Error).message}`, false);
      return;
    }
    socket.binaryType = 'arraybuffer';
    this.socket = socket;
    this.connectStartedAt = Date.now();
    let opened = false;
    socket.onopen = () => {
      opened = true;
      this.lastReceived = Date.now();
      const hello: HelloPayload = {
        protocol: PROTOCOL_VERSION,
        apiKey: this.opts.apiKey,
        docId: this.opts.docId,
        user: this.opts.user,
        clientId: this.doc.clientID,
      };
      if (this.token !== undefined) hello.token = this.token;
      this.sentToken = this.token;
      if (this.epoch !== undefined) hello.epoch = this.epoch;
      this.send({ type: MessageType.Hello, hello });
    };
    socket.onmessage = (ev) => {
      if (socket !== this.socket) return;
      this.lastReceived = Date.now();
      const bytes = frameBytes(ev.data);
      if (!bytes) return;
      let message: Message;
      try {
        message = decodeMessage(bytes);
      } catch (err) {
        this.report(new CoeditError('server_error', `the server sent a frame this client cannot read: ${(err as Error).message}`, false));
        socket.close(CloseCode.BadMessage, 'bad frame');
        return;
      }
      this.handle(message);
    };
    socket.onclose = (ev) => {
      if (socket !== this.socket) return;
      this.onSocketGone(ev.code, ev.reason, opened);
    };
    socket.onerror = () => {
      /* onclose follows and carries the code */
    };
  }

  private send(message: Message): void {
    const socket = this.socket;
    if (!socket || socket.readyState !== SOCKET_OPEN) return;
    socket.send(encodeMessage(message));
    this.lastSent = Date.now();
  }

  private sendUpdateBearing(message: Message): void {
    if (!this.socket || this.socket.readyState !== SOCKET_OPEN) return;
    this.send(message);
    this.tracker.sent();
  }

  private onSocketGone(code: number, reason: string, opened: boolean): void {
    this.socket = null;
    this.tracker.connectionLost();
    this.dropRemotePresence();
    if (this.stopped) return;
    const errorCode: ErrorCode | undefined = errorCodeForClose(code);
    const serverError = errorCode !== undefined && Object.hasOwn(SERVER_ERRORS, errorCode)
      ? SERVER_ERRORS[errorCode as keyof typeof SERVER_ERRORS]
      : undefined;
    if (serverError?.fatal && errorCode) {
      this.fail(new CoeditError(errorCode, reason || `the server closed the connection (${code})`, true));
      return;
    }
    if (this.state === 'online') this.setState('offline');
    if (!this.reportedOutage) {
      this.reportedOutage = true;
      const detail = opened
        ? `connection to the Wave server lost (${code}${reason ? ` ${reason}` : ''}); reconnecting`
        : `could not connect to the Wave server at ${this.opts.wsUrl} (is it running, and is this page's origin allowed for the apiKey?); retrying`;
      this.report(new CoeditError(errorCode === 'rate_limited' ? 'rate_limited' : 'connection_lost', detail, false));
    }
    const delay = this.backoff.next();
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.connect();
    }, delay);
  }

  /** Deferred unless offline persistence stores the confirmed copy (confirmed.ts). */
  private newConfirmedState(): ConfirmedState {
    return new ConfirmedState(!this.opts.persistence);
  }

  private checkHeartbeat(): void {
    const now = Date.now();
    this.checkPresence(now);
    if (this.socket && this.socket.readyState === SOCKET_CONNECTING && now - this.connectStartedAt > CONNECT_TIMEOUT_MS) {
      // TCP accepted but the upgrade never answered (a frozen server or proxy): give up on this attempt and retry.
      const socket = this.socket;
      this.onSocketGone(1006, 'connection attempt timed out', false);
      socket.close();
      return;
    }
    if (!this.socket || this.socket.readyState !== SOCKET_OPEN) return;
    if (now - this.lastReceived > DEAD_AFTER_MS) {
      // The socket looks open but nothing arrives (server frozen, network gone silently): drop it.
      const socket = this.socket;
      socket.close(CloseCode.Normal, 'heartbeat timeout');
      this.onSocketGone(1006, 'heartbeat timeout', true);
      return;
    }
    if (now - this.lastSent > PING_AFTER_MS || now - this.lastReceived > PING_AFTER_MS) this.send({ type: MessageType.Ping });
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
          this.sendUpdateBearing({
            type: MessageType.Sync,
            step: SyncStep.Step2,
            // A read-only client has nothing the server would take (S17): its reply is empty, hence never refused.
            update: this.readOnly ? EMPTY_UPDATE : Y.encodeStateAsUpdate(this.doc, message.stateVector),
          });
        } else {
          if (this.bound) this.opts.binding.flushLocal?.();
          this.applyingRemote = true;
          try {
            applyRemoteUpdate(this.doc, message.update, this);
          } finally {
            this.applyingRemote = false;
          }
          if (message.step === SyncStep.Step2 && !this.synced) this.onFirstSync();
          else if (message.step === SyncStep.Step2) this.onResync();
        }
        break;
      case MessageType.Awareness:
        applyAwarenessUpdate(this.awareness, message.update, this);
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
    this.awareness.setLocalState({ ...this.presence, user: welcome.user, color: welcome.color, joinTime: welcome.joinTime });
  }

  /**
   * Merges `fields` into this client's presence (awareness state) and publishes it when welcomed. Identity fields
   * are the server's: it overwrites them anyway (P11), so they are never taken from here.
   */
  setPresence(fields: Record<string, unknown>): void {
    this.presence = { ...this.presence, ...fields };
    for (const key of ['user', 'color', 'joinTime']) delete this.presence[key];
    const local = this.awareness.getLocalState();
    if (this.stopped || !this.welcome || local === null) return;
    this.awareness.setLocalState({ ...local, ...this.presence });
  }

  /** The awareness states of everyone connected (self included), for the presence UI. */
  getPresence(): PresenceState[] {
    const out: PresenceState[] = [];
    this.awareness.getStates().forEach((state, clientId) => {
      if (state && typeof state === 'object') out.push({ clientId, self: clientId === this.doc.clientID, state: state as Record<string, unknown> });
    });
    return out;
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
    const patches = this.reapply;
    this.reapply = null;
    if (!this.bound) {
      const name = this.opts.binding.textName;
      this.doc.transact(() => {
        // Kept content of this very epoch (we seeded it before a crash, R3): it is the seed. Else the editor is;
        // unsynced edits captured while the editor did not show them (loaded from offline storage) go on top.
        if (!this.keptContent) this.opts.binding.seed(this.doc);
        if (patches && name && !this.editorShowsEdits) {
          writeDifference(this.doc.getText(name), applyEdits(patches, this.doc.getText(name).toString()));
        }
      }, SEED_ORIGIN);
      // Bind at once: what the user types while the seed is in flight goes into the doc instead of being
      // overwritten when the server's step2 arrives. goOnline() sends it.
      this.opts.binding.bind(this.doc, this.awareness, this.undo);
      this.bound = true;
    }
    this.sendUpdateBearing({ type: MessageType.Seed, epoch, update: Y.encodeStateAsUpdate(this.doc) });
  }

  private onFirstSync(): void {
    this.synced = true;
    this.onResync();
    for (const w of this.startWaiters.splice(0)) w.resolve();
  }

  private onResync(): void {
    if (!this.bound) {
      this.opts.binding.bind(this.doc, this.awareness, this.undo);
      this.bound = true;
      this.reapplyEdits();
    }
    // Edits this client kept from before it was read-only (offline storage, a token that changed to `read`) will
    // never be taken by the server: the editor shows the shared document instead (S17).
    if (this.readOnly && this.tracker.pending > 0) this.revertToShared();
    this.goOnline();
  }

  /** After a reset, writes the captured unsynced edits onto the new session's content as new local edits. */
  private reapplyEdits(): void {
    const patches = this.reapply;
    const name = this.opts.binding.textName;
    this.reapply = null;
    if (!patches || !name) return;
    const ytext = this.doc.getText(name);
    const merged = applyEdits(patches, ytext.toString());
    this.doc.transact(() => writeDifference(ytext, merged), REAPPLY_ORIGIN);
  }

  /** Seeds a new session with the host's stored copy plus this client's unsynced edits (hook, P8). */
  private async seedFromHostCopy(epoch: number, patches: Patches, name: string): Promise<void> {
    let base: string | null = null;
    try {
      base = (await this.opts.fetchHostCopy?.()) ?? null;
    } catch (err) {
      this.report(new CoeditError('session_reset', `fetchDocOnNetworkReconnect failed (${(err as Error).message}); seeding from the editor`, false));
    }
    if (this.stopped || epoch !== this.epoch) return;
    this.reapply = null;
    if (!this.bound) {
      const ytext = this.doc.getText(name);
      this.doc.transact(() => {
        if (base === null) this.opts.binding.seed(this.doc);
        else ytext.insert(0, applyEdits(patches, base));
      }, SEED_ORIGIN);
      this.opts.binding.bind(this.doc, this.awareness, this.undo);
      this.bound = true;
    }
    this.sendUpdateBearing({ type: MessageType.Seed, epoch, update: Y.encodeStateAsUpdate(this.doc) });
  }

  private goOnline(): void {
    this.backoff.reset();
    this.reportedOutage = false;
    // Local edits made between our step2 reply and now were sent by nobody: send them (duplicates are harmless).
    if (this.tracker.hasUnsent() && this.serverStateVector && !this.readOnly) {
      this.sendUpdateBearing({ type: MessageType.Sync, step: SyncStep.Update, update: Y.encodeStateAsUpdate(this.doc, this.serverStateVector) });
    }
    this.setState('online');
    // A token refreshed while this connection joined: the server still holds the older one.
    if (this.token !== undefined && this.token !== this.sentToken) this.sendToken(this.token);
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
      if (name) this.reapply = captureEdits(this.confirmed.text(name), this.doc.getText(name).toString());
      this.report(new CoeditError(
        'session_reset',
        `the collaboration session was restarted while this client had ${pending} unsaved edit(s); ` +
          (name || this.bound ? 'they are re-applied on top of the new session' : 'they are kept only if this client seeds the new session'),
        false,
      ));
    }
    this.opts.binding.unbind();
    this.bound = false;
    this.keptContent = false;
    this.detachDoc();
    this.doc = new Y.Doc();
    this.awareness = new Awareness(this.doc);
    this.tracker = new AckTracker();
    this.confirmed = this.newConfirmedState();
    this.attachDoc();
    void this.opts.persistence?.reset(this.doc, this.confirmed.doc, epoch);
  }


  // ---- document and presence ----

  /** True while a remote update is being applied: local transactions made meanwhile are Yjs' own cleanups. */
  private applyingRemote = false;

  private readonly onDocUpdate = (update: Uint8Array, origin: unknown, _doc: Y.Doc, tr: Y.Transaction): void => {
    if (this.loading) return; // offline persistence replaying what it kept: neither an edit nor confirmed
    if (origin === this || !tr.local) {
      this.confirmed.remote(update);
      this.opts.emit('content_changed', { source: 'remote' });
      return;
    }
    if (this.readOnly) {
      // S17: the server refuses every change of a read-only client, so none is sent or counted. One made in the
      // editor (a script, an undo, forceSync …) is reverted at once: the editor is rebound to the shared document.
      // Yjs' own formatting cleanup after a remote update is not a change of this user (every peer makes it).
      if (!(origin === null && this.applyingRemote)) this.revertToShared();
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
    if (this.state === 'online') {
      this.sendUpdateBearing({ type: MessageType.Sync, step: SyncStep.Update, update });
    }
    this.emitStatus();
  };

  private readonly onAwarenessUpdate = (
    changes: { added: number[]; updated: number[]; removed: number[] },
    origin: unknown,
  ): void => {
    if (origin === 'local' && this.state === 'online') {
      const ids = [...changes.added, ...changes.updated, ...changes.removed];
      this.send({ type: MessageType.Awareness, update: encodeAwarenessUpdate(this.awareness, ids) });
    }
  };

  /** Another user's forceSync replaced the content: undoing into the old content would resurrect it. */
  private readonly onMetaChange = (event: Y.YMapEvent<unknown>): void => {
    if (event.keysChanged.has(META_REPLACED_KEY) && !event.transaction.local) this.undo.manager.clear();
  };

  private readonly onAwarenessChange = (): void => {
    this.opts.emit('presence', this.getPresence());
    const users = this.collectUsers();
    const signature = JSON.stringify(users.map((u) => [u.user, u.color, u.joinTime.getTime(), u.self]));
    if (signature === this.usersSignature) return;
    this.usersSignature = signature;
    this.opts.emit('users_update', users);
  };

  private attachDoc(): void {
    // One undo manager per doc: a replaced doc (session reset) starts with empty stacks.
    this.undo = new LocalUndo(this.doc);
    this.doc.on('update', this.onDocUpdate);
    this.doc.getMap(META_MAP).observe(this.onMetaChange);
    this.awareness.on('update', this.onAwarenessUpdate);
    this.awareness.on('change', this.onAwarenessChange);
  }

  private detachDoc(): void {
    this.doc.off('update', this.onDocUpdate);
    this.doc.getMap(META_MAP).unobserve(this.onMetaChange);
    this.awareness.off('update', this.onAwarenessUpdate);
    this.awareness.off('change', this.onAwarenessChange);
    this.awareness.destroy();
    this.undo.destroy();
    this.doc.destroy();
    this.confirmed.destroy();
  }

  private collectUsers(): SessionUser[] {
    const users: Array<SessionUser & { clientId: number }> = [];
    this.awareness.getStates().forEach((state, clientId) => {
      const s = state as { user?: unknown; color?: unknown; joinTime?: unknown };
      if (!s.user || typeof s.user !== 'object' || typeof s.color !== 'string' || typeof s.joinTime !== 'number') return;
      users.push({ clientId, user: s.user as UserIdentity, color: s.color, joinTime: new Date(s.joinTime), self: clientId === this.doc.clientID });
    });
    users.sort((a, b) => a.joinTime.getTime() - b.joinTime.getTime() || a.clientId - b.clientId);
    return users.map(({ clientId: _c, ...u }) => u);
  }

  /** Renews this client's awareness state and drops peers that stopped renewing theirs (a frozen tab, a lost network). */
  private checkPresence(now: number): void {
    const awareness = this.awareness;
    const own = awareness.meta.get(this.doc.clientID);
    if (this.state === 'online' && awareness.getLocalState() !== null && own && now - own.lastUpdated >= PRESENCE_RENEW_MS) {
      awareness.setLocalState(awareness.getLocalState());
    }
    const silent: number[] = [];
    awareness.getStates().forEach((_state, clientId) => {
      const meta = awareness.meta.get(clientId);
      if (clientId !== this.doc.clientID && meta && now - meta.lastUpdated >= PRESENCE_TIMEOUT_MS) silent.push(clientId);
    });
    if (silent.length > 0) removeAwarenessStates(awareness, silent, 'timeout');
  }

  private dropRemotePresence(): void {
    const remote = [...this.awareness.getStates().keys()].filter((id) => id !== this.doc.clientID);
    if (remote.length > 0) removeAwarenessStates(this.awareness, remote, 'connection-lost');
  }

  // ---- read-only view (RELIABILITY.md S17) ----

  /** The server granted only `read` on this connection. */
  private get readOnly(): boolean {
    return this.welcome?.permission === 'read';
  }

  /** A revert to the shared document is scheduled, or running (a bind that writes must not schedule another). */
  private reverting = false;

  /**
   * Schedules `showShared` for the end of the current task: the editor's own transaction (the change being
   * reverted) and its observers must finish before the doc they run on is replaced; nothing is drawn meanwhile.
   */
  private revertToShared(): void {
    if (this.reverting || !this.bound) return;
    this.reverting = true;
    void Promise.resolve().then(() => {
      try {
        if (!this.stopped && this.bound && this.readOnly) this.showShared();
      } finally {
        this.reverting = false;
      }
    });
  }

  /**
   * Replaces the doc, which holds a refused local change, with a new one holding exactly the server-confirmed
   * state, and rebinds the editor to it, which then shows the shared document. Undoing the change inside the same
   * doc would not do: Yjs cannot revive deleted items, an undo re-inserts copies, and a collaborator's later edits
   * anchored inside the deleted text would then land elsewhere for this reader than for everyone else. The new doc
   * keeps this client's id (presence is keyed by it on the server; the refused items were never sent anywhere) and
   * the awareness states, so peers see nothing of this.
   */
  private showShared(): void {
    const refused = this.tracker.pending;
    if (refused > 0) {
      // Not one of them can be stored: they stop counting as pending (`saved` is true again). This connection has
      // no unacked message left but its empty step2 reply, so the new tracker's empty count loses nothing.
      this.tracker = new AckTracker();
      this.report(new CoeditError('access_denied', `this connection is read-only: ${refused} unsaved edit(s) made before were discarded`, false));
    }
    const shared = Y.encodeStateAsUpdate(this.confirmed.doc);
    const clientId = this.doc.clientID;
    const local = this.awareness.getLocalState();
    const peers = [...this.awareness.getStates().keys()].filter((id) => id !== clientId);
    const peerStates = peers.length > 0 ? encodeAwarenessUpdate(this.awareness, peers) : null;
    this.opts.binding.unbind();
    this.detachDoc();
    this.doc = new Y.Doc();
    this.doc.clientID = clientId;
    this.awareness = new Awareness(this.doc);
    this.awareness.setLocalState(null);
    this.confirmed = this.newConfirmedState();
    this.attachDoc();
    if (this.epoch !== undefined) void this.opts.persistence?.reset(this.doc, this.confirmed.doc, this.epoch);
    applyRemoteUpdate(this.doc, shared, this);
    // Yjs gives a doc a new client id when a remote update carries structs of its own id (it takes them for another
    // client's). Here they are this client's own confirmed edits (from before it was read-only): the id stays, and
    // its next edit continues after them.
    this.doc.clientID = clientId;
    if (peerStates) applyAwarenessUpdate(this.awareness, peerStates, this);
    if (local !== null) this.awareness.setLocalState(local);
    this.opts.binding.bind(this.doc, this.awareness, this.undo);
    if (refused > 0) this.emitStatus();
  }

  // ---- state and errors ----

  private setState(state: SessionState): void {
    if (this.state === state) return;
    this.state = state;
    this.emitStatus();
  }

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
    this.stopped = true;
    this.refresher?.stop();
    if (this.reconnectTimer !== null) clearTimeout(this.reconnectTimer);
    if (this.heartbeat !== null) clearInterval(this.heartbeat);
    this.reconnectTimer = this.heartbeat = null;
    const socket = this.socket;
    this.socket = null;
    if (socket && socket.readyState <= SOCKET_OPEN) socket.close(CloseCode.Normal, 'stopped');
    // The editor goes back to the host as the session found it: editable (a `read` token had locked it).
    if (this.welcome?.permission === 'read') this.opts.binding.setReadOnly?.(false);
    this.opts.binding.unbind();
    this.bound = false;
    // Everything stored on the server: nothing to keep offline. Else keep it for the next page load (R3).
    if (this.tracker.pending === 0) void this.opts.persistence?.clear();
    else this.opts.persistence?.close();
    this.detachDoc();
    if (this.usersSignature !== '' && this.usersSignature !== '[]') {
      // A stopped session is connected to nobody: say so instead of leaving the last list standing.
      this.usersSignature = '[]';
      this.opts.emit('users_update', []);
    }
    this.setState('stopped');
    const reason = error ?? new CoeditError('connection_lost', 'the session was stopped before it synced', false);
    for (const w of this.startWaiters.splice(0)) w.reject(reason);
    for (const w of this.savedWaiters.splice(0)) w();
  }

  /**
   * A fresh token (the config's token function, called again before `exp`): sent on the open connection, which the
   * server then keeps open until the new `exp` (P2b), and used by every later Hello.
   */
  setToken(token: string): void {
    this.token = token;
    if (this.state === 'online') this.sendToken(token);
  }

  private sendToken(token: string): void {
    if (!this.socket || this.socket.readyState !== SOCKET_OPEN) return;
    this.send({ type: MessageType.Token, token });
    this.sentToken = token;
  }

  /** The permission the server granted, once welcomed. */
  get permission(): 'edit' | 'read' | undefined {
    return this.welcome?.permission;
  }
}

/** A Yjs update (v1) with no structs and no deletions. */
const EMPTY_UPDATE = new Uint8Array([0, 0]);

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
