/**
 * Small helpers shared by the client's integration tests: waiting on conditions, seeded randomness, free ports,
 * percentiles. `rng` differs from session-ws.test.ts's private copy by mixing the seed first (that test's seeds
 * were chosen for its own generator).
 */
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';

/** True for `npm run test:long` (RELIABILITY.md long forms). */
export const LONG = process.env['WAVE_LONG'] === '1';

/**
 * Throws as a browser's `WebSocket.close(code)` does for a code it may not send: anything but 1000 and 3000–4999
 * (WHATWG WebSockets Standard, `close()`: InvalidAccessError). The test sockets stand in for a browser's.
 */
export function assertBrowserCloseCode(code: number | undefined): void {
  if (code === undefined || code === 1000 || (code >= 3000 && code <= 4999)) return;
  throw new Error(`InvalidAccessError: Failed to execute 'close' on 'WebSocket': The close code must be either 1000, or between 3000 and 4999. ${code} is neither.`);
}

/**
 * Resolves when `check()` holds; fails after `ms` with `what` (a function: called then, to describe the state that
 * did not settle). Polls every 20 ms (a condition, not a sleep).
 */
export async function until(what: string | (() => string), check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out after ${ms} ms waiting for: ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Waits `ms` to *create* a situation (a server kept down, a client kept offline, edits paced at a rate). Never
 * used to wait for an outcome: that is `until`.
 */
export function hold(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** One macrotask: lets I/O callbacks, `setImmediate` work and promise chains of other components run. */
export function turn(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}

export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const { port } = srv.address() as AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

/**
 * xorshift32: a small deterministic generator in [0, 1). The seed is mixed first (murmur3's finaliser), so that
 * nearby seeds (seed + i per client) give unrelated streams; plain xorshift's first outputs for them are alike.
 */
export function rng(seed: number): () => number {
  let x = Math.imul((seed >>> 0) ^ ((seed / 2 ** 32) >>> 0), 0x9e3779b1) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b) >>> 0;
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35) >>> 0;
  x = (x ^ (x >>> 16)) >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

/**
 * The seed of a randomized test: `process.env[envName]` when set (replay), else a fresh one. Printed together
 * with the way to replay it (STYLE.md §5).
 */
export function testSeed(label: string, envName: string): number {
  const given = process.env[envName];
  const seed = given !== undefined && given !== '' ? Number(given) : Math.floor(Math.random() * 1_000_000_000);
  if (!Number.isSafeInteger(seed)) throw new TypeError(`${envName}=${given}: expected an integer seed`);
  console.log(`${label}: seed ${seed} (replay with ${envName}=${seed})`);
  return seed;
}

export function randomInt(random: () => number, below: number): number {
  return Math.floor(random() * below);
}

/** A random string of `length` characters from a small alphabet (with spaces and newlines, like prose). */
export function randomText(random: () => number, length: number): string {
  // BMP only: a UTF-16 index never falls inside a surrogate pair, as with a real editor's selection.
  const alphabet = 'abcdefghijklmnopqrstuvwxyz      \nABCÄé';
  const chars = [...alphabet];
  let out = '';
  for (let i = 0; i < length; i++) out += chars[randomInt(random, chars.length)];
  return out;
}

/** The q-quantile (0 < q ≤ 1) of `values` by nearest rank; NaN when empty. */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}
