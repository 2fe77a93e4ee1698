/**
 * A trailing-edge throttle: `schedule()` runs `run` at once when the last run is at least `interval()` ms old,
 * else once when that much time has passed. Presence traffic goes through it (≤ ~20 updates a second, presence/ui.ts).
 */
export class Throttle {
  private last = -Infinity;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly run: () => void,
    private readonly interval: () => number,
    private readonly now: () => number = Date.now,
  ) {}

  schedule(): void {
    if (this.timer !== null) return;
    const wait = this.last + this.interval() - this.now();
    if (wait <= 0) {
      this.fire();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      this.fire();
    }, wait);
  }

  cancel(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private fire(): void {
    this.last = this.now();
    this.run();
  }
}
