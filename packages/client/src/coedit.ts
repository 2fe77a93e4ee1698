/**
 * `Coedit` — the public session object of API.md. It validates config, binds one editor through its adapter and
 * runs a `Session` (the DOM-free core) with the browser's WebSocket. Events and hooks are delivered from here.
 */
import type { ErrorCode } from 'wave-protocol';
import { normalizeConfig, type EditorKind, type NormalizedConfig } from './core/config.js';
import { Emitter } from './core/emitter.js';
import { CoeditError, invalidConfig, type ErrorEvent } from './core/errors.js';
import { Session, type SessionEvents, type SessionState, type SessionUser } from './core/session.js';
import type { SocketLike } from './core/socket.js';
import type { AdapterFactory, EditorAdapter } from './adapters/types.js';
import { IndexedDbPersistence } from './persistence/indexeddb.js';
import { PresenceUI, type PresencePart } from './presence/ui.js';

export type CoeditState = 'idle' | 'initialized' | SessionState;

export interface CoeditEvents {
  content_changed: { source: 'local' | 'remote' };
  users_update: SessionUser[];
  error: ErrorEvent;
  status: { state: CoeditState; saved: boolean; pending: number };
  access_changed: { permission: 'edit' | 'read' };
}

export type AdapterTable = Partial<Record<EditorKind, AdapterFactory>>;

/** Editors already bound to a session object: a second session on the same editor is a config mistake. */
const boundEditors = new WeakSet<object>();

let defaultServerUrl: string | undefined;

/** Set by the CDN build from its own `<script src>`: the server that served the script is the Wave server. */
export function setDefaultServerUrl(url: string | undefined): void {
  defaultServerUrl = url;
}

/**
 * Base class holding everything but the set of editor adapters, so that the full bundle and the Quill-only
 * provider package share one implementation.
 */
export class CoeditBase {
  private readonly emitter = new Emitter<CoeditEvents>((err, name) =>
    console.error(`[wave] a "${String(name)}" listener threw:`, err),
  );
  private config: NormalizedConfig | undefined;
  private adapter: EditorAdapter | undefined;
  private session: Session | undefined;
  private state: CoeditState = 'idle';
  private lastUsers: SessionUser[] = [];
  private presence: PresenceUI | undefined;
  /** What the presence UI shows (config `showUI`/`showCursor`/`showPointer`, then the show/hide methods). */
  private readonly shown: Record<PresencePart, boolean> = { ui: true, cursors: true, pointers: false };
  /** Avatars: `ui.show()` / `ui.hide()`. */
  readonly ui = this.toggle('ui');
  /** Remote carets and selections: `cursors.show()` / `cursors.hide()`. */
  readonly cursors = this.toggle('cursors');
  /** Alias of `cursors` (Codox Wave 2.x). */
  readonly cursor = this.cursors;
  /** Remote pointers and clicks: `pointers.show()` / `pointers.hide()`. */
  readonly pointers = this.toggle('pointers');
  private readonly onOnline = (): void => this.session?.retryNow();
  private readonly onOffline = (): void => this.session?.networkLost();
  /** While edits are unsaved, leaving the page asks for confirmation (config `confirmLeave`, default on). */
  private readonly onBeforeUnload = (event: BeforeUnloadEvent): void => {
    if (!this.config?.confirmLeave || !this.session || this.session.getStatus().saved) return;
    event.preventDefault();
    event.returnValue = ''; // older browsers need a value to show the dialog
  };

  constructor(private readonly adapters: AdapterTable) {}

  /**
   * Validates `config` and binds the editor; starts unless `autoStart === false`.
   * Resolves when initialised, or when synced if it starts. Rejects with `CoeditError`.
   */
  async init(config: unknown): Promise<void> {
    try {
      this.bindConfig(config);
    } catch (err) {
      throw this.reject(err);
    }
    if (this.config?.autoStart) await this.start();
  }

