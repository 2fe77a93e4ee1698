// Backoff (core/backoff.ts): the window doubles per attempt up to the cap, and never grows past twice the outage's
// length, so attempts refused at once cannot make a short outage end with a long wait.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Backoff } from '../src/core/backoff.js';

/** Delays drawn at the top of each window (random 1), at the given times (ms). */
function delaysAt(backoff: Backoff, times: number[]): number[] {
  return times.map((t) => backoff.next(t));
}

test('a slow outage: the window doubles from 500 ms per attempt up to the 30 s cap', () => {
  const backoff = new Backoff(500, 30_000, () => 1);
  // Each attempt made after the previous delay ran out: the outage has lasted longer than every window.
  let t = 0;
  const delays: number[] = [];
  for (let k = 0; k < 9; k++) {
    const d = backoff.next(t);
    delays.push(d);
    t += d + 1;
  }
  assert.deepEqual(delays, [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
});

test('attempts refused at once do not grow the window past twice the outage so far', () => {
  const backoff = new Backoff(500, 30_000, () => 1);
  // Ten refusals within the first 3 s (a network that is down answers at once).
  const delays = delaysAt(backoff, [0, 10, 20, 30, 40, 50, 1000, 2000, 2500, 3000]);
  assert.deepEqual(delays.slice(0, 6), [500, 500, 500, 500, 500, 500], 'never below the 500 ms base');
  assert.deepEqual(delays.slice(6), [2000, 4000, 5000, 6000], 'bounded by twice the time since the first delay');
});

test('reset (back online) starts the next outage from the base window', () => {
  const backoff = new Backoff(500, 30_000, () => 1);
  delaysAt(backoff, [0, 5_000, 20_000]);
  backoff.reset();
  assert.equal(backoff.next(100_000), 500);
  assert.equal(backoff.next(100_600), 1000);
});

test('full jitter: each delay is uniform in [0, window]', () => {
  const backoff = new Backoff(500, 30_000, () => 0.25);
  assert.equal(backoff.next(0), 125);
  assert.equal(backoff.next(10_000), 250);
});
