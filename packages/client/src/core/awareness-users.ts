/**
 * Reading and upkeep of a session's awareness (y-protocols): the user list, the presence states for the presence
 * UI, and liveness. Identity fields (`user`, `color`, `joinTime`) are stamped by the server (P11); a state without
 * them is not a user.
 */
import { removeAwarenessStates, type Awareness } from 'y-protocols/awareness';
import type { UserIdentity } from 'wave-protocol';
import type { PresenceState, SessionUser } from './session-types.js';

/**
 * Presence liveness (issue #4: a silent loss disappears from peers within 30 s). Each client re-announces its state
 * this often (y-protocols' own renewal is 15 s) …
 */
const PRESENCE_RENEW_MS = 8_000;
/**
 * … and drops a peer's state not renewed for this long. Both checks run every heartbeat tick (5 s, session.ts), so a
 * live peer renews at least every 8 + 5 s (7 s of margin for late timers), and one that went silent is gone after at
 * most 20 + 5 s.
 */
const PRESENCE_TIMEOUT_MS = 20_000;

/** The users connected (self included; `selfId` is this client's id), in join order, ties by client id. */
export function collectUsers(awareness: Awareness, selfId: number): SessionUser[] {
  const users: Array<SessionUser & { clientId: number }> = [];
  awareness.getStates().forEach((state, clientId) => {
    const s = state as { user?: unknown; color?: unknown; joinTime?: unknown };
    if (!s.user || typeof s.user !== 'object' || typeof s.color !== 'string' || typeof s.joinTime !== 'number') return;
    users.push({ clientId, user: s.user as UserIdentity, color: s.color, joinTime: new Date(s.joinTime), self: clientId === selfId });
  });
  users.sort((a, b) => a.joinTime.getTime() - b.joinTime.getTime() || a.clientId - b.clientId);
  return users.map(({ clientId: _c, ...u }) => u);
}

/** The awareness states of everyone connected (self included), for the presence UI. */
export function presenceStates(awareness: Awareness, selfId: number): PresenceState[] {
  const out: PresenceState[] = [];
  awareness.getStates().forEach((state, clientId) => {
    if (state && typeof state === 'object') out.push({ clientId, self: clientId === selfId, state: state as Record<string, unknown> });
  });
  return out;
}

/**
 * Renews this client's awareness state (when `online`) and drops peers that stopped renewing theirs (a frozen tab,
 * a lost network). `now` in milliseconds since the epoch.
 */
export function checkPresence(awareness: Awareness, selfId: number, online: boolean, now: number): void {
  const own = awareness.meta.get(selfId);
  if (online && awareness.getLocalState() !== null && own && now - own.lastUpdated >= PRESENCE_RENEW_MS) {
    awareness.setLocalState(awareness.getLocalState());
  }
  const silent: number[] = [];
  awareness.getStates().forEach((_state, clientId) => {
    const meta = awareness.meta.get(clientId);
    if (clientId !== selfId && meta && now - meta.lastUpdated >= PRESENCE_TIMEOUT_MS) silent.push(clientId);
  });
  if (silent.length > 0) removeAwarenessStates(awareness, silent, 'timeout');
}

/** Removes every state but this client's: the connection is gone, and with it what peers announced on it. */
export function dropRemotePresence(awareness: Awareness, selfId: number): void {
  const remote = [...awareness.getStates().keys()].filter((id) => id !== selfId);
  if (remote.length > 0) removeAwarenessStates(awareness, remote, 'connection-lost');
}
