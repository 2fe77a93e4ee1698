/**
 * Webhook delivery: claims due events from the store's outbox with a lease, POSTs them signed the Standard Webhooks
 * way, and records the outcome. At least once: an event is marked delivered only after a 2xx answer, and a server
 * that dies mid-delivery leaves its leased events to whichever server claims after the lease expires, with the same
 * event id (`webhook-id`). Every server runs one; the store's lease makes each event go out from one of them.
 *
 * Retries: an attempt fails on a non-2xx answer (redirects included), a network error or `timeoutMs`; the next
 * attempt is `retryScheduleMs[n]` after the n-th failure of the round; after the last the event is kept as failed
 * (`webhooks failed`, `webhooks replay`).
 */
import { Webhook } from 'standardwebhooks';
import type { Logger } from '../log.js';
import type { SecretBox } from '../secret-box.js';
import type { OutboxEvent, OutboxStats, Store } from '../store/types.js';
import { eventData } from './content.js';

export interface WebhookOptions {
  /** doc.changed goes out this long after the latest change of a document… (ms, default 10 s) */
  debounceMs: number;
  /** …and at most this long after the first change it covers (ms, default 60 s). */
  maxWaitMs: number;
  /** Delay before each retry (ms); its length is the number of retries. Default 5 s, 30 s, 2 min, 10 min, 1 h, 6 h. */
  retryScheduleMs: number[];
  /** One attempt's bound (ms, default 10 s). The lease of a claimed event is twice this plus 5 s. */
  timeoutMs: number;
  /** How often the outbox is checked for due events (ms, default 500). */
  pollMs: number;
  /** Events claimed per round; they are delivered concurrently (default 16). */
  batch: number;
}

export const DEFAULT_WEBHOOK_OPTIONS: WebhookOptions = {
  debounceMs: 10_000,
  maxWaitMs: 60_000,
  retryScheduleMs: [5_000, 30_000, 120_000, 600_000, 3_600_000, 21_600_000],
  timeoutMs: 10_000,
  pollMs: 500,
  batch: 16,
};

const STATS_MS = 5_000;
const KEEP_DELIVERED_MS = 24 * 3_600_000;

export interface DeliveryCounters {
  delivered(): void;
  failedAttempt(): void;
}

export class WebhookDelivery {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;
  private readonly leaseMs: number;
  /** Outbox counts for /metrics, read at most every STATS_MS. */
  stats: OutboxStats | undefined;
  private statsAt = 0;

  constructor(
    private readonly store: Store,
    private readonly secretBox: SecretBox,
    private readonly holder: string,
    private readonly options: WebhookOptions,
    private readonly counters: DeliveryCounters,
    private readonly log: Logger,
  ) {
    this.leaseMs = options.timeoutMs * 2 + 5_000;
  }

  start(): void {
    this.schedule(0);
  }

  /** Stops claiming and waits for the attempts in flight (each bounded by the timeout). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.running = this.round().then(
        (full) => this.schedule(full ? 0 : this.options.pollMs),
        (error: unknown) => {
          this.log.error('webhook delivery', error);
          this.schedule(this.options.pollMs);
        },
      );
    }, delayMs);
    this.timer.unref();
  }

  /** One claim and its deliveries; true when the batch was full (more may be due). */
  private async round(): Promise<boolean> {
    if (Date.now() - this.statsAt >= STATS_MS) {
      this.statsAt = Date.now();
      // Delivered events are kept for a day (debugging), then deleted a bounded batch at a time.
      await this.store.pruneDelivered(this.statsAt - KEEP_DELIVERED_MS, 1_000);
      this.stats = await this.store.outboxStats();
    }
    const events = await this.store.claimEvents({
      holder: this.holder,
      now: Date.now(),
      leaseMs: this.leaseMs,
      limit: this.options.batch,
      debounceMs: this.options.debounceMs,
      maxWaitMs: this.options.maxWaitMs,
    });
    await Promise.all(events.map((event) => this.deliver(event)));
    return events.length === this.options.batch;
  }

  private async deliver(event: OutboxEvent): Promise<void> {
    let outcome: string | undefined;
    try {
      outcome = await this.attempt(event);
    } catch (error) {
      outcome = (error as Error).message ?? String(error);
    }
    const now = Date.now();
    try {
      if (outcome === undefined) {
        this.counters.delivered();
        await this.store.completeEvent(event.id, this.holder, now);
        return;
      }
      this.counters.failedAttempt();
      const delay = this.options.retryScheduleMs[event.roundAttempts];
      await this.store.failEvent(event.id, this.holder, now, outcome, delay === undefined ? null : now + delay);
    } catch (error) {
      // Not recorded (store down, or closed at shutdown): the lease expires and the event goes out again.
      this.log.error(`webhook ${event.id}: recording the outcome`, error);
    }
  }

  /** POSTs the event once; `undefined` when the receiver answered 2xx, else what went wrong. */
  private async attempt(event: OutboxEvent): Promise<string | undefined> {
    const endpoint = await this.store.findWebhookEndpoint(event.endpointId);
    if (!endpoint) return 'endpoint removed';
    const sealed = await this.store.findWebhookSecret(endpoint.id);
    const secret = sealed && this.secretBox.open(endpoint.id, sealed);
    if (secret === undefined) return 'signing secret does not open with this server master key';
    const data = await eventData(this.store, event);
    const timestamp = new Date();
    const body = JSON.stringify({ type: event.type, timestamp: timestamp.toISOString(), data });
    const signature = new Webhook(secret).sign(event.id, timestamp, body);
    const response = await fetch(endpoint.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'wave-server webhooks',
        'webhook-id': event.id,
        'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
        'webhook-signature': signature,
      },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(this.options.timeoutMs),
    });
    // The body is not needed; reading it frees the connection.
    await response.arrayBuffer().catch(() => {});
    return response.status >= 200 && response.status < 300 ? undefined : `HTTP ${response.status}`;
  }
}
