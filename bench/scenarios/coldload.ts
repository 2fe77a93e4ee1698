/**
 * 5. Cold load of the B4 document (259,778 edits, whole history): a new client's connect → synced with the
 * document in the server's memory (every stack), and for Wave the same after a restart, when the server first loads
 * it from SQLite. The peers run without persistence (as benchmarked), so they have no restart case.
 */
import { loadB4 } from '../lib/b4.ts';
import { startServer, type RunningBenchServer, type ServerKind } from '../lib/servers.ts';
import { holdScript, runScript } from '../lib/spawn.ts';
import { summarize, type Summary } from '../lib/stats.ts';
import type { ClientKind } from '../lib/clients.ts';

export interface ColdloadResult {
  skipped?: string;
  edits?: number;
  updateBytes?: number;
  /** ms, connect → synced with the whole document, document already in the server's memory. */
  warm: Record<string, Summary>;
  /** Wave: connect → synced, first client after a restart (server loads from SQLite). */
  waveAfterRestart?: Summary;
  /** Wave: estimated server load time = after-restart − warm (medians). */
  waveServerLoadMs?: number;
  seedMs: Record<string, number>;
}

/** The first probes of a fresh process run cold code (JIT) on both ends; they are not what a page sees twice. */
const WARMUP_PROBES = 2;

const STACKS: Array<[ServerKind, ClientKind]> = [
  ['wave', 'wave'],
  ['y-websocket', 'y-websocket'],
  ['hocuspocus', 'hocuspocus'],
];

export async function coldload(opts: { runs: number; log: (s: string) => void }): Promise<ColdloadResult> {
  const b4 = await loadB4();
  if (!b4) return { skipped: 'B4 trace not found (../shared/data/automerge-paper.json.gz; set BENCH_B4)', warm: {}, seedMs: {} };
  const result: ColdloadResult = { edits: b4.edits, updateBytes: b4.update.length, warm: {}, seedMs: {} };
  try {
    for (const [serverKind, clientKind] of STACKS) {
      let server: RunningBenchServer = await startServer(serverKind, { persistent: true });
      try {
        const docId = 'b4';
        // The seeding client stays connected during the warm probes (servers without persistence drop a document
        // when its last client leaves), as an author's page would.
        const holder = await holdScript<{ seededMs: number; length: number }>('lib/sync-probe.ts', [clientKind, server.url, docId, 'seed', server.apiKey ?? '-']);
        result.seedMs[clientKind] = holder.value.seededMs;
        // Warm-up probes, then `runs` measured ones, each a new Y.Doc and connection (what a new page does).
        const warm = await runScript<{ times: number[] }>('lib/sync-probe.ts', [clientKind, server.url, docId, 'probe', server.apiKey ?? '-', String(b4.endLength), String(opts.runs + WARMUP_PROBES)]);
        result.warm[clientKind] = summarize(warm.times.slice(WARMUP_PROBES));
        await holder.stop();
        opts.log(`  coldload ${clientKind}: warm ${result.warm[clientKind]!.median.toFixed(0)} ms`);
        if (serverKind === 'wave') {
          const cold: number[] = [];
          for (let i = 0; i < opts.runs; i++) {
            server = await server.restart!();
            const probe = await runScript<{ times: number[] }>('lib/sync-probe.ts', [clientKind, server.url, docId, 'probe', server.apiKey!, String(b4.endLength), '1']);
            cold.push(probe.times[0]!);
          }
          result.waveAfterRestart = summarize(cold);
          result.waveServerLoadMs = result.waveAfterRestart.median - result.warm.wave!.median;
          opts.log(`  coldload wave after restart: ${result.waveAfterRestart.median.toFixed(0)} ms`);
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
