/**
 * A session's presence: this client's presence fields (cursor, pointer …, kept across reconnects and session
 * resets), its awareness state once welcomed (identity fields stamped by the server, P11), and what goes out and
 * up: local awareness changes to the server while online, every change to the presence UI, the user list when it
 * changed. The awareness itself is the session's and is replaced with its doc; this reads it at each use.
 */
import { encodeAwarenessUpdate, type Awareness } from 'y-protocols/awareness';
import type { WelcomePayload } from 'wave-protocol';
import { checkPresence, collectUsers, dropRemotePresence, presenceStates } from './awareness-users.js';
import type { PresenceState, SessionOptions, SessionUser } from './session-types.js';

export interface SessionPresenceHost {
  /** The session's current awareness (replaced with its doc). */
  awareness(): Awareness;
  /** This client's id: its doc's `clientID`. */
  selfId(): number;
  /** The session is online: local changes are sent. */
  online(): boolean;
  /** Sends an awareness update to the server. */
  send(update: Uint8Array): void;
  emit: SessionOptions['emit'];
}

/** Identity fields: the server's (P11), never taken from `set`. */
const IDENTITY_FIELDS = ['user', 'color', 'joinTime'];

export class SessionPresence {
  private fields: Record<string, unknown> = {};
  /** The user list last emitted (`users_update`), so that only a change is emitted. */
  private usersSignature = '';

  constructor(private readonly host: SessionPresenceHost) {}

  /** Merges `fields` into this client's presence, and publishes it when `publish` (welcomed and running). */
  set(fields: Record<string, unknown>, publish: boolean): void {
    this.fields = { ...this.fields, ...fields };
    for (const key of IDENTITY_FIELDS) delete this.fields[key];
    const awareness = this.host.awareness();
    const local = awareness.getLocalState();
    if (!publish || local === null) return;
    awareness.setLocalState({ ...local, ...this.fields });
  }

  /** Welcomed: this client's state is its presence fields plus the identity the server stamped. */
  welcomed(welcome: WelcomePayload): void {
    this.host.awareness().setLocalState({ ...this.fields, user: welcome.user, color: welcome.color, joinTime: welcome.joinTime });
  }

  /** The awareness states of everyone connected (self included), for the presence UI. */
  states(): PresenceState[] {
    return presenceStates(this.host.awareness(), this.host.selfId());
  }

  users(): SessionUser[] {
    return collectUsers(this.host.awareness(), this.host.selfId());
  }

  /** Heartbeat tick: renews this client's state and drops silent peers (awareness-users.ts). */
  check(now: number): void {
    checkPresence(this.host.awareness(), this.host.selfId(), this.host.online(), now);
  }

  /** The connection is gone: so are the peers' states. */
  dropRemote(): void {
    dropRemotePresence(this.host.awareness(), this.host.selfId());
  }

  /** The awareness' `update` listener: local changes go to the server while online. */
  readonly onUpdate = (changes: { added: number[]; updated: number[]; removed: number[] }, origin: unknown): void => {
    if (origin === 'local' && this.host.online()) {
      const ids = [...changes.added, ...changes.updated, ...changes.removed];
      this.host.send(encodeAwarenessUpdate(this.host.awareness(), ids));
    }
  };

  /** The awareness' `change` listener: every change to the presence UI, the user list when it changed. */
  readonly onChange = (): void => {
    this.host.emit('presence', this.states());
    const users = this.users();
    const signature = JSON.stringify(users.map((u) => [u.user, u.color, u.joinTime.getTime(), u.self]));
    if (signature === this.usersSignature) return;
    this.usersSignature = signature;
    this.host.emit('users_update', users);
  };

  /** The session stopped: it is connected to nobody; say so instead of leaving the last list standing. */
  stopped(): void {
    if (this.usersSignature === '' || this.usersSignature === '[]') return;
    this.usersSignature = '[]';
    this.host.emit('users_update', []);
  }
}
