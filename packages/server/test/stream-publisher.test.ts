/**
 * `StreamPublisher` against a hand-driven fake of ioredis's pipeline (no Redis needed): a publish resolves only once
 * Redis accepted its own entry (the ack rule of D6), also when entries are dropped to bound memory while a pipeline
 * is in flight.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { StreamPublisher } from '../src/fanout/stream-publisher.js';
import { silentLogger } from '../src/log.js';

/** A pipeline whose `exec` the test answers: each call waits until the test resolves it. */
class FakeRedis {
  readonly execs: Array<{ xadds: string[][]; answer: (results: Array<[Error | null, unknown]> | null) => void }> = [];

  pipeline(): unknown {
    const xadds: string[][] = [];
    const pipeline = {
      call: (...args: unknown[]) => {
        xadds.push(args.map(String));
        return pipeline;
      },
      pexpire: () => pipeline,
      exec: () => new Promise<Array<[Error | null, unknown]> | null>((answer) => this.execs.push({ xadds, answer })),
    };
    return pipeline;
  }
}

/** Resolves after pending promise callbacks ran. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('StreamPublisher', () => {
  it('resolves a publish once Redis accepted its entry, in order', async () => {
    const redis = new FakeRedis();
    const publisher = new StreamPublisher(redis as unknown as Redis, 'S', silentLogger);
    const done: number[] = [];
    void publisher.add('k', ['f', '1']).then(() => done.push(1));
    await settle();
    void publisher.add('k', ['f', '2']).then(() => done.push(2));
    await settle();
    assert.deepEqual(done, [], 'nothing accepted yet');
    redis.execs[0]!.answer([[null, '1-0'], [null, 1]]);
    await settle();
    assert.deepEqual(done, [1]);
    redis.execs[1]!.answer(null); // the pipeline failed: kept, retried
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.deepEqual(done, [1]);
    redis.execs[2]!.answer([[null, '2-0'], [null, 1]]);
    await settle();
    assert.deepEqual(done, [1, 2]);
    publisher.stop();
  });

  it('entries dropped while their pipeline is in flight do not make later entries count as accepted', async () => {
    const redis = new FakeRedis();
    const publisher = new StreamPublisher(redis as unknown as Redis, 'S', silentLogger);
    let firstAccepted = false;
    void publisher.add('a', ['f', 'first']).then(() => (firstAccepted = true));
    await settle();
    assert.equal(redis.execs.length, 1, 'the first entry is in flight');
    // Past the memory bound (50,000 queued) while the first pipeline waits: the oldest entry is dropped for a gap.
    const later: boolean[] = [];
    for (let i = 0; i < 50_000; i++) {
      const index = i;
      void publisher.add('b', ['f', String(i)]).then(() => (later[index] = true));
    }
    redis.execs[0]!.answer([[null, '1-0'], [null, 1]]);
    await settle();
    assert.equal(firstAccepted, true, 'Redis has the first entry');
    assert.equal(later.filter(Boolean).length, 0, 'no later entry is resolved by the first one being accepted');
    // And none is lost: the next pipeline starts with the first later entry.
    assert.equal(redis.execs.length, 2);
    assert.deepEqual(redis.execs[1]!.xadds[0], ['XADD', 'b', '*', 'f', '0']);
    publisher.stop();
  });
});
