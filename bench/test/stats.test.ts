// The benchmark's arithmetic: nearest-rank percentiles, run summaries and the min-RTT clock-offset estimate.
// Needs nothing from bench/node_modules: `node --import tsx --test bench/test/*.test.ts`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { distribution, estimateClockOffset, percentile, ratio, summarize } from '../lib/stats.ts';

test('percentile: nearest rank over an unsorted list', () => {
  const values = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6];
  assert.equal(percentile(values, 50), 5);
  assert.equal(percentile(values, 90), 9);
  assert.equal(percentile(values, 99), 10);
  assert.equal(percentile(values, 0), 1);
  assert.ok(Number.isNaN(percentile([], 50)));
});

test('distribution: p99 of 1..1000 is 990, max 1000', () => {
  const d = distribution(Array.from({ length: 1000 }, (_, i) => 1000 - i));
  assert.deepEqual([d.n, d.p50, d.p99, d.max, d.mean], [1000, 500, 990, 1000, 500.5]);
});

test('summarize: median of an even count is the mean of the middle two; spread is min–max; NaN runs are ignored', () => {
  assert.deepEqual(summarize([3, 1, 2]), { median: 2, min: 1, max: 3, runs: [3, 1, 2] });
  assert.equal(summarize([4, 1, 3, 2]).median, 2.5);
  assert.equal(summarize([NaN, 5]).median, 5);
});

test('estimateClockOffset: takes the probe with the shortest round trip', () => {
  // The remote clock is 1000 ms ahead. Probe 2 is the tightest (1 ms round trip): offset 1000 ± 0.5.
  const probes = [
    { sent: 0, remote: 1003, received: 10 }, // slow probe: its midpoint is off by 2
    { sent: 20, remote: 1020.5, received: 21 },
    { sent: 30, remote: 1033, received: 34 },
  ];
  assert.deepEqual(estimateClockOffset(probes), { offset: 1000, error: 0.5 });
  assert.throws(() => estimateClockOffset([]));
});

test('ratio: NaN unless both sides are positive and finite', () => {
  assert.equal(ratio(6, 12), 0.5);
  assert.ok(Number.isNaN(ratio(1, 0)));
  assert.ok(Number.isNaN(ratio(NaN, 1)));
});
