/**
 * ws/key-guard.ts (S15) in isolation: which changes withdraw a connection's access, and the ordering rules that keep
 * a late store answer from undoing a newer one. A store whose `findKey` answers when the test says so stands in for
 * the real ones (their notifications are covered by the store contract and security-key-changes.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Logger } from '../src/log.js';
import type { KeyRecord } from '../src/store/types.js';
import { KeyGuard, accessWithdrawn } from '../src/ws/key-guard.js';
import type { GuardedConnection } from '../src/ws/key-guard.js';

const KEY: KeyRecord = {
  apiKey: 'wk_a',
  name: 'a',
  account: 'a',
  origins: [],
  requireToken: false,
  persistent: false,
  maxUsers: null,
  createdAt: 1,
  revokedAt: null,
};

const silent: Logger = { info() {}, warn() {}, error() {} };

describe('accessWithdrawn', () => {
  const browser = { origin: 'https://a.example', host: 'wave.example', token: false };
  it('keeps access while the key still allows the connection', () => {
    assert.equal(accessWithdrawn(KEY, browser), undefined);
    assert.equal(accessWithdrawn({ ...KEY, origins: ['https://a.example'] }, browser), undefined);
    assert.equal(accessWithdrawn({ ...KEY, origins: ['self'] }, { ...browser, origin: 'https://wave.example' }), undefined);
    assert.equal(accessWithdrawn({ ...KEY, requireToken: true }, { ...browser, token: true }), undefined);
    assert.equal(accessWithdrawn({ ...KEY, origins: ['https://b.example'] }, { ...browser, origin: undefined }), undefined, 'no Origin: not a browser page');
    assert.equal(accessWithdrawn({ ...KEY, requireToken: true }, { ...browser, token: undefined }), undefined, 'Hello not checked yet: it will apply the new rule');
  });

  it('names why access was withdrawn', () => {
    assert.match(accessWithdrawn({ ...KEY, revokedAt: 2 }, browser) ?? '', /revoked/);
    assert.match(accessWithdrawn(undefined, browser) ?? '', /revoked/);
    assert.match(accessWithdrawn({ ...KEY, origins: ['https://b.example'] }, browser) ?? '', /origin https:\/\/a\.example is no longer allowed/);
    assert.match(accessWithdrawn({ ...KEY, requireToken: true }, browser) ?? '', /requires a token/);
  });
});

/** A connection that records the records it was re-checked with. */
function connection(apiKey: string): GuardedConnection & { seen: Array<KeyRecord | undefined> } {
  const seen: Array<KeyRecord | undefined> = [];
  return { apiKey, seen, keyChanged: (key) => void seen.push(key) };
}

/** A store whose answers are released by the test, in any order. */
function heldStore(): { findKey(apiKey: string): Promise<KeyRecord | undefined>; answer(index: number, key: KeyRecord | undefined): void; asked: string[] } {
  const pending: Array<(key: KeyRecord | undefined) => void> = [];
  const asked: string[] = [];
  return {
    asked,
    findKey(apiKey) {
      asked.push(apiKey);
      return new Promise((resolve) => pending.push(resolve));
    },
    answer(index, key) {
      pending[index]!(key);
    },
  };
}

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('KeyGuard', () => {
  it('re-checks every open connection of a changed key, once per key for "any key"', async () => {
    const store = heldStore();
    const a1 = connection('wk_a');
    const a2 = connection('wk_a');
    const b = connection('wk_b');
    const guard = new KeyGuard(store, () => [a1, a2, b], silent);
    guard.changed('wk_a');
    store.answer(0, { ...KEY, revokedAt: 5 });
    await settle();
    assert.deepEqual([a1.seen.length, a2.seen.length, b.seen.length], [1, 1, 0]);
    guard.changed(undefined);
    assert.deepEqual(store.asked, ['wk_a', 'wk_a', 'wk_b']);
  });

  it('drops an older answer that arrives after a newer one', async () => {
    const store = heldStore();
    const a = connection('wk_a');
    const guard = new KeyGuard(store, () => [a], silent);
    guard.changed('wk_a');
    guard.changed('wk_a');
    const revoked = { ...KEY, revokedAt: 5 };
    store.answer(1, revoked);
    await settle();
    store.answer(0, KEY);
    await settle();
    assert.deepEqual(a.seen, [revoked]);
  });

  it('re-checks a connection whose key was read before a change was reported', async () => {
    const store = heldStore();
    const a = connection('wk_a');
    const guard = new KeyGuard(store, () => [], silent);
    const readBefore = guard.generation;
    guard.changed('wk_a');
    guard.opened(connection('wk_a'), guard.generation);
    assert.deepEqual(store.asked, ['wk_a'], 'read after the change: nothing to re-check');
    guard.opened(a, readBefore);
    assert.deepEqual(store.asked, ['wk_a', 'wk_a']);
    store.answer(1, { ...KEY, revokedAt: 5 });
    await settle();
    assert.equal(a.seen.length, 1);
  });
});
