// Small helpers shared by the e2e tests: bounded polling and seeded randomness.
import { createServer, type AddressInfo } from 'node:net';

/** Polls `check` until it returns a truthy value, or fails after `timeoutMs` with `message` and the last value. */
export async function waitUntil<T>(
  check: () => Promise<T> | T,
  { timeoutMs = 10_000, intervalMs = 50, message = 'condition' }: { timeoutMs?: number; intervalMs?: number; message?: string | (() => string | Promise<string>) } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastError: unknown;
  for (;;) {
    try {
      last = await check();
      if (last) return last;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) break;
    // Pacing of the poll only; correctness never depends on this delay.
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  const text = typeof message === 'function' ? await message() : message;
  const cause = lastError ? `; last error: ${String((lastError as Error)?.message ?? lastError)}` : '';
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${text} (last value: ${JSON.stringify(last)})${cause}`);
}

/** mulberry32: a tiny deterministic PRNG, good enough to shape input; returns floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The seed for one test: `WAVE_E2E_SEED` when set (to replay a failure), else a fresh one. It is always printed,
 * so that every random choice can be reproduced.
 */
export function testSeed(label: string): number {
  const fromEnv = process.env.WAVE_E2E_SEED;
  const seed = fromEnv ? Number(fromEnv) >>> 0 : (Math.random() * 2 ** 32) >>> 0;
  console.log(`${label}: seed=${seed} (replay with WAVE_E2E_SEED=${seed})`);
  return seed;
}

/** A document id no earlier run has used, readable in server logs. */
export function freshDocId(label: string): string {
  return `e2e-${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/** A TCP port free on 127.0.0.1 right now (for a server restarted on the same address). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const { port } = srv.address() as AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}
