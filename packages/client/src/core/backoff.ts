/**
 * Reconnect delays: capped exponential backoff with full jitter (delay uniform in [0, min(cap, base·2^n)]),
 * which spreads a crowd of clients over the window instead of reconnecting in waves (RELIABILITY.md R1).
 */
export class Backoff {
  private attempt = 0;

  constructor(
    /** First window in ms. 500 ms: a server restart is usually back within a second. */
    private readonly baseMs = 500,
    /** Largest window in ms. 30 s is R1's bar for the longest gap between attempts. */
    private readonly capMs = 30_000,
    private readonly random: () => number = Math.random,
  ) {}

  next(): number {
    const window = Math.min(this.capMs, this.baseMs * 2 ** this.attempt);
    if (this.attempt < 32) this.attempt++;
    return Math.round(this.random() * window);
  }

  reset(): void {
    this.attempt = 0;
  }
}
