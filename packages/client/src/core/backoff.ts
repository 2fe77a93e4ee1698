/**
 * Reconnect delays (RELIABILITY.md R1, C2). An outage is cut into windows counted from its start: 500 ms, doubling
 * up to the 30 s cap (window k spans [S_k, S_k + w_k), S_k = w_0 + … + w_{k−1}). A client attempts at one point of
 * each window, the same place in every window: S_k + phase·w_k, with `phase` in [0, 1) fixed for the outage. So:
 * - two attempts are at most the larger of two windows apart, never more than the cap, however long an attempt
 *   takes (an attempt that ends past its window's point waits for the next window's);
 * - after the server returns, a client waits at most one window; after a short outage about the outage's length,
 *   because windows grow with the time elapsed, not with the number of attempts (refusals that come back within
 *   milliseconds, from a network that is down, do not widen them);
 * - clients that lost the server together come back in the order of their phases. Given evenly spaced phases
 *   (`spreadPhase`), n clients come back at most ⌊n/w⌋ + 1 per second of a window w seconds wide, so for two windows
 *   side by side at most ⌊n/w_k⌋ + ⌊n/w_{k+1}⌋ + 2 in any second: 6 of 50 after an outage of 16 s or more. Random
 *   phases (full jitter) give the same mean but bursts: in simulation more than 10 of 50 land in one second in
 *   about 0.4 % of 30 s outages.
 */
/** First window in ms. 500 ms: a server restart is usually back within a second. */
const BASE_MS = 500;
/** Largest window in ms. 30 s is R1's bar for the longest gap between attempts. */
const CAP_MS = 30_000;

export class Backoff {
  /** When the outage began (ms, the clock given to `next`); null while online. */
  private since: number | null = null;
  private phase = 0;

  constructor(
    /** Draws the phase of an outage no `spreadPhase` was given for; Math.random by default. */
    private readonly random: () => number = Math.random,
  ) {}

  /**
   * The delay in ms (fractional) until the next attempt. `now`: the current time in ms (Date.now() unless a test
   * gives one). `phase` in [0, 1): where in each window this client attempts; read only at the outage's first call
   * (a random one when absent), later calls of the same outage keep it.
   */
  next(now: number = Date.now(), phase?: number): number {
    if (this.since === null) {
      this.since = now;
      this.phase = phase ?? this.random();
    }
    const elapsed = now - this.since;
    let start = 0;
    let width = BASE_MS;
    // The first window whose point lies after now. Windows reach the cap after a handful of doublings, so this runs
    // at most elapsed / cap + 7 times.
    while (start + this.phase * width <= elapsed) {
      start += width;
      width = Math.min(CAP_MS, width * 2);
    }
    return start + this.phase * width - elapsed;
  }

  /** Back online: the next outage starts from the first window again. */
  reset(): void {
    this.since = null;
  }
}

/**
 * A client's phase among the `peers` (distinct client ids) of its document, itself included or not: (rank + ½) / n,
 * turned by an offset common to the peers: the smallest id times the golden ratio's fraction, modulo 1 (Weyl's
 * sequence; close to uniform over [0, 1) for ids drawn at random, as Yjs draws them). Clients that see the same peers
 * get phases evenly spaced over [0, 1); the offset, different between documents, keeps the clients of many small
 * documents from all coming back at the same instants. Undefined when it saw no other client (alone, or never
 * connected): such a client knows nothing to spread by, and the backoff draws a random phase.
 */
export function spreadPhase(peers: Iterable<number>, self: number): number | undefined {
  let n = 1;
  let rank = 0;
  let min = self;
  for (const id of peers) {
    if (id === self) continue;
    n++;
    if (id < self) rank++;
    if (id < min) min = id;
  }
  return n < 2 ? undefined : (min * 0.618034 + (rank + 0.5) / n) % 1;
}
