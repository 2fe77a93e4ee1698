/**
 * How long a token-authorised connection may stay open (S16). A connection joined with a token holds a lease that
 * ends when the newest token's `exp` plus the clock skew (tokens.ts) has passed; then `onExpired` closes it with a
 * fatal `validation_error`. The client extends the lease by sending a fresh token in-band (`Token`, PROTOCOL.md
 * P2b) before that; renewals are verified one at a time, in arrival order, so an older token verified late can never
 * replace a newer one.
 */
import { CLOCK_SKEW_SECONDS, verifyToken } from '../tokens.js';
import type { TokenCheck, TokenGrant } from '../tokens.js';

/** setTimeout's largest delay (about 24.8 days); a later deadline is re-armed in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export type RenewResult =
  | { ok: true }
  /** The fresh token grants another permission: the connection must rejoin to get it (`Welcome.permission`). */
  | { ok: false; permissionChanged: true }
  | (Extract<TokenCheck, { ok: false }> & { permissionChanged?: false });

export class TokenLease {
  private exp: number;
  private timer: NodeJS.Timeout | undefined;
  private renewals: Promise<unknown> = Promise.resolve();
  private ended = false;

  /**
   * `secret`: the key's secret the joining token was verified with, kept so that renewals cost no store query (a
   * key's secret never changes).
   */
  constructor(
    grant: TokenGrant,
    private readonly secret: string,
    private readonly docId: string,
    private readonly onExpired: (detail: string) => void,
  ) {
    this.exp = grant.exp;
    this.permission = grant.permission;
    this.arm();
  }

  /** The permission the connection joined with. */
  readonly permission: 'edit' | 'read';

  /** Seconds since the Unix epoch after which (plus the skew) the connection is closed. */
  get expiresAt(): number {
    return this.exp;
  }

  /**
   * Verifies `token` (for the same key and document) and, when it is valid for the same permission, moves the
   * deadline to its `exp`. Queued behind earlier renewals.
   */
  renew(token: string): Promise<RenewResult> {
    const result = this.renewals.then(async (): Promise<RenewResult> => {
      const check = await verifyToken(token, this.secret, this.docId);
      if (!check.ok) return check;
      if (check.grant.permission !== this.permission) return { ok: false, permissionChanged: true };
      if (this.ended) return { ok: true };
      this.exp = check.grant.exp;
      clearTimeout(this.timer);
      this.arm();
      return { ok: true };
    });
    this.renewals = result.catch(() => {});
    return result;
  }

  stop(): void {
    this.ended = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    if (this.ended) return;
    const remaining = (this.exp + CLOCK_SKEW_SECONDS) * 1000 - Date.now();
    if (remaining <= 0) {
      this.ended = true;
      this.onExpired(
        `token expired at ${new Date(this.exp * 1000).toISOString()} (plus ${CLOCK_SKEW_SECONDS} s of clock skew); ` +
          'give config.token a function that returns fresh tokens to keep the session open',
      );
      return;
    }
    this.timer = setTimeout(() => this.arm(), Math.min(remaining, MAX_TIMER_MS));
    this.timer.unref();
  }
}
