/**
 * The read-only view (RELIABILITY.md S17): a connection granted only `read` never has a local change taken by the
 * server, so one made in the editor (a script, an undo, forceSync …) is reverted at once and the editor shows the
 * shared document again. The revert replaces the doc, which holds the refused change, with a new one holding
 * exactly the server-confirmed state, and rebinds the editor to it. Undoing the change inside the same doc would not
 * do: Yjs cannot revive deleted items, an undo re-inserts copies, and a collaborator's later edits anchored inside
 * the deleted text would then land elsewhere for this reader than for everyone else. The new doc keeps this client's
 * id (presence is keyed by it on the server; the refused items were never sent anywhere) and the awareness states,
 * so peers see nothing of this.
 */
import * as Y from 'yjs';
import { applyAwarenessUpdate, encodeAwarenessUpdate, type Awareness } from 'y-protocols/awareness';

/** The session as the read-only view sees it. */
export interface ReadOnlyViewHost {
  /** The editor is bound to the current doc: there is something to revert. */
  bound(): boolean;
  /** The revert still applies when it runs: the session runs, the editor is bound, the connection is read-only. */
  applies(): boolean;
  /** Runs the revert (the session's `showShared`, which calls `rebuildShared`). */
  show(): void;
}

export class ReadOnlyView {
  /** A revert is scheduled, or running (a bind that writes must not schedule another). */
  private reverting = false;

  constructor(private readonly host: ReadOnlyViewHost) {}

  /**
   * Schedules the revert for the end of the current task: the editor's own transaction (the change being reverted)
   * and its observers must finish before the doc they run on is replaced; nothing is drawn meanwhile.
   */
  revert(): void {
    if (this.reverting || !this.host.bound()) return;
    this.reverting = true;
    void Promise.resolve().then(() => {
      try {
        if (this.host.applies()) this.host.show();
      } finally {
        this.reverting = false;
      }
    });
  }
}

/** The session's current doc and awareness, and how to replace and rebind them (session.ts). */
export interface SharedViewParts {
  readonly doc: Y.Doc;
  readonly awareness: Awareness;
  /** The server-confirmed state (`ConfirmedState.doc`), encoded. */
  readonly shared: Uint8Array;
  /** Origin of the writes into the new doc and awareness: remote, not this user's. */
  readonly origin: unknown;
  /** Replaces the doc and awareness by empty ones keeping the client id, the editor unbound; returns the new ones. */
  replace(): { doc: Y.Doc; awareness: Awareness };
  /** Binds the editor to the new doc. */
  bind(): void;
}

/** Replaces the doc by one holding exactly the shared state, keeping the client id and every awareness state. */
export function rebuildShared(parts: SharedViewParts): void {
  const clientId = parts.doc.clientID;
  const local = parts.awareness.getLocalState();
  const peers = [...parts.awareness.getStates().keys()].filter((id) => id !== clientId);
  const peerStates = peers.length > 0 ? encodeAwarenessUpdate(parts.awareness, peers) : null;
  const { doc, awareness } = parts.replace();
  Y.applyUpdate(doc, parts.shared, parts.origin);
  // Yjs gives a doc a new client id when a remote update carries structs of its own id (it takes them for another
  // client's). Here they are this client's own confirmed edits (from before it was read-only): the id stays, and
  // its next edit continues after them.
  doc.clientID = clientId;
  if (peerStates) applyAwarenessUpdate(awareness, peerStates, parts.origin);
  if (local !== null) awareness.setLocalState(local);
  parts.bind();
}
