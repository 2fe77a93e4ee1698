/**
 * `RedisFanout` on its own, two instances standing for two servers (needs Redis on 127.0.0.1:6379): order, own
 * entries skipped, the join point, a lagging reader, subscribing while a read blocks, a dropped connection (gap),
 * presence, trimming, health. Room behaviour on top of it: fanout-rooms.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { RedisFanout } from '../src/fanout/redis.js';
import { streamKey, compareIds, decodePresence, decodeStreamEntry, encodePresence, streamFields } from '../src/fanout/redis-codec.js';
import type { FanoutEvent } from '../src/fanout/types.js';
import { silentLogger } from '../src/log.js';
import { pollUntil } from './helpers/poll.js';
import { REDIS_URL, services, uniqueDocId } from './helpers/services.js';

describe('Redis codec (no Redis needed)', () => {
  it('round-trips entries and presence, skipping the own server', () => {
    const fields = streamFields('A', 'update', 3, new Uint8Array([1, 2, 3])).map((f) => (typeof f === 'string' ? Buffer.from(f) : f));
    assert.deepEqual(decodeStreamEntry(fields, 'B'), { kind: 'update', epoch: 3, update: new Uint8Array([1, 2, 3]) });
    assert.equal(decodeStreamEntry(fields, 'A'), undefined, 'own entry');
    const unknown = ['o', 'A', 'k', 'z', 'e', '1'].map((f) => Buffer.from(f));
    assert.equal(decodeStreamEntry(unknown, 'B'), undefined, 'a kind from a newer server is skipped');
    const message = encodePresence('A', new Uint8Array([9, 8]));
    assert.deepEqual(decodePresence(message, 'B'), new Uint8Array([9, 8]));
    assert.equal(decodePresence(message, 'A'), undefined);
    assert.ok(compareIds('10-1', '9-5') > 0 && compareIds('5-2', '5-10') < 0 && compareIds('1-1', '1-1') === 0);
    assert.notEqual(streamKey({ account: 'a:b', docId: 'c' }), streamKey({ account: 'a', docId: 'b:c' }));
  });
});

if (await services('redis')) {
  describe('RedisFanout', () => {
    const a = new RedisFanout({ url: REDIS_URL, serverId: 'test-A', log: silentLogger });
    const b = new RedisFanout({ url: REDIS_URL, serverId: 'test-B', log: silentLogger });
    const admin = new Redis(REDIS_URL);
    const keys: string[] = [];
    const newDoc = (): { account: string; docId: string } => {
      const doc = { account: 'fanout-test', docId: uniqueDocId('doc') };
      keys.push(streamKey(doc));
      return doc;
    };
    const collect = (events: FanoutEvent[]) => (event: FanoutEvent) => events.push(event);
    const updates = (events: FanoutEvent[]): number[] => events.flatMap((e) => (e.kind === 'update' ? [e.update[0]!] : []));

    before(async () => {
      await Promise.all([a.ping(), b.ping()].map((p) => p.catch(() => undefined)));
    });
    after(async () => {
      await Promise.all([a.close(), b.close()]);
      if (keys.length > 0) await admin.del(...keys);
      await admin.quit();
    });

    it('[D6] resolves a publish only once Redis holds the entry, in publish order', async () => {
      const doc = newDoc();
      const feed = await a.join(doc);
      const held: number[] = [];
      const published = [1, 2, 3].map((n) =>
        feed.publishUpdates(1, [new Uint8Array([n])]).then(async () => {
          // When a publish resolves, its entry (and every earlier one) is already in the stream.
          const entries = await admin.xrangeBuffer(streamKey(doc), '-', '+');
          held.push(entries.length);
          assert.ok(entries.length >= n, `entry ${n} is in the stream when its publish resolves (${entries.length} entries)`);
        }),
      );
      await Promise.all(published);
      assert.deepEqual(held.length, 3);
      feed.close();
    });

    it('delivers what another server publishes after the join, in order, and skips its own', async () => {
      const doc = newDoc();
      const feedA = await a.join(doc);
      const feedB = await b.join(doc);
      feedA.publishUpdates(1, [new Uint8Array([0])]); // after B joined: delivered even though B starts later
      await a.flush();
      const eventsA: FanoutEvent[] = [];
      const eventsB: FanoutEvent[] = [];
      feedA.start(collect(eventsA));
      feedB.start(collect(eventsB));
      for (let i = 1; i <= 20; i++) feedA.publishUpdates(1, [new Uint8Array([i])]);
      feedA.publishSeeded(1);
      await a.flush();
      await pollUntil(() => eventsB.length === 22, 'all entries at B', 3_000);
      assert.deepEqual(updates(eventsB), Array.from({ length: 21 }, (_, i) => i));
      assert.deepEqual(eventsB.at(-1), { kind: 'seeded', epoch: 1 });
      assert.deepEqual(eventsA, [], 'a server never receives its own entries');
      // A server joining now does not get the past (it loads it from the store).
      const late = await b.join(doc);
      const eventsLate: FanoutEvent[] = [];
      late.start(collect(eventsLate));
      feedA.publishSession(2);
      await pollUntil(() => eventsLate.length === 1, 'the new entry', 3_000);
      assert.deepEqual(eventsLate, [{ kind: 'session', epoch: 2 }]);
      for (const feed of [feedA, feedB, late]) feed.close();
    });

    it('a reader that lags reads everything it missed, in order (more than one read)', async () => {
      const doc = newDoc();
      const feedA = await a.join(doc);
      const feedB = await b.join(doc);
      const count = 1_200; // more than two reads of 500
      for (let i = 0; i < count; i++) feedA.publishUpdates(1, [new Uint8Array([i % 256, i >> 8])]);
      await a.flush();
      const events: FanoutEvent[] = [];
      feedB.start(collect(events));
      await pollUntil(() => events.length === count, `${count} entries`, 5_000);
      const seen = events.map((e) => (e.kind === 'update' ? e.update[0]! + (e.update[1]! << 8) : -1));
      assert.deepEqual(seen, Array.from({ length: count }, (_, i) => i));
      feedA.close();
      feedB.close();
    });

    it('picks up a new subscription at once while its read is blocked', async () => {
      const first = newDoc();
      const idle = await b.join(first);
      idle.start(() => {});
      // B's reader is now blocked on `first` only (for up to 2 s).
      await new Promise((r) => setTimeout(r, 100));
      const doc = newDoc();
      const feedB = await b.join(doc);
      const events: FanoutEvent[] = [];
      feedB.start(collect(events));
      const feedA = await a.join(doc);
      const started = Date.now();
      feedA.publishUpdates(1, [new Uint8Array([7])]);
      await pollUntil(() => events.length === 1, 'the entry', 3_000);
      assert.ok(Date.now() - started < 500, `woken, not waiting for the block timeout: ${Date.now() - started} ms`);
      for (const feed of [idle, feedA, feedB]) feed.close();
    });

    it('reports a gap after its read connection dropped, and goes on reading', async () => {
      const doc = newDoc();
      const feedB = await b.join(doc);
      const events: FanoutEvent[] = [];
      feedB.start(collect(events));
      await new Promise((r) => setTimeout(r, 100));
      await admin.call('CLIENT', 'KILL', 'ID', String(await clientId(admin, 'wave-streams-test-B')));
      await pollUntil(() => events.some((e) => e.kind === 'gap'), 'a gap', 5_000);
      const feedA = await a.join(doc);
      feedA.publishUpdates(1, [new Uint8Array([42])]);
      await pollUntil(() => updates(events).includes(42), 'entries after the reconnect', 5_000);
      feedA.close();
      feedB.close();
    });

    it('carries presence to the other server only', async () => {
      const doc = newDoc();
      const feedA = await a.join(doc);
      const feedB = await b.join(doc);
      const eventsA: FanoutEvent[] = [];
      const eventsB: FanoutEvent[] = [];
      feedA.start(collect(eventsA));
      feedB.start(collect(eventsB));
      // SUBSCRIBE is asynchronous: publish until B hears (presence is best effort by design).
      await pollUntil(() => {
        feedA.publishAwareness(new Uint8Array([5, 5]));
        return eventsB.length > 0;
      }, 'presence at B', 3_000);
      assert.deepEqual(eventsB[0], { kind: 'awareness', update: new Uint8Array([5, 5]) });
      assert.deepEqual(eventsA, []);
      feedA.close();
      feedB.close();
    });

    it('trims entries older than the retention after a compaction', async () => {
      const doc = newDoc();
      const key = streamKey(doc);
      // Entries from "long ago" (explicit ids in 1970), then a fresh one.
      for (let i = 1; i <= 300; i++) await admin.xadd(key, `1-${i}`, 'o', 'old', 'k', 'u', 'e', '1', 'd', 'x');
      const feed = await a.join(doc);
      feed.publishUpdates(1, [new Uint8Array([1])]);
      await a.flush();
      feed.compacted();
      // `~` trims whole internal nodes (100 entries each by default): most old entries go, the fresh one stays.
      // XTRIM is sent without waiting for it: a bounded poll of its effect.
      let length = 301;
      for (let i = 0; i < 50 && length > 101; i++) {
        length = await admin.xlen(key);
        if (length > 101) await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(length <= 101, `old entries trimmed: ${length} left`);
      const newest = await admin.xrevrange(key, '+', '-', 'COUNT', 1);
      assert.notEqual(newest[0]?.[0]?.startsWith('1-'), true, 'the fresh entry stays');
      feed.close();
    });

    it('pings, and fails its ping when Redis is unreachable', async () => {
      await a.ping();
      const lost = new RedisFanout({ url: 'redis://127.0.0.1:1', serverId: 'test-lost', log: silentLogger });
      await assert.rejects(lost.ping());
      await lost.close();
    });
  });
}

async function clientId(admin: Redis, name: string): Promise<number> {
  const list = String(await admin.call('CLIENT', 'LIST'));
  const line = list.split('\n').find((l) => l.includes(` name=${name} `));
  assert.ok(line, `connection ${name} in CLIENT LIST`);
  return Number(/\bid=(\d+)/.exec(line)![1]);
}
