/**
 * Reconnect delays: capped exponential backoff with full jitter (delay uniform in [0, window], window
 * min(cap, base·2^n)), which spreads a crowd of clients over the window instead of reconnecting in waves
 * (RELIABILITY.md R1).
 *
 * The window also never exceeds twice the time since the outage's first delay (and never goes below `base`). With
 * full jitter alone, a run of attempts refused within milliseconds (a network that is down, not a server that is
 * slow) doubles the window each time: a 3 s outage could end with a 16 s wait. Bounded by the outage's length, the
 * wait after it ends is at most about twice that length (RELIABILITY.md C2: converged ≤ 10 s after a 0–3 s drop).
 */
export class Backoff {
  private attempt = 0;
  /** When the outage's first delay was drawn (ms, the clock given to `next`); null while online. */
  private since: number | null = null;

  constructor(
    /** First window in ms. 500 ms: a server restart is usually back within a second. */
    private readonly baseMs = 500,
    /** Largest window in ms. 30 s is R1's bar for the longest gap between attempts. */
    private readonly capMs = 30_000,
    private readonly random: () => number = Math.random,
  ) {}

  /** The next delay in ms. `now`: the current time in ms (Date.now() unless a test gives one). */
  next(now: number = Date.now()): number {
    this.since ??= now;
    const byOutage = Math.max(this.baseMs, 2 * (now - this.since));
    const window = Math.min(this.capMs, this.baseMs * 2 ** this.attempt, byOutage);
    if (this.attempt < 32) this.attempt++;
    return Math.round(this.random() * window);
  }

  /** Back online: the next outage starts from `base` again. */
  reset(): void {
    this.attempt = 0;
    this.since = null;
  }
}
