/**
 * `SessionTouches` (rooms/session-touches.ts) on a real SQLite file store, whose touches run on its writer thread:
 * each sweep touches every room with peers in one store call, keeps their sessions alive past the grace period, and
 * tells exactly the rooms whose session is gone. The sweeps are awaited through the store's calls, never a sleep.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { silentLogger } from '../src/log.js';
import { SessionTouches } from '../src/rooms/session-touches.js';
import type { SessionRoom } from '../src/rooms/session-upkeep.js';
import { SqliteStore } from '../src/store/sqlite.js';
import type { SessionTouch } from '../src/store/types.js';

/** Sweeps every 100 ms (a third of it). */
const GRACE_MS = 300;

/** The store, with each `touchSessions` call it answered, announced to whoever waits for the next one. */
class WatchedStore extends SqliteStore {
  readonly calls: Array<{ touches: SessionTouch[]; now: number; ended: number[] }> = [];
  private waiters: Array<() => void> = [];

  override async touchSessions(touches: readonly SessionTouch[], now: number): Promise<number[]> {
    const ended = await super.touchSessions(touches, now);
    this.calls.push({ touches: [...touches], now, ended });
    for (const wake of this.waiters.splice(0)) wake();
    return ended;
  }

  /**
   * Resolves after the next answered `touchSessions` call. The sweep's timer is unref'd (a server's sockets keep
   * its process alive): a ref'd one keeps this process alive meanwhile.
   */
  nextSweep(): Promise<void> {
    const alive = setInterval(() => {}, 1_000);
    return new Promise<void>((resolve) => this.waiters.push(resolve)).finally(() => clearInterval(alive));
  }
}

/** A room as the sweep reads it; the test moves its epoch and closes it. */
type TestRoom = { -readonly [K in keyof SessionRoom]: SessionRoom[K] };

function room(docId: string): TestRoom {
  return { key: { account: 'acme', docId }, epoch: 1, seeded: false, closed: false };
}

describe('SessionTouches', () => {
  let dir: string;
  let store: WatchedStore;
  let sessions: SessionTouches;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'wave-touches-'));
    store = new WatchedStore(join(dir, 'wave.db'));
    sessions = new SessionTouches(store, GRACE_MS, silentLogger);
  });
  afterEach(async () => {
    await sessions.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('touches every room with peers in one store call per sweep and keeps their sessions alive', async () => {
    const rooms = Array.from({ length: 50 }, (_, i) => room(`doc-${i}`));
    const opened = Date.now();
    for (const r of rooms) await store.openSession(r.key, { now: opened, graceMs: GRACE_MS, persistent: false });
    const ended: string[] = [];
    for (const r of rooms) sessions.add(r, () => ended.push(r.key.docId));
    await store.nextSweep();
    await store.nextSweep();
    for (const call of store.calls) {
      assert.deepEqual(
        call.touches.map((t) => t.doc.docId),
        rooms.map((r) => r.key.docId),
        'every room, in one call',
      );
      assert.deepEqual(call.ended, []);
    }
    assert.deepEqual(ended, []);
    // A grace period after the last touch, later than a grace period after the opening: alive only by the touches.
    const touchedAt = store.calls.at(-1)!.now;
    assert.ok(touchedAt > opened, 'the sweep touched after the opening');
    for (const r of rooms) {
      assert.equal((await store.openSession(r.key, { now: touchedAt + GRACE_MS, graceMs: GRACE_MS, persistent: false })).epoch, 1, r.key.docId);
    }
  });

  it('tells only the rooms whose session is gone, and touches neither removed nor closed rooms', async () => {
    const [kept, deleted, renewed, removed, closed] = ['kept', 'deleted', 'renewed', 'removed', 'closed'].map(room);
    const now = Date.now();
    for (const r of [kept!, deleted!, renewed!, removed!, closed!]) await store.openSession(r.key, { now, graceMs: GRACE_MS, persistent: false });
    const ended: string[] = [];
    for (const r of [kept!, deleted!, renewed!, removed!, closed!]) sessions.add(r, () => ended.push(r.key.docId));
    await store.deleteDocument(deleted!.key);
    // The room moved on to the session's next epoch (as after a reload): that epoch is the one it holds.
    renewed!.epoch = 2;
    await store.deleteDocument(renewed!.key);
    await store.openSession(renewed!.key, { now, graceMs: GRACE_MS, persistent: false });
    await store.openSession(renewed!.key, { now: now + GRACE_MS + 1, graceMs: GRACE_MS, persistent: false });
    sessions.remove(removed!);
    closed!.closed = true;
    await store.nextSweep();
    assert.deepEqual(
      store.calls[0]!.touches.map((t) => `${t.doc.docId}@${t.epoch}`),
      ['kept@1', 'deleted@1', 'renewed@2'],
    );
    assert.deepEqual(ended, ['deleted']);
  });

  it('sweeps again once a room is added after the last one was removed', async () => {
    const only = room('only');
    await store.openSession(only.key, { now: Date.now(), graceMs: GRACE_MS, persistent: false });
    sessions.add(only, () => assert.fail('the session is alive'));
    await store.nextSweep();
    sessions.remove(only);
    assert.equal(sessions.size, 0);
    const before = store.calls.length;
    sessions.add(only, () => assert.fail('the session is alive'));
    await store.nextSweep();
    assert.equal(store.calls.length, before + 1);
    assert.deepEqual(store.calls.at(-1)!.touches.map((t) => t.doc.docId), ['only']);
  });
});
