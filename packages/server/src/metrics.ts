/**
 * Per-server metrics for `GET /metrics`, in the Prometheus text format (version 0.0.4). A handful of counters, one
 * histogram and gauges read at scrape time: small enough that a client library would add more than it saves.
 */

/**
 * Ack latency buckets, seconds. Dense below 250 ms (RELIABILITY.md: p99 ack < 250 ms under S12, < 500 ms under
 * L2/C2) and coarse above, where the only question is "how bad".
 */
const ACK_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export class Histogram {
  private readonly counts: number[];
  private sum = 0;
  private count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = bounds.map(() => 0);
  }

  observe(value: number): void {
    this.sum += value;
    this.count++;
    for (let i = 0; i < this.bounds.length; i++) if (value <= this.bounds[i]!) this.counts[i]!++;
  }

  lines(name: string): string[] {
    return [
      ...this.bounds.map((b, i) => `${name}_bucket{le="${b}"} ${this.counts[i]}`),
      `${name}_bucket{le="+Inf"} ${this.count}`,
      `${name}_sum ${this.sum}`,
      `${name}_count ${this.count}`,
    ];
  }
}

/** Values read when scraped. */
export interface Gauges {
  connections: number;
  documents: number;
  /** Loaded documents held in compact form (rooms/doc-holder.ts). */
  documentsCompact: number;
  pendingCommits: number;
  pendingPublishes: number;
  /** Webhook outbox counts, as last read from the store (shared by every server on it); absent before the first read. */
  outbox?: { pending: number; retrying: number; failed: number; oldestPendingAt: number | null } | undefined;
}

import { monitorEventLoopDelay } from 'node:perf_hooks';

export class Metrics {
  /**
   * Event-loop delay (RELIABILITY.md S9: no message may block the loop > 50 ms). Sampled every 10 ms by Node itself
   * (libuv timer), so it costs nothing per message; tests read its max from /metrics.
   */
  readonly loopDelay = monitorEventLoopDelay({ resolution: 10 });
  /** Client updates applied and committed by this server. */
  updates = 0;
  /** Updates received from other servers through the fan-out. */
  remoteUpdates = 0;
  readonly ackLatency = new Histogram(ACK_BUCKETS);
  /** Longest synchronous handling of one client message (decode, checks, apply), seconds of wall time. */
  messageHandlingMax = 0;
  /**
   * The same in CPU seconds of this process: the work Wave does for one message, unaffected by other processes
   * competing for the CPU (the wall time above includes being descheduled on a busy machine). A message handled in
   * under 1 ms of wall time counts that wall time, an upper bound of its CPU time (connection.ts, `CPU_READ_FROM_MS`).
   */
  messageHandlingCpuMax = 0;

  messageHandled(wallSeconds: number, cpuSeconds: number): void {
    if (wallSeconds > this.messageHandlingMax) this.messageHandlingMax = wallSeconds;
    if (cpuSeconds > this.messageHandlingCpuMax) this.messageHandlingCpuMax = cpuSeconds;
  }
  private readonly rejections = new Map<string, number>();
  /** Webhook deliveries answered 2xx, and attempts that failed (each failure is retried or ends as failed). */
  webhookDeliveries = 0;
  webhookFailures = 0;

  delivered(): void {
    this.webhookDeliveries++;
  }

  failedAttempt(): void {
    this.webhookFailures++;
  }

  /** A refused upgrade or a connection closed with an error (`code` is a ServerErrorCode or `http_NNN`). */
  rejected(code: string): void {
    this.rejections.set(code, (this.rejections.get(code) ?? 0) + 1);
  }

  constructor() {
    this.loopDelay.enable();
  }

  /** Stops the event-loop sampling (its libuv timer would keep the process alive). */
  close(): void {
    this.loopDelay.disable();
  }