  /** Starts (or rejoins after `stop()`); with a config it is `init(config)` + start. Resolves on the first full sync. */
  async start(config?: unknown): Promise<void> {
    if (config !== undefined) {
      try {
        this.bindConfig(config);
      } catch (err) {
        throw this.reject(err);
      }
    }
    const cfg = this.config;
    const adapter = this.adapter;
    if (!cfg || !adapter) throw this.reject(new CoeditError('invalid_config', 'config: call init(config) or start(config) first', true));
    if (this.session && this.state !== 'stopped') throw this.reject(new CoeditError('invalid_config', 'start: this session is already started; call stop() first', true));

    const serverUrl = cfg.serverUrl ?? defaultServerUrl ?? (typeof location !== 'undefined' ? location.origin : undefined);
    if (!serverUrl || !/^https?:/.test(serverUrl)) throw this.reject(invalidConfig('serverUrl', "the Wave server's http(s) origin", serverUrl));
    let token: string | undefined;
    if (typeof cfg.token === 'function') {
      try {
        token = await cfg.token();
      } catch (err) {
        throw this.reject(new CoeditError('validation_error', `token: the token function failed: ${(err as Error).message}`, true));
      }
    } else token = cfg.token;
    if (adapter.ready) {
      try {
        await adapter.ready; // its binding library, loaded on demand (CodeMirror): bind() needs it synchronously
      } catch (err) {
        throw this.reject(err);
      }
    }

    const session = new Session({
      wsUrl: `${serverUrl.replace(/^http/, 'ws')}/v2/ws`,
      apiKey: cfg.apiKey,
      docId: cfg.docId,
      user: cfg.user,
      ...(token !== undefined ? { token } : {}),
      ...(typeof cfg.token === 'function' ? { refreshToken: cfg.token } : {}),
      binding: adapter,
      socketFactory: (url) => new WebSocket(url) as unknown as SocketLike,
      emit: (name, payload) => this.fromSession(name, payload),
      fetchHostCopy: cfg.hooks.fetchDocOnNetworkReconnect ? () => this.fetchHostCopy() : undefined,
      persistence: cfg.offline && IndexedDbPersistence.available()
        ? new IndexedDbPersistence(`wave:${serverUrl}:${cfg.apiKey}:${cfg.docId}`)
        : undefined,
    });
    this.session = session;
    this.state = 'connecting';
    this.startPresence(session, adapter, cfg);
    this.listenToWindow(true);
    try {
      await session.start();
    } catch (err) {
      throw err instanceof CoeditError ? err : this.reject(err);
    }
  }

  /** Sends pending edits (bounded wait), leaves, removes listeners; the editor keeps its content. */
  async stop(): Promise<void> {
    const session = this.session;
    if (!session) return;
    await session.stop();
    this.listenToWindow(false);
  }

  /**
   * Sets the shared document to `content` for every collaborator in one step (the host restored an old version).
   * `content` is in the editor's format: a string (text, B), a Delta or HTML (C), HTML (A, D). Peers see one
   * `content_changed { source: 'remote' }` and their undo stacks are cleared. Resolves once stored on the server.
   */
  async forceSync(content: unknown): Promise<void> {
    const session = this.session;
    const adapter = this.adapter;
    if (!session || !adapter) throw this.reject(new CoeditError('invalid_config', 'forceSync: start() the session first', true));
    const replace = adapter.replaceContent?.bind(adapter);
    if (!replace) throw this.reject(new CoeditError('invalid_config', `forceSync: not available for app '${adapter.kind}' in this version`, true));
    try {
      await session.replaceContent((doc) => replace(doc, content));
    } catch (err) {
      throw this.reject(err);
    }
  }

  private toggle(part: PresencePart): { show(): void; hide(): void } {
    return {
      show: () => this.setShown(part, true),
      hide: () => this.setShown(part, false),
    };
  }

  private setShown(part: PresencePart, on: boolean): void {
    this.shown[part] = on;
    this.presence?.setShown(part, on);
  }

  /** Draws presence for this session (browser only; an adapter without presence support draws nothing). */
  private startPresence(session: Session, adapter: EditorAdapter, cfg: NormalizedConfig): void {
    this.presence?.destroy();
    this.presence = undefined;
    if (typeof document === 'undefined' || typeof requestAnimationFrame === 'undefined' || !adapter.createPresence) return;
    try {
      this.presence = new PresenceUI(adapter.createPresence(), session, {
        avatars: cfg.avatars,
        cursorAlwaysOn: cfg.cursorAlwaysOn,
        pointerShape: cfg.pointers.shape,
      }, this.shown);
    } catch (err) {
      console.error('[wave] the presence UI could not start:', err);
    }
  }

  on<K extends keyof CoeditEvents>(name: K, fn: (payload: CoeditEvents[K]) => void): () => void {
    return this.emitter.on(name, fn);
  }

  off<K extends keyof CoeditEvents>(name: K, fn: (payload: CoeditEvents[K]) => void): void {
    this.emitter.off(name, fn);
  }

