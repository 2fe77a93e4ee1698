/**
 * 3 and 4. Many documents: D documents × 2 clients, one insert per client per second. Delivery p50/p99, server CPU,
 * RSS per document (RSS growth over the idle server / D), time to connect every client; for Wave the ack latency.
 * Hocuspocus runs in memory and storing through its Database extension into SQLite, each with one socket per
 * document and client, and multiplexed (each simulated browser carries 50 documents on one socket).
 * The scaling run repeats this at several sizes (scenarios/scaling.ts).
 */
import { runLoad, type LoadResult } from '../lib/loadgen.ts';
import { rssBytes } from '../lib/proc.ts';
import { startServer, type Stack } from '../lib/servers.ts';
import { BUSY_OTHER_CPU_PERCENT, RETRIES_WHEN_BUSY, failures, mayRetry } from './fanout.ts';

export const MANYDOCS_STACKS: Stack[] = [
  { name: 'wave', server: 'wave', client: 'wave' },
  { name: 'y-websocket', server: 'y-websocket', client: 'y-websocket' },
  { name: 'hocuspocus', server: 'hocuspocus', client: 'hocuspocus' },
  { name: 'hocuspocus-mux', server: 'hocuspocus', client: 'hocuspocus-mux' },
  { name: 'hocuspocus-sqlite', server: 'hocuspocus-sqlite', client: 'hocuspocus' },
  { name: 'hocuspocus-sqlite-mux', server: 'hocuspocus-sqlite', client: 'hocuspocus-mux' },
];

/** The issue's rate for many documents: one insert per client per second. */
const INTERVAL_MS = 1_000;
/** 2,000 clients at 1 edit/s: two processes keep each event loop's queue short. */
const WORKERS = 2;
/**
 * Documents start editing at random offsets over Hocuspocus's maxDebounce (10 s), and the warm-up covers it: at one
 * insert per client per second a document never has the 2 s quiet period of Hocuspocus's debounce, so the durable
 * peer stores each document 10 s after its first unstored change. Started together, every document would be due in
 * the same second, a burst of whole-document writes no long-running server sees; spread, the stores come at a
 * steady rate (documents / 10 s), as on a server whose documents were opened at different times. The same load
 * for every stack.
 */
const START_SPREAD_MS = 10_000;

export type ManydocsRun = LoadResult & { idleRssBytes: number; rssPerDocBytes: number };
export type ManydocsRuns = Record<string, ManydocsRun[]>;

/**
 * One measurement of `docs` documents × 2 clients on a fresh server of `stack`, repeated once when other processes
 * were busy meanwhile (the quieter attempt is returned); undefined when it failed (listed in `failures`).
 */
export async function measureDocs(o: {
  stack: Stack;
  docs: number;
  intervalMs: number;
  durationMs: number;
  warmupMs: number;
  docPrefix: string;
  /** Passed to the load generator: documents start editing at random offsets in [0, startSpreadMs). */
  startSpreadMs?: number;
  /** How the log and `failures` name this measurement, e.g. "manydocs wave run 1". */
  label: string;
  log: (s: string) => void;
}): Promise<ManydocsRun | undefined> {
  let run_: ManydocsRun | undefined;
  /** Of the attempts, the one during which other processes used the least CPU. */
  let kept: ManydocsRun | undefined;
  for (let attempt = 0; attempt <= RETRIES_WHEN_BUSY && !run_?.quiet && (attempt === 0 || mayRetry()); attempt++) {
    const server = await startServer(o.stack.server);
    try {
      await new Promise((r) => setTimeout(r, 300));
      const idle = rssBytes(server.pid);
      const r = await runLoad({
        kind: o.stack.client,
        server,
        docs: o.docs,
        clientsPerDoc: 2,
        intervalMs: o.intervalMs,
        durationMs: o.durationMs,
        warmupMs: o.warmupMs,
        workers: WORKERS,
        docPrefix: o.docPrefix,
        startSpreadMs: o.startSpreadMs,
      });
      const rssPerDocBytes = (r.server.rssBytes - idle) / o.docs;
      run_ = { ...r, idleRssBytes: idle, rssPerDocBytes, quiet: (r.otherCpuPercent ?? 0) <= BUSY_OTHER_CPU_PERCENT, attempt: attempt + 1 };
      if (!kept || (run_.otherCpuPercent ?? 0) < (kept.otherCpuPercent ?? 0)) kept = run_;
      if (!run_.quiet) o.log(`  ${o.label}: other processes used ${r.otherCpuPercent!.toFixed(0)} % of a core meanwhile`);
      o.log(`  ${o.label}: p50 ${r.delivery.p50.toFixed(2)} p99 ${r.delivery.p99.toFixed(2)} ms, server ${r.server.cpuPercent.toFixed(0)}% CPU, ${(rssPerDocBytes / 1024).toFixed(1)} KB/doc, connect ${r.connectMs.toFixed(0)} ms, loadgen ${r.loadgenCpuPercent.toFixed(0)}% (event-loop delay p99 ${r.loadgenLoopDelayMs?.p99.toFixed(0) ?? '–'} ms)${r.ack ? `, ack p99 ${r.ack.p99.toFixed(2)}` : ''}${r.storesPerSecond !== undefined ? `, ${r.storesPerSecond.toFixed(0)} stores/s` : ''}`);
    } catch (err) {
      o.log(`  ${o.label} FAILED: ${(err as Error).message}`);
      failures.push(`${o.label}: ${(err as Error).message}`);
      break;
    } finally {
      await server.stop();
    }
  }
  return kept;
}

export async function manydocs(opts: { docs: number; runs: number; durationMs: number; warmupMs: number; log: (s: string) => void }): Promise<ManydocsRuns> {
  const out: ManydocsRuns = {};
  // Runs interleave the stacks (wave, peers, wave, …) so that slow drifts of the shared machine hit all alike.
  for (let run = 0; run < opts.runs; run++) {
    for (const stack of MANYDOCS_STACKS) {
      const kept = await measureDocs({
        stack,
        docs: opts.docs,
        intervalMs: INTERVAL_MS,
        durationMs: opts.durationMs,
        warmupMs: START_SPREAD_MS + opts.warmupMs,
        startSpreadMs: START_SPREAD_MS,
        docPrefix: `many-${run}`,
        label: `many documents ${stack.name} run ${run + 1}`,
        log: opts.log,
      });
      if (kept) (out[stack.name] ??= []).push(kept);
    }
  }
  return out;
}
