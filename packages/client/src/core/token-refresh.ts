/**
 * Keeps a session's token fresh (API.md `token` as a function; PROTOCOL.md P2b). The host's token function is
 * called again before the current token's `exp` (read from the JWT, not verified: the server verifies); each fresh
 * token goes to `onToken`, which sends it in-band on the open connection and keeps it for the next Hello, so the
 * session continues without reconnecting. A failed call is reported (non-fatal) and retried with backoff; if no
 * fresh token arrives in time, the server ends the session at `exp` + its clock skew with a fatal
 * `validation_error` ("token expired").
 */
import { CoeditError } from './errors.js';

/** Ask this long before `exp` for tokens that live long enough. */
const LEAD_MS = 60_000;
/** First retry delay for a failing token function, or for a token that already looks expired here; doubles. */
const MIN_DELAY_MS = 1_000;
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

  constructor(
    private readonly fetchToken: () => Promise<string>,
    private readonly onToken: (token: string) => void,
    private readonly onError: (error: CoeditError) => void,
  ) {}

  /** Schedules the refresh of `token` (the one the session holds now). */
  start(token: string): void {
    this.schedule(token);
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
    this.timer = setTimeout(() => this.refresh(token), delay);
    (this.timer as { unref?: () => void }).unref?.();
  }

  private refresh(current: string): void {
    this.timer = undefined;
    let pending: Promise<string>;
    try {
      pending = this.fetchToken();
    } catch (err) {
      pending = Promise.reject(err);
    }
    pending.then(
      (fresh) => {
        if (this.stopped) return;
        if (typeof fresh !== 'string' || fresh === '') throw new TypeError('it did not return a non-empty string');
        const expMs = tokenExpiry(fresh);
        this.attempt = expMs !== undefined && expMs - Date.now() <= 2 * MIN_DELAY_MS ? this.attempt + 1 : 0;
        this.onToken(fresh);
        this.schedule(fresh);
      },
    ).catch((err: unknown) => {
      if (this.stopped) return;
      this.attempt++;
      this.onError(new CoeditError('validation_error', `token: the token function failed: ${(err as Error)?.message ?? String(err)}`, false));
      this.schedule(current);
    });
  }
}
