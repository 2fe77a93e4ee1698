/** Runs load-generator processes (pinned to core 1), joins their sends and receives, and samples the server. */
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { BENCH_DIR, LOADGEN_CORE, type RunningBenchServer } from './servers.ts';
import { ProcSampler, machineBusySeconds } from './proc.ts';
import { distribution, type Distribution } from './stats.ts';
import type { WorkerConfig, WorkerResult } from './loadgen-worker.ts';
import type { ClientKind } from './clients.ts';

export interface LoadOptions {
  kind: ClientKind;
  server: RunningBenchServer;
  docs: number;
  clientsPerDoc: number;
  intervalMs: number;
  durationMs: number;
  warmupMs: number;
  /** Number of load-generator processes. */
  workers: number;
  docPrefix: string;
  /** Documents start editing at random offsets in [0, startSpreadMs) (worker option; the warm-up should cover it). */
  startSpreadMs?: number;
}

export interface LoadResult {
  delivery: Distribution;
  /** Deliveries seen / expected (sends × other clients of the document). */
  delivered: number;
  ack: Distribution | null;
  connectMs: number;
  connectFailures: number;
  sends: number;
  server: { cpuPercent: number; rssBytes: number; peakRssBytes: number };
  /** Sum over load-generator processes, in % of one core. */
  loadgenCpuPercent: number;
  /** The load generators' event-loop delay in the window, ms (largest p99 and max over the processes). */
  loadgenLoopDelayMs?: { p99: number; max: number };
  /** CPU used by everything else on the machine during the window, % of one core (of 100 × cores). */
  otherCpuPercent?: number;
  /** Set by the scenarios: other processes stayed under the busy threshold; which attempt this was. */
  quiet?: boolean;
  attempt?: number;
  /** hocuspocus-sqlite: documents its `store` callback wrote during the measured window, per second. */
  storesPerSecond?: number;
  /** Raw delivery latencies, kept for the chart (subsampled). */
  sample: number[];
}

export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const docIds = Array.from({ length: o.docs }, (_, i) => `${o.docPrefix}-${i}`);
  const workers = Math.max(1, Math.min(o.workers, o.docs * o.clientsPerDoc));
  const children: ChildProcess[] = [];
  const configs: WorkerConfig[] = [];
  if (o.docs === 1) {
    // One document: split its clients over the workers.
    const per = Math.ceil(o.clientsPerDoc / workers);
    for (let w = 0; w < workers; w++) {
      const n = Math.min(per, o.clientsPerDoc - w * per);
      if (n > 0) configs.push({ kind: o.kind, url: o.server.url, apiKey: o.server.apiKey, docs: docIds, clientsPerDoc: n, intervalMs: o.intervalMs });
    }
  } else {
    for (let w = 0; w < workers; w++) {
      const docs = docIds.filter((_, i) => i % workers === w);
      configs.push({ kind: o.kind, url: o.server.url, apiKey: o.server.apiKey, docs, clientsPerDoc: o.clientsPerDoc, intervalMs: o.intervalMs, docsPerSocket: 50, startSpreadMs: o.startSpreadMs });
    }
  }
  const connected: Array<Promise<{ connectMs: number; failures: number }>> = [];
  const results: Array<Promise<WorkerResult>> = [];
  for (const config of configs) {
    const child = fork(join(BENCH_DIR, 'lib', 'loadgen-worker.ts'), [], {
      // BENCH_LOADGEN_NODE_ARGS adds Node flags to the load generators alone (e.g. --cpu-prof), not to the servers.
      execArgv: ['--import', 'tsx', ...(process.env.BENCH_LOADGEN_NODE_ARGS?.split(' ').filter(Boolean) ?? [])],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    pin(child.pid!);
    children.push(child);
    const messages: unknown[] = [];
    const waiters: Array<[(m: unknown) => void, (e: Error) => void]> = [];
    let exited: Error | null = null;
    child.on('message', (m) => {
      const w = waiters.shift();
      if (w) w[0](m);
      else messages.push(m);
    });
    child.once('exit', (code) => {
      exited = new Error(`load generator exited (${code})`);
      for (const w of waiters.splice(0)) w[1](exited);
    });
    const next = (): Promise<unknown> =>
      new Promise((res, rej) => {
        if (messages.length) return res(messages.shift());
        if (exited) return rej(exited);
        waiters.push([res, rej]);
      });
    connected.push(next() as Promise<{ connectMs: number; failures: number }>);
    results.push(connected[connected.length - 1]!.then(() => next()).then((m) => (m as { result: WorkerResult }).result));
    child.send(config);
  }
  const conn = await Promise.all(connected);
  const sampler = new ProcSampler(o.server.pid);
  for (const child of children) child.send({ durationMs: o.durationMs, warmupMs: o.warmupMs });
  await new Promise((r) => setTimeout(r, o.warmupMs));
  const stores0 = await o.server.storeCount?.();
  sampler.start();
  const busy0 = machineBusySeconds();
  await new Promise((r) => setTimeout(r, o.durationMs));
  const server = sampler.stop();
  const machineBusyPercent = (100 * (machineBusySeconds() - busy0)) / server.seconds;
  const stores1 = await o.server.storeCount?.();
  const res = await Promise.all(results);

  const sendAt = new Map<number, number>();
  let sends = 0;
  for (const r of res) {
    for (let i = 0; i < r.sendKeys.length; i++) sendAt.set(r.sendKeys[i]!, r.sendTimes[i]!);
    sends += r.sendKeys.length;
  }
  const lat: number[] = [];
  for (const r of res) {
    for (let i = 0; i < r.recvKeys.length; i++) {
      const s = sendAt.get(r.recvKeys[i]!);
      if (s !== undefined) lat.push(r.recvTimes[i]! - s);
    }
  }
  const acks = res.flatMap((r) => Array.from(r.acks));
  const expected = sends * (o.clientsPerDoc - 1);
  const step = Math.max(1, Math.floor(lat.length / 2000));
  return {
    delivery: distribution(lat),
    delivered: expected > 0 ? lat.length / expected : NaN,
    ack: acks.length ? distribution(acks) : null,
    connectMs: Math.max(...conn.map((c) => c.connectMs)),
    connectFailures: conn.reduce((n, c) => n + c.failures, 0),
    sends,
    server,
    loadgenCpuPercent: (100 * res.reduce((s, r) => s + r.cpuSeconds, 0)) / (o.durationMs / 1000),
    loadgenLoopDelayMs: { p99: Math.max(...res.map((r) => r.loopDelayMs.p99)), max: Math.max(...res.map((r) => r.loopDelayMs.max)) },
    // Everything else the machine ran meanwhile (other jobs on these cores), % of one core: a noisy run shows here.
    otherCpuPercent: Math.max(0, machineBusyPercent - server.cpuPercent - (100 * res.reduce((s, r) => s + r.cpuSeconds, 0)) / (o.durationMs / 1000)),
    ...(stores0 !== undefined && stores1 !== undefined ? { storesPerSecond: (stores1 - stores0) / server.seconds } : {}),
    sample: lat.filter((_, i) => i % step === 0),
  };
}

/** Pins a forked worker and its threads to the load-generator core (fork cannot go through the taskset command). */
function pin(pid: number): void {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(LOADGEN_CORE), String(pid)], { stdio: 'ignore' });
  } catch {
    /* no taskset: unpinned */
  }
}
