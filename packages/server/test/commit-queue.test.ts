import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CommitQueue } from '../src/store/commit-queue.js';
import type { AppendEntry } from '../src/store/types.js';

/** A store whose `appendUpdates` calls are recorded and, when `failures > 0`, fail that many times first. */
class FakeStore {
  calls: AppendEntry[][] = [];
  committed: AppendEntry[] = [];
  failures = 0;
  attempts = 0;
  /** Resolves the n-th call's promise only when released (to observe ordering). */
  gate: Promise<void> | undefined;

  async appendUpdates(entries: AppendEntry[]): Promise<void> {
    this.attempts++;
    if (this.gate) await this.gate;
    if (this.failures > 0) {
      this.failures--;
      throw new Error('disk on fire');
    }
    this.calls.push([...entries]);
    this.committed.push(...entries);
  }
}

function entry(i: number, bytes = 1): AppendEntry {
  return { doc: { account: 'a', docId: `d${i % 3}` }, epoch: 1, update: new Uint8Array(bytes).fill(i % 256) };
}

describe('CommitQueue', () => {
  it('commits everything enqueued in one event-loop turn with one appendUpdates call', async () => {
    const store = new FakeStore();
    const queue = new CommitQueue(store);
    const done = [queue.enqueue([entry(1)]), queue.enqueue([entry(2), entry(3)]), queue.enqueue([entry(4)])];
    assert.equal(queue.pending, 4);
    await Promise.all(done);
    assert.equal(store.calls.length, 1);
    assert.deepEqual(
      store.calls[0]!.map((e) => e.update[0]),
      [1, 2, 3, 4],
    );
    assert.equal(queue.pending, 0);
  });

  it('with windowMs, entries of several event-loop turns share one commit, and a flush alone does not wait', async () => {
    const store = new FakeStore();
    const queue = new CommitQueue(store, { windowMs: 40 });
    const started = performance.now();
    const first = queue.enqueue([entry(1)]);
    // Three later turns of the event loop, well inside the window.
    for (let i = 2; i <= 4; i++) {
      await new Promise((r) => setImmediate(r));
      void queue.enqueue([entry(i)]);
    }
    assert.equal(store.attempts, 0, 'nothing is written before the window closes');
    await first;
    assert.ok(performance.now() - started >= 35, 'the first entry waited for the window');
    assert.equal(store.calls.length, 1);
    assert.deepEqual(store.calls[0]!.map((e) => e.update[0]), [1, 2, 3, 4]);
    // An empty enqueue on an idle queue resolves on the next turn, not after a window.
    const flushStarted = performance.now();
    await queue.flush();
    assert.ok(performance.now() - flushStarted < 35, 'flush of an idle queue waits for no window');
    assert.equal(store.calls.length, 1);
  });

  it('resolves an enqueue only after its batch is committed', async () => {
    const store = new FakeStore();
    let release!: () => void;
    store.gate = new Promise((r) => (release = r));
    const queue = new CommitQueue(store);
    let resolved = false;
    const p = queue.enqueue([entry(1)]).then(() => {
      resolved = true;
    });
    // Wait until the write started, then check nothing resolved before the commit.
    for (let i = 0; i < 100 && store.attempts === 0; i++) await new Promise((r) => setImmediate(r));
    assert.equal(store.attempts, 1);
    assert.equal(resolved, false);
    assert.equal(store.committed.length, 0);
    release();
    await p;
    assert.equal(resolved, true);
    assert.equal(store.committed.length, 1);
  });

  it('resolves in enqueue order, empty enqueues included, batching what arrives during a write', async () => {
    const store = new FakeStore();
    let release!: () => void;
    store.gate = new Promise((r) => (release = r));
    const queue = new CommitQueue(store);
    const order: string[] = [];
    const first = queue.enqueue([entry(1)]).then(() => order.push('first'));
    for (let i = 0; i < 100 && store.attempts === 0; i++) await new Promise((r) => setImmediate(r));
    // Arrive while the first batch is being written:
    const empty = queue.enqueue([]).then(() => order.push('empty'));
    const second = queue.enqueue([entry(2)]).then(() => order.push('second'));
    const third = queue.enqueue([entry(3)]).then(() => order.push('third'));
    const flushed = queue.flush().then(() => order.push('flush'));
    release();
    store.gate = undefined;
    await Promise.all([first, empty, second, third, flushed]);
    assert.deepEqual(order, ['first', 'empty', 'second', 'third', 'flush']);
    assert.equal(store.calls.length, 2, 'the three arrivals during the write form one batch');
    assert.deepEqual(
      store.calls[1]!.map((e) => e.update[0]),
      [2, 3],
    );
  });

  it('resolves an empty enqueue on an idle queue without calling the store', async () => {
    const store = new FakeStore();
    const queue = new CommitQueue(store);
    await queue.enqueue([]);
    await queue.flush();
    assert.equal(store.attempts, 0);
  });

  it('splits large batches by entry count and by bytes', async () => {
    const store = new FakeStore();
    const queue = new CommitQueue(store, { maxBatchEntries: 10, maxBatchBytes: 1_000 });
    const many = Array.from({ length: 25 }, (_, i) => entry(i));
    await queue.enqueue(many);
    assert.deepEqual(
      store.calls.map((c) => c.length),
      [10, 10, 5],
    );
    store.calls = [];
    await Promise.all([queue.enqueue([entry(1, 600)]), queue.enqueue([entry(2, 600)]), queue.enqueue([entry(3, 10)])]);
    assert.deepEqual(
      store.calls.map((c) => c.length),
      [2, 1],
      'sealed when the batch reached 1,000 bytes',
    );
    assert.deepEqual(
      store.committed.slice(-3).map((e) => e.update[0]),
      [1, 2, 3],
    );
  });

  it('keeps entries through storage errors, retries with backoff and never resolves before the commit', async () => {
    const store = new FakeStore();
    store.failures = 3;
    const errors: number[] = [];
    const queue = new CommitQueue(store, { retryMinMs: 1, retryMaxMs: 4, onError: (_e, attempt) => errors.push(attempt) });
    let resolved = false;
    const p = queue.enqueue([entry(1), entry(2)]).then(() => {
      resolved = true;
    });
    const later = queue.enqueue([]);
    // Still failing after the first attempt: nothing resolved, nothing lost.
    for (let i = 0; i < 100 && errors.length === 0; i++) await new Promise((r) => setImmediate(r));
    assert.equal(resolved, false);
    assert.equal(queue.pending, 2);
    assert.ok(queue.failingAttempts >= 1);
    await p;
    await later;
    assert.deepEqual(errors, [1, 2, 3]);
    assert.equal(store.attempts, 4);
    assert.deepEqual(
      store.committed.map((e) => e.update[0]),
      [1, 2],
    );
    assert.equal(queue.failingAttempts, 0);
  });
});
