// Backoff (core/backoff.ts): one attempt per window at the client's phase, windows of 500 ms doubling to 30 s counted
// from the outage's start; clients given evenly spaced phases come back spread over a window.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Backoff, spreadPhase } from '../src/core/backoff.js';
import { seededRandom } from './helpers/random.js';

/** The attempt times of one client (ms from the outage's start), each attempt taking `duration()` ms. */
function attemptTimes(backoff: Backoff, phase: number, until: number, duration: () => number = () => 1): number[] {
  const times: number[] = [];
  let t = 0;
  for (;;) {
    t += backoff.next(t, phase);
    if (t > until) return times;
    times.push(t);
    t += duration();
  }
}

test('one attempt per window, at the same place in each: windows double from 500 ms to the 30 s cap', () => {
  const times = attemptTimes(new Backoff(), 0.5, 140_000);
  // Windows start at 0, 0.5, 1.5, 3.5, 7.5, 15.5, 31.5, 61.5, 91.5, 121.5 s.
  assert.deepEqual(times, [250, 1_000, 2_500, 5_500, 11_500, 23_500, 46_500, 76_500, 106_500, 136_500]);
});

test('attempts refused at once do not widen the windows: the wait follows the time elapsed', () => {
  const backoff = new Backoff();
  const delays = [0, 10, 20, 30, 2_000, 3_000].map((t) => backoff.next(t, 0.875));
  // Points at 437.5 (window 0), 1_375 (window 1), 3_250 (window 2), 7_000 (window 3).
  assert.deepEqual(delays, [437.5, 427.5, 417.5, 407.5, 1_250, 250]);
});

test('the gap between two attempts never exceeds the 30 s cap, however long attempts take', () => {
  const random = seededRandom(7);
  for (let run = 0; run < 200; run++) {
    const backoff = new Backoff();
    const phase = random();
    let end = 0;
    for (let attempt = 0; attempt < 40; attempt++) {
      const start = end + backoff.next(end, phase);
      assert.ok(start - end <= 30_000, `run ${run}: gap ${start - end} ms after an attempt ending at ${end}`);
      end = start + Math.floor(random() * 12_000); // up to the 10 s connect timeout and then some
    }
  }
});

test('reset (back online) starts the next outage from the first window, with the phase it is given', () => {
  const backoff = new Backoff();
  backoff.next(0, 0.5);
  backoff.next(60_000);
  backoff.reset();
  assert.equal(backoff.next(100_000, 0.25), 125);
  assert.equal(backoff.next(100_200), 550, 'the outage keeps its phase: window [500, 1500) at 0.25, 750 ms');
});

test('with no phase given, the outage draws one from the random source', () => {
  const backoff = new Backoff(() => 0.25);
  assert.equal(backoff.next(0), 125);
  assert.equal(backoff.next(200), 550);
});

/** The most clients that come back within one second after the server returns at `returnAt` (ms). */
function mostInOneSecond(phases: number[], returnAt: number): number {
  const back = phases
    .map((phase) => {
      const backoff = new Backoff();
      // Each refused attempt takes 1 ms; the first attempt at or after the return succeeds.
      for (let t = 0; ; t += 1) {
        t += backoff.next(t, phase);
        if (t >= returnAt) return t;
      }
    })
    .sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < back.length; i++) {
    while (j < back.length && back[j]! - back[i]! < 1_000) j++;
    most = Math.max(most, j - i);
  }
  return most;
}

test('[R1] 50 clients with spread phases: at most 6 come back in any second after an outage of 16 s to 2 min', () => {
  const random = seededRandom(11);
  for (let run = 0; run < 300; run++) {
    const ids = Array.from({ length: 50 }, () => Math.floor(random() * 2 ** 32));
    const phases = ids.map((id) => spreadPhase(ids, id)!);
    const returnAt = 16_000 + Math.floor(random() * 104_000);
    const most = mostInOneSecond(phases, returnAt);
    assert.ok(most <= 6, `run ${run}: ${most} clients back within one second after ${returnAt} ms`);
  }
});

test('spreadPhase: evenly spaced by rank, turned by an offset from the smallest id; undefined when alone', () => {
  const peers = [30, 10, 20, 40];
  const phases = peers.map((id) => spreadPhase(peers, id)!);
  const offset = (10 * 0.618034) % 1;
  const near = (a: number, b: number) => Math.abs(a - b) < 1e-9;
  assert.ok(near(phases[1]!, offset + 0.125), `the smallest id's phase ${phases[1]}`);
  assert.ok(near(phases[0]!, offset + 0.625), `rank 2 of 4 ${phases[0]}`);
  assert.ok(near(phases[3]!, (offset + 0.875) % 1), `rank 3 of 4, past 1 ${phases[3]}`);
  assert.ok(near(spreadPhase([10, 20], 15)!, (offset + 0.5) % 1), 'ranked among 10, 15, 20 when missing from the peers');
  assert.equal(spreadPhase([5], 5), undefined, 'no other client: nothing to spread by');
  assert.equal(spreadPhase([], 5), undefined);
});

test('the clients of many two-client documents spread over the whole window, not at two instants', () => {
  const random = seededRandom(3);
  const tenths = new Array<number>(10).fill(0);
  for (let doc = 0; doc < 1_000; doc++) {
    const ids = [Math.floor(random() * 2 ** 32), Math.floor(random() * 2 ** 32)];
    for (const id of ids) tenths[Math.floor(spreadPhase(ids, id)! * 10)]!++;
  }
  assert.ok(tenths.every((n) => n > 150 && n < 250), `clients per tenth of the window: ${tenths.join(' ')}`);
});
