/**
 * A session's lifecycle as one state machine: the phases, the allowed transitions, and the facts derived from them.
 *
 *   connecting ──synced──▶ online ──connection lost──▶ offline ──synced──▶ online …
 *   connecting ──attempt failed──▶ connecting (the first failure is reported: `outageReported`)
 *   offline ──attempt failed──▶ offline
 *   any but stopped ──stop() or a fatal error──▶ stopped (final)
 *
 * - `connecting`: not synced yet on this session (the first connection, or retries before the first sync).
 * - `online`: synced on the current connection; edits and presence go out as they happen.
 * - `offline`: synced before; the connection is lost and the session reconnects. The outage is reported.
 * - `stopped`: released; nothing happens any more.
 *
 * The phase is the `state` of `SessionStatus`. An outage (`connection_lost`, or `rate_limited`) is reported once:
 * when it starts, until the session is online again. Facts that vary independently of the phase are not in it:
 * whether the editor is bound to the current doc (a session reset unbinds it while offline; a seed binds it while
 * connecting), whether a reconnect waits for the token function, whether offline storage is loading, whether a
 * read-only revert is scheduled (session.ts, connection.ts and read-only-view.ts keep those).
 */
import type { SessionState } from './session-types.js';

export type SessionPhase =
  | { readonly name: 'connecting'; readonly outageReported: boolean }
  | { readonly name: 'online' }
  | { readonly name: 'offline' }
  | { readonly name: 'stopped' };

/**
 * Allowed transitions, by phase name. `online → online`: a second step2 on the same connection (a server answering
 * again) changes nothing. `stopped` is final.
 */
const ALLOWED: Readonly<Record<SessionState, readonly SessionState[]>> = {
  connecting: ['connecting', 'online', 'stopped'],
  online: ['online', 'offline', 'stopped'],
  offline: ['offline', 'online', 'stopped'],
  stopped: [],
};

/** A transition the state machine does not allow: a broken invariant in the session, not a caller mistake. */
export class IllegalTransition extends Error {
  override readonly name = 'IllegalTransition';
}

export class SessionLifecycle {
  private current: SessionPhase = { name: 'connecting', outageReported: false };

  get state(): SessionState {
    return this.current.name;
  }

  get online(): boolean {
    return this.current.name === 'online';
  }

  get stopped(): boolean {
    return this.current.name === 'stopped';
  }

  /** The session has synced at least once: a later step2 is a resync. */
  get synced(): boolean {
    return this.current.name === 'online' || this.current.name === 'offline';
  }

  /** Synced on the current connection. True when the phase changed (a status to emit). */
  goOnline(): boolean {
    return this.move({ name: 'online' });
  }

  /**
   * The connection was lost, or an attempt failed. Returns whether the phase changed (a status to emit) and
   * whether this starts an outage, to be reported once.
   */
  connectionLost(): { changed: boolean; newOutage: boolean } {
    const from = this.current;
    if (from.name === 'connecting') {
      this.move({ name: 'connecting', outageReported: true });
      return { changed: false, newOutage: !from.outageReported };
    }
    // From online: a new outage. From offline: it was reported when it began.
    const changed = this.move({ name: 'offline' });
    return { changed, newOutage: changed };
  }

  /** Stops the session (final). */
  stop(): void {
    this.move({ name: 'stopped' });
  }

  /** Enters `to`; throws `IllegalTransition` for a transition `ALLOWED` does not list. True when the phase name changed. */
  private move(to: SessionPhase): boolean {
    const from = this.current;
    if (!ALLOWED[from.name].includes(to.name)) throw new IllegalTransition(`session: ${from.name} → ${to.name} is not a transition`);
    this.current = to;
    return from.name !== to.name;
  }
}
