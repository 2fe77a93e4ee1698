/**
 * The shapes a `Session` (session.ts) is built from and reports: the editor binding it drives, its options, its
 * events and the transaction origins it gives its own writes.
 */
import type * as Y from 'yjs';
import type { Awareness } from 'y-protocols/awareness';
import type { HelloPayload, UserIdentity } from 'wave-protocol';
import type { CoeditError } from './errors.js';
import type { LocalPersistence } from './persistence.js';
import type { SocketFactory } from './socket.js';
import type { LocalUndo } from './undo.js';

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
   * session reset re-applies unsynced edits as text; without it they are kept only when this client seeds.
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
  /**
   * The host's stored copy (hook `fetchDocOnNetworkReconnect`), asked for when this client must seed a new session
   * while it holds unsynced edits; they are re-applied on top of it. Null or absent: the editor's content seeds.
   */
  fetchHostCopy?: () => Promise<string | null>;
  /** Keeps the document across page loads (offline edits survive a closed tab, R3). */
  persistence?: LocalPersistence;
}
