/**
 * Failed authorisations per client address (RELIABILITY.md S1: "repeated failures throttled"). A fixed window per
 * address; past the limit the address's upgrades and REST calls are answered HTTP 429 until the window ends.
 * Guessing keys or secrets thus costs a minute per `limit` tries. Memory is bounded: expired windows are pruned
 * and at most `maxAddresses` are tracked (the oldest are dropped first).
 */
export class AuthThrottle {
  private readonly windows = new Map<string, { start: number; failures: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly maxAddresses = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  blocked(address: string): boolean {
    const w = this.windows.get(address);
    if (!w) return false;
    if (this.now() - w.start >= this.windowMs) {
      this.windows.delete(address);
      return false;
    }
    return w.failures >= this.limit;
  }

  failed(address: string): void {
    const now = this.now();
    const w = this.windows.get(address);
    if (w && now - w.start < this.windowMs) {
      w.failures++;
      return;
    }
    this.windows.delete(address);
    if (this.windows.size >= this.maxAddresses) this.prune(now);
    this.windows.set(address, { start: now, failures: 1 });
  }

  private prune(now: number): void {
    for (const [address, w] of this.windows) if (now - w.start >= this.windowMs) this.windows.delete(address);
    // Still full: drop the oldest (Map keeps insertion order).
    for (const address of this.windows.keys()) {
      if (this.windows.size < this.maxAddresses) break;
      this.windows.delete(address);
    }
  }
}
