/**
 * 7. Scaling: the many-documents load at several sizes (issue: 1,000, 2,000 and 4,000 documents × 2 clients), to
 * tell whether server CPU per document, delivery p99 and RSS per document stay flat as the number of documents grows.
 *
 * Each client inserts one character every `intervalMs` (4 s by default, a quarter of the many-documents rate): the
 * largest size then carries the many-documents load of 1,000 documents (2,000 edits/s). At the many-documents rate,
 * 4,000 documents would need about 1.5 cores for Wave's server and 2 for the load generators, whose
 * pinned cores are one each on this machine: the run would measure saturated cores, not how a stack scales.
 * Stacks: Wave, y-websocket, and Hocuspocus in memory and storing through its Database extension, both multiplexed
 * (their better transport in the many-documents run), interleaved within each size.
 */
import type { Stack } from '../lib/servers.ts';
import { MANYDOCS_STACKS, measureDocs, type ManydocsRun } from './manydocs.ts';

export const SCALING_STACKS: Stack[] = MANYDOCS_STACKS.filter((s) => ['wave', 'y-websocket', 'hocuspocus-mux', 'hocuspocus-sqlite-mux'].includes(s.name));

export interface ScalingResult {
  /** Documents per size, ascending. */
  sizes: number[];
  clientsPerDoc: number;
  /** ms between two inserts of one client. */
  intervalMs: number;
  durationMs: number;
  /** size → stack → runs. */
  runs: Record<string, Record<string, ManydocsRun[]>>;
}

export async function scaling(opts: {
  sizes: number[];
  intervalMs: number;
  runs: number;
  durationMs: number;
  warmupMs: number;
  log: (s: string) => void;
  /** Filled in place, so that a stopped run keeps the sizes already measured. */
  out?: ScalingResult;
  checkpoint?: () => void;
}): Promise<ScalingResult> {
  const sizes = [...opts.sizes].sort((a, b) => a - b);
  const out: ScalingResult = Object.assign(opts.out ?? ({} as ScalingResult), { sizes, clientsPerDoc: 2, intervalMs: opts.intervalMs, durationMs: opts.durationMs, runs: {} });
  for (let run = 0; run < opts.runs; run++) {
    for (const docs of sizes) {
      for (const stack of SCALING_STACKS) {
        const kept = await measureDocs({
          stack,
          docs,
          intervalMs: opts.intervalMs,
          durationMs: opts.durationMs,
          warmupMs: opts.warmupMs,
          docPrefix: `scale-${docs}-${run}`,
          label: `scaling ${docs} documents ${stack.name} run ${run + 1}`,
          log: opts.log,
        });
        if (kept) ((out.runs[docs] ??= {})[stack.name] ??= []).push(kept);
      }
      opts.checkpoint?.();
    }
  }
  return out;
}
