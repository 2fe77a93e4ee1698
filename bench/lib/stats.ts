/** Percentiles, medians and the clock-offset estimate used by every scenario. Pure functions, no I/O. */

/** Nearest-rank percentile (p in 0..100) of an unsorted list; NaN for an empty list. */
export function percentile(values: ArrayLike<number>, p: number): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export interface Distribution {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export function distribution(values: ArrayLike<number>): Distribution {
  const sorted = Float64Array.from(values).sort();
  const at = (p: number): number => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!);
  let sum = 0;
  for (const v of sorted) sum += v;
  return { n: sorted.length, p50: at(50), p90: at(90), p99: at(99), max: sorted.length ? sorted[sorted.length - 1]! : NaN, mean: sorted.length ? sum / sorted.length : NaN };
}

/** The median of several runs' values and their min–max spread. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  runs: number[];
}

export function summarize(runs: number[]): Summary {
  const finite = runs.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return { median: NaN, min: NaN, max: NaN, runs };
  const s = [...finite].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, min: s[0]!, max: s[s.length - 1]!, runs };
}

/** Summarises one field over runs of objects: summarizeField(runs, (r) => r.p99). */
export function summarizeField<T>(runs: T[], pick: (run: T) => number): Summary {
  return summarize(runs.map(pick));
}

/**
 * One NTP-style probe of another clock: `sent` and `received` are read on the reference clock around a reading
 * `remote` of the other clock.
 */
export interface ClockProbe {
  sent: number;
  remote: number;
  received: number;
}

/**
 * Offset of the other clock (remote − reference), from the probe with the smallest round trip: the remote reading
 * is assumed to be taken in the middle of that round trip, so the error is at most half of it (`error`).
 */
export function estimateClockOffset(probes: ClockProbe[]): { offset: number; error: number } {
  if (probes.length === 0) throw new Error('estimateClockOffset: no probes');
  let best = probes[0]!;
  for (const p of probes) if (p.received - p.sent < best.received - best.sent) best = p;
  return { offset: best.remote - (best.sent + best.received) / 2, error: (best.received - best.sent) / 2 };
}

/** a / b, or NaN when either is not a positive finite number. */
export function ratio(a: number, b: number): number {
  return Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : NaN;
}
