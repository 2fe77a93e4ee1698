/**
 * Keeps a session's token fresh (API.md `token` as a function; PROTOCOL.md P2b). The host's token function is
 * called again before the current token's `exp` (read from the JWT, not verified: the server verifies); each fresh
 * token goes to `onToken`, which sends it in-band on the open connection and keeps it for the next Hello, so the
 * session continues without reconnecting; a reconnect after the page was offline or asleep past `exp` asks for a
 * fresh token first (`refreshNow`). A failed call is reported (non-fatal) and retried with backoff; if no
 * fresh token arrives in time, the server ends the session at `exp` + its clock skew with a fatal
 * `validation_error` ("token expired").
 */
import { CoeditError } from './errors.js';

/** Ask this long before `exp` for tokens that live long enough. */
const LEAD_MS = 60_000;
/** First retry delay for a failing token function, or for a token that already looks expired here; doubles. */
const MIN_DELAY_MS = 1_000;
/** Longest wait of a reconnect for the token function (`refreshNow`). */
const REFRESH_WAIT_MS = 10_000;
/** setTimeout's largest delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Milliseconds until the token function should be called again for a token expiring at `expMs` (ms since the
 * epoch), or `undefined` when the token carries no readable `exp`. `attempt` counts consecutive calls that failed
 * or gave a token that already looks expired here (a clock difference with the backend, or a token issued inside
 * the server's skew window): their retries back off from 1 s to at most a minute.
 */
export function refreshDelay(expMs: number | undefined, now: number, attempt: number): number | undefined {
  if (expMs === undefined) return undefined;
  const remaining = expMs - now;
  if (attempt === 0 && remaining > 2 * LEAD_MS) return Math.min(remaining - LEAD_MS, MAX_TIMER_MS);
  if (attempt === 0 && remaining > 2 * MIN_DELAY_MS) return remaining / 2;
  return Math.min(MIN_DELAY_MS * 2 ** attempt, LEAD_MS);
}

/** `exp` of a JWT in milliseconds since the epoch, read without verifying; undefined when absent or unreadable. */
export function tokenExpiry(token: string): number | undefined {
  const part = token.split('.')[1];
  if (!part) return undefined;
  try {
    const json = atob(part.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(part.length / 4) * 4, '='));
    const exp = (JSON.parse(json) as { exp?: unknown }).exp;
    return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

export class TokenRefresher {
  private timer: unknown;
  private stopped = false;
  private attempt = 0;
  /** The token function's call in progress, if any. */
  private inflight: Promise<void> | undefined;

  constructor(
    private readonly fetchToken: () => Promise<string>,
    private readonly onToken: (token: string) => void,
    private readonly onError: (error: CoeditError) => void,
  ) {}

  /** Schedules the refresh of `token` (the one the session holds now). */
  start(token: string): void {
    this.schedule(token);
  }

  /** True when `token`'s `exp` has passed by this client's clock: a Hello carrying it would be refused or cut soon. */
  static expired(token: string | undefined, now: number): boolean {
    const expMs = token === undefined ? undefined : tokenExpiry(token);
    return expMs !== undefined && expMs <= now;
  }

  /**
   * Calls the token function now (or waits for the call in progress) and resolves once it settled, successfully
   * or not. For a reconnect after the page slept past `exp`: the new connection should carry a fresh token.
   */
  refreshNow(current: string): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (!this.inflight && this.timer !== undefined) clearTimeout(this.timer);
    const call = this.inflight ?? this.refresh(current);
    // A token function that hangs must not hold the reconnect forever: after a while it goes ahead without.
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, REFRESH_WAIT_MS);
      void call.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(token: string): void {
    if (this.stopped) return;
    const delay = refreshDelay(tokenExpiry(token), Date.now(), this.attempt);
    if (delay === undefined) return;
    this.timer = setTimeout(() => void this.refresh(token), delay);
    (this.timer as { unref?: () => void }).unref?.();
  }

  private refresh(current: string): Promise<void> {
    this.timer = undefined;
    let pending: Promise<string>;
    try {
      pending = this.fetchToken();
    } catch (err) {
      pending = Promise.reject(err);
    }
    const settled = pending
      .then((fresh) => {
        if (this.stopped) return;
        if (typeof fresh !== 'string' || fresh === '') throw new TypeError('it did not return a non-empty string');
        const expMs = tokenExpiry(fresh);
        this.attempt = expMs !== undefined && expMs - Date.now() <= 2 * MIN_DELAY_MS ? this.attempt + 1 : 0;
        this.onToken(fresh);
        this.schedule(fresh);
      })
      .catch((err: unknown) => {
        if (this.stopped) return;
        this.attempt++;
        this.onError(new CoeditError('validation_error', `token: the token function failed: ${(err as Error)?.message ?? String(err)}`, false));
        this.schedule(current);
      })
      .finally(() => {
        this.inflight = undefined;
      });
    this.inflight = settled;
    return settled;
  }
}