  render(gauges: Gauges): string {
    const out: string[] = [];
    const metric = (name: string, type: string, help: string, lines: string[]): void => {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...lines);
    };
    metric('wave_connections', 'gauge', 'Open WebSocket connections.', [`wave_connections ${gauges.connections}`]);
    metric('wave_documents_loaded', 'gauge', 'Documents loaded in memory.', [`wave_documents_loaded ${gauges.documents}`]);
    metric('wave_documents_compact', 'gauge', 'Loaded documents held in compact form while idle.', [
      `wave_documents_compact ${gauges.documentsCompact}`,
    ]);
    metric('wave_commits_pending', 'gauge', 'Updates applied and not yet committed to the store.', [`wave_commits_pending ${gauges.pendingCommits}`]);
    metric('wave_fanout_pending', 'gauge', 'Committed updates not yet published to other servers.', [`wave_fanout_pending ${gauges.pendingPublishes}`]);
    metric('wave_updates_total', 'counter', 'Client updates committed by this server.', [`wave_updates_total ${this.updates}`]);
    metric('wave_remote_updates_total', 'counter', 'Updates received from other servers.', [`wave_remote_updates_total ${this.remoteUpdates}`]);
    metric('wave_ack_latency_seconds', 'histogram', 'From an update-bearing message to its ack (after commit).', this.ackLatency.lines('wave_ack_latency_seconds'));
    const ns = (v: number): number => (Number.isFinite(v) ? v / 1e9 : 0);
    metric('wave_event_loop_delay_max_seconds', 'gauge', 'Largest event-loop delay since start.', [
      `wave_event_loop_delay_max_seconds ${ns(this.loopDelay.max)}`,
    ]);
    metric('wave_event_loop_delay_p99_seconds', 'gauge', 'p99 event-loop delay since start.', [
      `wave_event_loop_delay_p99_seconds ${ns(this.loopDelay.percentile(99))}`,
    ]);
    metric('wave_message_handling_max_seconds', 'gauge', 'Longest synchronous handling of one client message.', [
      `wave_message_handling_max_seconds ${this.messageHandlingMax}`,
    ]);
    metric('wave_message_handling_cpu_max_seconds', 'gauge', 'Most CPU time spent synchronously on one client message.', [
      `wave_message_handling_cpu_max_seconds ${this.messageHandlingCpuMax}`,
    ]);
    const mem = process.memoryUsage();
    metric('process_resident_memory_bytes', 'gauge', 'Resident set size.', [`process_resident_memory_bytes ${mem.rss}`]);
    const resources = process.getActiveResourcesInfo();
    metric('wave_active_timers', 'gauge', 'Timers alive in this process (leak check, S14).', [
      `wave_active_timers ${resources.filter((r) => r === 'Timeout').length}`,
    ]);
    metric('wave_heap_used_bytes', 'gauge', 'V8 heap in use.', [`wave_heap_used_bytes ${mem.heapUsed}`]);
    metric('wave_webhook_deliveries_total', 'counter', 'Webhook events delivered (2xx) by this server.', [
      `wave_webhook_deliveries_total ${this.webhookDeliveries}`,
    ]);
    metric('wave_webhook_failures_total', 'counter', 'Webhook delivery attempts that failed (non-2xx, error, timeout).', [
      `wave_webhook_failures_total ${this.webhookFailures}`,
    ]);
    if (gauges.outbox) {
      const o = gauges.outbox;
      metric('wave_webhook_pending', 'gauge', 'Webhook events waiting for delivery (all servers).', [`wave_webhook_pending ${o.pending}`]);
      metric('wave_webhook_retries_pending', 'gauge', 'Pending webhook events that failed at least once.', [`wave_webhook_retries_pending ${o.retrying}`]);
      metric('wave_webhook_failed', 'gauge', 'Webhook events kept as failed (webhooks failed / replay).', [`wave_webhook_failed ${o.failed}`]);
      metric('wave_webhook_outbox_age_seconds', 'gauge', 'Age of the oldest pending webhook event.', [
        `wave_webhook_outbox_age_seconds ${o.oldestPendingAt === null ? 0 : Math.max(0, (Date.now() - o.oldestPendingAt) / 1000)}`,
      ]);
    }
    metric(
      'wave_rejections_total',
      'counter',
      'Upgrades refused and connections closed with an error, by code.',
      [...this.rejections].sort(([a], [b]) => a.localeCompare(b)).map(([code, n]) => `wave_rejections_total{code="${code}"} ${n}`),
    );
    return `${out.join('\n')}\n`;
  }
}