  private listenToWindow(on: boolean): void {
    if (typeof window === 'undefined') return;
    const method = on ? 'addEventListener' : 'removeEventListener';
    window[method]('online', this.onOnline);
    window[method]('offline', this.onOffline);
    window[method]('beforeunload', this.onBeforeUnload);
  }

  /** The current `users_update` snapshot. */
  getUsers(): SessionUser[] {
    return this.lastUsers;
  }

  getState(): CoeditState {
    return this.state;
  }

  private bindConfig(input: unknown): void {
    if (this.config) throw new CoeditError('invalid_config', 'init: this session object is already initialised; create a new Coedit() for another editor', true);
    const config = normalizeConfig(input);
    const factory = this.adapters[config.app];
    if (!factory) throw invalidConfig('app', `an editor kind included in this build (${Object.keys(this.adapters).join(', ')})`, config.app);
    const editor = config.editor as object;
    if (boundEditors.has(editor)) throw invalidConfig('editor', 'an editor not already bound to another Wave session (call stop() on that one first)');
    const adapter = factory(editor);
    boundEditors.add(editor);
    this.config = config;
    this.adapter = adapter;
    this.shown.ui = config.showUI;
    this.shown.cursors = config.showCursor;
    this.shown.pointers = config.showPointer;
    this.state = 'initialized';
  }

  private fromSession<K extends keyof SessionEvents>(name: K, payload: SessionEvents[K]): void {
    const hooks = this.config?.hooks ?? {};
    switch (name) {
      case 'status': {
        const status = payload as SessionEvents['status'];
        this.state = status.state;
        // Stopped (stop() or a fatal error): nobody is shown; a later start() builds a new Session.
        if (status.state === 'stopped') {
          this.lastUsers = [];
          this.listenToWindow(false);
          this.presence?.destroy();
          this.presence = undefined;
        }
        this.presence?.setOnline(status.state === 'online');
        this.emitter.emit('status', { ...status });
        break;
      }
      case 'content_changed': {
        const data = payload as SessionEvents['content_changed'];
        this.presence?.contentChanged();
        this.emitter.emit('content_changed', { source: data.source });
        this.callHook(() => hooks.contentChanged?.({ source: data.source }));
        break;
      }
      case 'users_update': {
        const users = payload as SessionUser[];
        this.lastUsers = users;
        this.presence?.setUsers(users);
        this.emitter.emit('users_update', users);
        this.callHook(() => hooks.usersUpdate?.(users));
        break;
      }
      case 'error':
        this.emitter.emit('error', (payload as CoeditError).toEvent());
        break;
      case 'presence':
        this.presence?.setStates(payload as SessionEvents['presence']);
        break;
      case 'access_changed':
        this.emitter.emit('access_changed', payload as SessionEvents['access_changed']);
        break;
    }
  }

  /**
   * `hooks.fetchDocOnNetworkReconnect()` as plain text (a string, or a Delta's text inserts with a line-break embed as
   * "\n" — Quill's `wave-break` is the shared text's `break` — as the plain view shows it); null when unusable.
   */
  private async fetchHostCopy(): Promise<string | null> {
    const result = await this.config?.hooks.fetchDocOnNetworkReconnect?.();
    const content: unknown = result?.content;
    if (typeof content === 'string') return content;
    const ops = (content as { ops?: unknown } | null)?.ops;
    if (Array.isArray(ops)) return ops.map((op: { insert?: unknown }) => (typeof op.insert === 'string' ? op.insert : isLineBreak(op.insert) ? '\n' : '')).join('');
    return null;
  }

  private callHook(call: () => void): void {
    try {
      call();
    } catch (err) {
      console.error('[wave] a hook threw:', err);
    }
  }

  /** Emits `error` for a caller mistake and returns the error to throw. */
  private reject(err: unknown): CoeditError {
    const error = err instanceof CoeditError ? err : new CoeditError('server_error' as ErrorCode, String((err as Error)?.message ?? err), true);
    this.emitter.emit('error', error.toEvent());
    return error;
  }
}

/** A Delta embed that is a line break inside a block: `{ break: true }` in the shared text, `{ 'wave-break': true }` in Quill. */
function isLineBreak(embed: unknown): boolean {
  const e = embed as Record<string, unknown> | null;
  return typeof e === 'object' && e !== null && (e.break === true || e['wave-break'] === true);
}
