import { test } from 'node:test';
import assert from 'node:assert/strict';
import { refreshDelay, tokenExpiry } from '../src/core/token-refresh.js';

const NOW = 1_700_000_000_000;

test('tokens are refreshed a minute before exp, halfway for short lives, with backoff when they look expired', () => {
  assert.equal(refreshDelay(undefined, NOW, 0), undefined, 'no exp: nothing to schedule');
  assert.equal(refreshDelay(NOW + 3_600_000, NOW, 0), 3_540_000);
  assert.equal(refreshDelay(NOW + 60_000, NOW, 0), 30_000);
  assert.equal(refreshDelay(NOW + 5_000, NOW, 0), 2_500);
  // Expired here (a clock difference with the backend, or inside the server's skew): ask soon, then back off.
  assert.deepEqual([0, 1, 2, 3, 10].map((attempt) => refreshDelay(NOW - 290_000, NOW, attempt)), [1_000, 2_000, 4_000, 8_000, 60_000]);
  assert.equal(refreshDelay(NOW + 3_600_000, NOW, 1), 2_000, 'after a failure the retry backs off instead of waiting for exp');
  assert.equal(refreshDelay(NOW + 10 * 365 * 86_400_000, NOW, 0), 2 ** 31 - 1);
});

test('exp is read from the JWT payload without verification', () => {
  const payload = Buffer.from(JSON.stringify({ exp: 1_700_000_123, user: 'Zoë' })).toString('base64url');
  assert.equal(tokenExpiry(`eyJhbGciOiJIUzI1NiJ9.${payload}.sig`), 1_700_000_123_000);
  assert.equal(tokenExpiry('opaque'), undefined);
  assert.equal(tokenExpiry('a.!!!.c'), undefined);
  const noExp = Buffer.from(JSON.stringify({ docId: 'd' })).toString('base64url');
  assert.equal(tokenExpiry(`h.${noExp}.s`), undefined);
});
