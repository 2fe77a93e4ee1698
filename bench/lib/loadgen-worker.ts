/**
 * A load-generator process: connects `clientsPerDoc` clients to each of its documents, then every client inserts one
 * character every `intervalMs`. Times are CLOCK_MONOTONIC (process.hrtime), shared by every process on the machine,
 * so the parent joins the send times of one worker with the receive times of another.
 * An edit is identified by (Yjs clientID, clock): a one-character insert advances its client's clock by one.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadFactory, type BenchClient, type ClientKind, type DocLike } from './clients.ts';

export interface WorkerConfig {
  kind: ClientKind;
  url: string;
  apiKey?: string;
  docs: string[];
  clientsPerDoc: number;
  intervalMs: number;
  /** Multiplexed Hocuspocus: documents per shared socket. */
  docsPerSocket?: number;
  /** Each document's clients start editing at a random offset in [0, startSpreadMs) (default 0: all at once). */
  startSpreadMs?: number;
}

export interface WorkerResult {
  connectMs: number;
  connectFailures: number;
  /** Edit keys (clientID * 2^20 + clock) and send times (ms, monotonic) of edits made in the measured window. */
  sendKeys: Float64Array;
  sendTimes: Float64Array;
  recvKeys: Float64Array;
  recvTimes: Float64Array;
  /** Wave: send → ack after commit, ms. */
  acks: Float64Array;
  /** CPU of this process during the measured window, seconds. */
  cpuSeconds: number;
  /** This process's event-loop delay during the measured window, ms (p99, max): its own lag in every latency. */
  loopDelayMs: { p99: number; max: number };
  windowSeconds: number;
}

const now = (): number => Number(process.hrtime.bigint()) / 1e6;
/** Clocks stay far below 2^20 (20 s × 10 edits/s); clientIDs are < 2^32, so keys stay exact doubles (< 2^52). */
const CLOCK_SPAN = 2 ** 20;

class Growable {
  buf = new Float64Array(1024);
  n = 0;
  push(v: number): void {
    if (this.n === this.buf.length) {
      const b = new Float64Array(this.buf.length * 2);
      b.set(this.buf);
      this.buf = b;
    }
    this.buf[this.n++] = v;
  }
  take(): Float64Array {
    return this.buf.slice(0, this.n);
  }
}

