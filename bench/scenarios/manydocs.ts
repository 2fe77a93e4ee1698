/**
 * 3 and 4. Many documents: D documents × 2 clients, one insert per client per second. Delivery p50/p99, server CPU,
 * RSS per document (RSS growth over the idle server / D), time to connect every client; for Wave the ack latency.
 * Hocuspocus runs twice: one socket per document and client, and multiplexed (each simulated browser carries 50
 * documents on one socket).
 */
import { runLoad, type LoadResult } from '../lib/loadgen.ts';
import { rssBytes } from '../lib/proc.ts';
import { startServer, type ServerKind } from '../lib/servers.ts';
import { BUSY_OTHER_CPU_PERCENT, RETRIES_WHEN_BUSY, failures, mayRetry } from './fanout.ts';
import type { ClientKind } from '../lib/clients.ts';

export const MANYDOCS_STACKS: Array<[ServerKind, ClientKind]> = [
  ['wave', 'wave'],
  ['y-websocket', 'y-websocket'],
  ['hocuspocus', 'hocuspocus'],
  ['hocuspocus', 'hocuspocus-mux'],
];

const INTERVAL_MS = 1_000;
/** 2,000 clients at 1 edit/s: two processes keep each event loop's queue short. */
const WORKERS = 2;

export type ManydocsRun = LoadResult & { idleRssBytes: number; rssPerDocBytes: number };
export type ManydocsRuns = Record<string, ManydocsRun[]>;

export async function manydocs(opts: { docs: number; runs: number; durationMs: number; warmupMs: number; log: (s: string) => void }): Promise<ManydocsRuns> {
  const out: ManydocsRuns = {};
  for (let run = 0; run < opts.runs; run++) {
    for (const [serverKind, clientKind] of MANYDOCS_STACKS) {
      let run_: ManydocsRun | undefined;
      /** Of the attempts, the one during which other processes used the least CPU. */
      let kept: ManydocsRun | undefined;
      for (let attempt = 0; attempt <= RETRIES_WHEN_BUSY && !run_?.quiet && (attempt === 0 || mayRetry()); attempt++) {
        const server = await startServer(serverKind);
        try {
          await new Promise((r) => setTimeout(r, 300));
          const idle = rssBytes(server.pid);
          const r = await runLoad({
            kind: clientKind,
            server,
            docs: opts.docs,
            clientsPerDoc: 2,
            intervalMs: INTERVAL_MS,
            durationMs: opts.durationMs,
            warmupMs: opts.warmupMs,
            workers: WORKERS,
            docPrefix: `many-${run}`,
          });
          const rssPerDocBytes = (r.server.rssBytes - idle) / opts.docs;
          run_ = { ...r, idleRssBytes: idle, rssPerDocBytes, quiet: (r.otherCpuPercent ?? 0) <= BUSY_OTHER_CPU_PERCENT, attempt: attempt + 1 };
          if (!kept || (run_.otherCpuPercent ?? 0) < (kept.otherCpuPercent ?? 0)) kept = run_;
          if (!run_.quiet) opts.log(`  manydocs ${clientKind} run ${run + 1}: other processes used ${r.otherCpuPercent!.toFixed(0)} % of a core meanwhile`);
          opts.log(`  manydocs ${clientKind} run ${run + 1}: p50 ${r.delivery.p50.toFixed(2)} p99 ${r.delivery.p99.toFixed(2)} ms, server ${r.server.cpuPercent.toFixed(0)}% CPU, ${(rssPerDocBytes / 1024).toFixed(1)} KB/doc, connect ${r.connectMs.toFixed(0)} ms, loadgen ${r.loadgenCpuPercent.toFixed(0)}%${r.ack ? `, ack p99 ${r.ack.p99.toFixed(2)}` : ''}`);
        } catch (err) {
          opts.log(`  manydocs ${clientKind} run ${run + 1} FAILED: ${(err as Error).message}`);
          failures.push(`many documents ${clientKind} run ${run + 1}: ${(err as Error).message}`);
          break;
        } finally {
          await server.stop();
        }
      }
      if (kept) (out[clientKind] ??= []).push(kept);
    }
  }
  return out;
}
