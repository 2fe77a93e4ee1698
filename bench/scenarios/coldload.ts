/**
 * 5. Cold load of the B4 document (259,778 edits, whole history): a new client's connect → synced with the
 * document in the server's memory (every stack), and after a restart, when the server first loads it from its store,
 * for the stacks that have one: Wave (SQLite) and hocuspocus-sqlite (its Database extension's `fetch`, one row).
 * y-websocket and Hocuspocus in memory have no restart case.
 */
import { loadB4 } from '../lib/b4.ts';
import { startServer, type RunningBenchServer, type Stack } from '../lib/servers.ts';
import { holdScript, serveScript } from '../lib/spawn.ts';
import { summarize, type Summary } from '../lib/stats.ts';

export interface ColdloadResult {
  skipped?: string;
  edits?: number;
  updateBytes?: number;
  /** ms, connect → synced with the whole document, document already in the server's memory. */
  warm: Record<string, Summary>;
  /** Wave: connect → synced, first client after a restart (server loads from SQLite). */
  waveAfterRestart?: Summary;
  /** Durable peers (hocuspocus-sqlite): the same after a restart (the document loaded through `fetch`). */
  peerAfterRestart?: Record<string, Summary>;
  /** Wave: estimated server load time = after-restart − warm (medians). */
  waveServerLoadMs?: number;
  seedMs: Record<string, number>;
}

/**
 * The first probes of a fresh process run cold code (JIT) on both ends; they are not what a page sees twice. The
 * same probe process, warmed by them, also measures after each restart, so that the after-restart time is the
 * server's load and not the probe's own first run (a fresh process's first probe spends more on its own cold code
 * than the server spends loading B4).
 */
const WARMUP_PROBES = 2;

const STACKS: Stack[] = [
  { name: 'wave', server: 'wave', client: 'wave' },
  { name: 'y-websocket', server: 'y-websocket', client: 'y-websocket' },
  { name: 'hocuspocus', server: 'hocuspocus', client: 'hocuspocus' },
  { name: 'hocuspocus-sqlite', server: 'hocuspocus-sqlite', client: 'hocuspocus' },
];

/** Resolves once the server's `store` callback has run (hocuspocus-sqlite stores 2 s after the seed's last change). */
async function storedOnce(server: RunningBenchServer): Promise<void> {
  const deadline = Date.now() + 15_000;
  while ((await server.storeCount!()) < 1) {
    if (Date.now() > deadline) throw new Error(`${server.kind}: the seeded document was not stored within 15 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function coldload(opts: { runs: number; log: (s: string) => void }): Promise<ColdloadResult> {
  const b4 = await loadB4();
  if (!b4) return { skipped: 'B4 trace not found (../shared/data/automerge-paper.json.gz; set BENCH_B4)', warm: {}, seedMs: {} };
  const result: ColdloadResult = { edits: b4.edits, updateBytes: b4.update.length, warm: {}, seedMs: {} };
  try {
    for (const stack of STACKS) {
      const clientKind = stack.client;
      let server: RunningBenchServer = await startServer(stack.server, { persistent: true });
      try {
        const docId = 'b4';
        // The seeding client stays connected during the warm probes (servers without persistence drop a document
        // when its last client leaves), as an author's page would.
        const holder = await holdScript<{ seededMs: number; length: number }>('lib/sync-probe.ts', [clientKind, server.url, docId, 'seed', server.apiKey ?? '-']);
        result.seedMs[stack.name] = holder.value.seededMs;
        // The durable peer's debounced store of the seeded document happens before the probes, not during one.
        if (server.storeCount) await storedOnce(server);
        // Warm-up probes, then `runs` measured ones, each a new Y.Doc and connection (what a new page does).
        const prober = serveScript<{ ms: number }>('lib/sync-probe.ts', [clientKind, '-', docId, 'serve', server.apiKey ?? '-', String(b4.endLength)]);
        try {
          const warm: number[] = [];
          for (let i = 0; i < opts.runs + WARMUP_PROBES; i++) warm.push((await prober.ask(server.url)).ms);
          result.warm[stack.name] = summarize(warm.slice(WARMUP_PROBES));
          await holder.stop();
          opts.log(`  coldload ${stack.name}: warm ${result.warm[stack.name]!.median.toFixed(0)} ms`);
          if (server.restart) {
            const cold: number[] = [];
            for (let i = 0; i < opts.runs; i++) {
              server = await server.restart!();
              cold.push((await prober.ask(server.url)).ms);
            }
            if (stack.server === 'wave') {
              result.waveAfterRestart = summarize(cold);
              result.waveServerLoadMs = result.waveAfterRestart.median - result.warm.wave!.median;
            } else (result.peerAfterRestart ??= {})[stack.name] = summarize(cold);
            opts.log(`  coldload ${stack.name} after restart: ${summarize(cold).median.toFixed(0)} ms`);
          }
        } finally {
          await prober.stop();
        }
      } finally {
        await server.stop();
      }
    }
  } finally {
    /* servers stopped above */
  }
  return result;
}
