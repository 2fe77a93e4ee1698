// The session lifecycle (core/session-state.ts): its phases are the status `state`, an outage is reported once, and
// a transition the machine does not list is refused with an assertion, never taken.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IllegalTransition, SessionLifecycle } from '../src/core/session-state.js';

test('connecting: failed attempts report the outage once, and stay connecting (not synced)', () => {
  const life = new SessionLifecycle();
  assert.equal(life.state, 'connecting');
  assert.equal(life.synced, false);
  assert.deepEqual(life.connectionLost(), { changed: false, newOutage: true });
  assert.deepEqual(life.connectionLost(), { changed: false, newOutage: false });
  assert.equal(life.state, 'connecting');
  assert.equal(life.synced, false);
});

test('online ↔ offline: each loss after being online is a new outage; retries while offline are not', () => {
  const life = new SessionLifecycle();
  assert.equal(life.goOnline(), true);
  assert.equal(life.online, true);
  assert.equal(life.synced, true);
  assert.equal(life.goOnline(), false, 'a second step2 on one connection changes nothing');
  assert.deepEqual(life.connectionLost(), { changed: true, newOutage: true });
  assert.equal(life.state, 'offline');
  assert.equal(life.synced, true, 'a later step2 is a resync');
  assert.deepEqual(life.connectionLost(), { changed: false, newOutage: false });
  assert.equal(life.goOnline(), true);
  assert.deepEqual(life.connectionLost(), { changed: true, newOutage: true });
});

test('stopped is final: every transition out of it, and a second stop, is refused', () => {
  for (const before of ['connecting', 'online', 'offline'] as const) {
    const life = new SessionLifecycle();
    if (before !== 'connecting') life.goOnline();
    if (before === 'offline') life.connectionLost();
    assert.equal(life.state, before);
    life.stop();
    assert.equal(life.state, 'stopped');
    assert.equal(life.stopped, true);
    assert.equal(life.online, false);
    assert.throws(() => life.goOnline(), IllegalTransition);
    assert.throws(() => life.connectionLost(), IllegalTransition);
    assert.throws(() => life.stop(), IllegalTransition);
    assert.equal(life.state, 'stopped', 'a refused transition leaves the phase as it was');
  }
});