async function run(config: WorkerConfig): Promise<void> {
  const factory = await loadFactory(config.kind);
  const clients: BenchClient[] = [];
  const sendKeys = new Growable();
  const sendTimes = new Growable();
  const recvKeys = new Growable();
  const recvTimes = new Growable();
  const acks = new Growable();
  let measuring = false;
  let failures = 0;

  const t0 = now();
  const sockets: unknown[] = [];
  config.docs.forEach((docId, d) => {
    let shared: unknown;
    if (config.kind === 'hocuspocus-mux') {
      const per = config.docsPerSocket ?? config.docs.length;
      const group = Math.floor(d / per);
      // One socket per simulated browser per group: client c of every document in the group shares socket c.
      for (let c = 0; c < config.clientsPerDoc; c++) {
        const index = group * config.clientsPerDoc + c;
        sockets[index] ??= factory.sharedSocket!(config.url);
      }
      shared = group;
    }
    for (let c = 0; c < config.clientsPerDoc; c++) {
      const socket = shared === undefined ? undefined : sockets[(shared as number) * config.clientsPerDoc + c];
      clients.push(factory.create({ url: config.url, docId, apiKey: config.apiKey, shared: socket }));
    }
  });
  // 60 s: 2,000 clients connecting on one core take seconds; anything slower is a failure to report.
  const CONNECT_TIMEOUT_MS = 60_000;
  await Promise.all(
    clients.map((c) =>
      Promise.race([c.synced, new Promise<void>((_, rej) => setTimeout(() => rej(new Error('timeout')), CONNECT_TIMEOUT_MS))]).catch(() => {
        failures++;
      }),
    ),
  );
  const connectMs = now() - t0;

  // Per client: pending-send FIFO for acks; receive hook.
  const sendQueues = clients.map(() => [] as number[]);
  clients.forEach((client, i) => {
    const doc = client.doc;
    if (!doc) return;
    doc.on('afterTransaction', (tr) => {
      if (tr.local || !measuring) return;
      const t = now();
      tr.afterState.forEach((after, id) => {
        const before = tr.beforeState.get(id) ?? 0;
        for (let clock = before; clock < after; clock++) {
          recvKeys.push(id * CLOCK_SPAN + clock);
          recvTimes.push(t);
        }
      });
    });
    client.onPending?.((pending) => {
      const q = sendQueues[i]!;
      const t = now();
      while (q.length > pending) {
        const sent = q.shift()!;
        if (sent > 0) acks.push(t - sent);
      }
    });
  });

  process.send!({ type: 'connected', connectMs, failures });
  const go = await new Promise<{ durationMs: number; warmupMs: number }>((res) => process.once('message', res as never));

  // Warm-up edits are sent like the others but not recorded.
  const timers: NodeJS.Timeout[] = [];
  const cpu0 = process.cpuUsage();
  let windowStart = 0;
  const docStart = config.docs.map(() => Math.random() * (config.startSpreadMs ?? 0));
  clients.forEach((client, i) => {
    const doc = client.doc;
    if (!doc) return;
    const text = doc.getText(client.textName);
    const tick = (): void => {
      const t = now();
      const clock = stateOf(doc);
      text.insert(text.length, 'x');
      sendQueues[i]!.push(measuring ? t : -1);
      if (measuring) {
        sendKeys.push(doc.clientID * CLOCK_SPAN + clock);
        sendTimes.push(t);
      }
    };
    // Random phase, so that clients do not all send in the same millisecond, after the document's start offset.
    const start = setTimeout(() => {
      tick();
      timers.push(setInterval(tick, config.intervalMs));
    }, docStart[Math.floor(i / config.clientsPerDoc)]! + Math.random() * config.intervalMs);
    timers.push(start);
  });
  await sleep(go.warmupMs);
  measuring = true;
  windowStart = now();
  const cpuStart = process.cpuUsage();
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  await sleep(go.durationMs);
  loop.disable();
  for (const t of timers) clearInterval(t);
  const cpu = process.cpuUsage(cpuStart);
  const windowSeconds = (now() - windowStart) / 1000;
  void cpu0;
  // Let in-flight deliveries and acks arrive (p99s are tens of ms; 1.5 s leaves room for the max).
  await sleep(1_500);
  measuring = false;
  const result: WorkerResult = {
    connectMs,
    connectFailures: failures,
    sendKeys: sendKeys.take(),
    sendTimes: sendTimes.take(),
    recvKeys: recvKeys.take(),
    recvTimes: recvTimes.take(),
    acks: acks.take(),
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    loopDelayMs: { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 },
    windowSeconds,
  };
  // Exit only once the result is handed to the IPC channel: it can be megabytes, and a busy machine is slow to
  // flush it (an early exit lost a whole result).
  process.send!({ type: 'result', result }, undefined, {}, () => {
    for (const c of clients) c.destroy();
    setTimeout(() => process.exit(0), 500);
  });
}

/** This client's next clock: the length of its own part of the document so far. */
function stateOf(doc: DocLike): number {
  const store = (doc as unknown as { store: { getState?(id: number): number; clients: Map<number, Array<{ id: { clock: number }; length: number }>> } }).store;
  const structs = store.clients.get(doc.clientID);
  if (!structs || structs.length === 0) return 0;
  const last = structs[structs.length - 1]!;
  return last.id.clock + last.length;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

process.once('message', (config: WorkerConfig) => {
  run(config).catch((err) => {
    console.error(err);
    process.exit(1);
  });
});
