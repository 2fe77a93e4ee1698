/**
 * Withdrawn access ends open connections (S15). The store reports key changes made by any process (`watchKeys`:
 * the `keys revoke`/`keys update` CLI, another server); the guard then reads each changed key and has every open
 * connection of it re-check its access: revoked, origin no longer allowed, token now required and not given. A
 * connection that lost its access is closed with a fatal `validation_error` before anything else it sent is handled.
 *
 * Upgrades authorised while a change is being reported could read the old record and slip past the re-check; each
 * upgrade therefore notes the guard's `generation` before reading its key, and a connection opened after a newer
 * change was reported is re-checked at once (`opened`).
 */
import type { Logger } from '../log.js';
import { isOriginAllowed } from '../origin.js';
import type { KeyRecord, Store } from '../store/types.js';

/** Delay before reading a changed key again when the store failed to answer. */
const RETRY_MS = 1_000;

export interface GuardedConnection {
  readonly apiKey: string;
  /** Re-checks the connection against its key's current record (`undefined`: the key is gone). */
  keyChanged(key: KeyRecord | undefined): void;
}

/** What an open connection presented when it was authorised. */
export interface PresentedAccess {
  /** `Origin` and `Host` headers of the upgrade request. */
  origin: string | undefined;
  host: string | undefined;
  /** Whether the connection joined with a token; `undefined` while its Hello has not been checked yet. */
  token: boolean | undefined;
}

/** Why a connection that presented `access` may no longer use `key`, or `undefined` when it still may. */
export function accessWithdrawn(key: KeyRecord | undefined, access: PresentedAccess): string | undefined {
  if (key === undefined || key.revokedAt !== null) return 'this apiKey has been revoked';
  if (!isOriginAllowed(access.origin, key.origins, access.host)) {
    return `origin ${access.origin ?? ''} is no longer allowed for this apiKey (its --origin list changed)`;
  }
  if (access.token === false && key.requireToken) return 'this apiKey now requires a token (config token)';
  return undefined;
}

export class KeyGuard {
  /** Incremented for every reported change, before the changed key is read. */
  generation = 0;
  /** Per apiKey, the newest re-check started: results of older reads are dropped. */
  private readonly latest = new Map<string, number>();

  constructor(
    private readonly store: Pick<Store, 'findKey'>,
    private readonly connections: () => Iterable<GuardedConnection>,
    private readonly log: Logger,
  ) {}

  /** A key changed (`undefined`: any key may have). */
  changed(apiKey: string | undefined): void {
    this.generation++;
    const keys = new Set<string>();
    if (apiKey !== undefined) keys.add(apiKey);
    else for (const connection of this.connections()) keys.add(connection.apiKey);
    for (const key of keys) void this.recheck(key);
  }

  /** A connection authorised with a key read at `generation`: re-checked when a change was reported since. */
  opened(connection: GuardedConnection, generation: number): void {
    if (generation !== this.generation) void this.recheck(connection.apiKey, connection);
  }

  private async recheck(apiKey: string, only?: GuardedConnection): Promise<void> {
    const started = this.generation;
    if (!only) this.latest.set(apiKey, started);
    let record: KeyRecord | undefined;
    try {
      record = await this.store.findKey(apiKey);
    } catch (error) {
      // The change stands; read again until the store answers.
      this.log.error('re-reading a changed apiKey', error);
      setTimeout(() => (only ? this.opened(only, -1) : this.changed(apiKey)), RETRY_MS).unref();
      return;
    }
    if (!only && this.latest.get(apiKey) !== started) return;
    if (!only) this.latest.delete(apiKey);
    for (const connection of only ? [only] : this.connections()) {
      if (connection.apiKey === apiKey) connection.keyChanged(record);
    }
  }
}
