/**
 * The webhook outbox and change feed on Postgres (see `WebhookStore` in types.ts and migration 4). Changes are
 * recorded by `wave_record_changes` inside the transaction of the change (PostgresStore). Claims use
 * `FOR UPDATE SKIP LOCKED`, so several servers claiming at once each get different events, and a lease that
 * expired (its server died) makes the event claimable again.
 */
import type pg from 'pg';
import type {
  ClaimOptions,
  CreateWebhookOptions,
  CreatedWebhookEndpoint,
  DocChange,
  DocKey,
  NewWebhookEndpoint,
  OutboxEvent,
  OutboxState,
  OutboxStats,
  WebhookEndpoint,
  WebhookEventType,
  WebhookStore,
} from './types.js';
import { toChange, toEvent } from './sqlite-webhooks.js';
import { newEndpointId, newWebhookSecret, validateEventTypes, validateWebhookUrl } from './webhook-ids.js';

type Query = <R extends pg.QueryResultRow>(sql: string, params?: unknown[]) => Promise<pg.QueryResult<R>>;

interface EndpointRow {
  id: string;
  api_key: string;
  url: string;
  events: string[];
  created_at: string;
}

const ENDPOINT_COLUMNS = 'id, api_key, url, events, created_at';

export class PostgresWebhooks implements WebhookStore {
  constructor(private readonly query: Query) {}

  async createWebhookEndpoint(input: NewWebhookEndpoint, options: CreateWebhookOptions): Promise<CreatedWebhookEndpoint> {
    const url = validateWebhookUrl(input.url);
    const events = validateEventTypes(input.events);
    const id = newEndpointId();
    const secret = newWebhookSecret();
    const createdAt = Date.now();
    await this.query('INSERT INTO webhook_endpoints (id, api_key, url, events, secret_sealed, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [
      id, input.apiKey, url, events, Buffer.from(options.seal(id, secret)), createdAt,
    ]);
    return { record: { id, apiKey: input.apiKey, url, events, createdAt }, secret };
  }

  async findWebhookEndpoint(id: string): Promise<WebhookEndpoint | undefined> {
    const { rows } = await this.query<EndpointRow>(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1`, [id]);
    return rows[0] && toEndpoint(rows[0]);
  }

  async listWebhookEndpoints(apiKey?: string): Promise<WebhookEndpoint[]> {
    const { rows } = await this.query<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE $1::text IS NULL OR api_key = $1 ORDER BY n`,
      [apiKey ?? null],
    );
    return rows.map(toEndpoint);
  }

  async removeWebhookEndpoint(id: string): Promise<boolean> {
    const { rowCount } = await this.query(
      `WITH gone AS (DELETE FROM webhook_outbox WHERE endpoint_id = $1 AND state <> 'delivered')
       DELETE FROM webhook_endpoints WHERE id = $1`,
      [id],
    );
    return rowCount === 1;
  }

  async findWebhookSecret(id: string): Promise<Uint8Array | undefined> {
    const { rows } = await this.query<{ secret_sealed: Buffer }>('SELECT secret_sealed FROM webhook_endpoints WHERE id = $1', [id]);
    return rows[0]?.secret_sealed;
  }

  async enqueueEvent(doc: DocKey, type: WebhookEventType, payload: Record<string, unknown> | null, now: number): Promise<number> {
    const { rowCount } = await this.query(
      `INSERT INTO webhook_outbox (id, endpoint_id, type, account, doc_id, payload, created_at, first_change_at, last_change_at, next_attempt_at, state)
       SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), e.id, $3, $1, $2, $4, $5, $5, $5, $5, 'pending'
       FROM webhook_endpoints e JOIN keys k ON k.api_key = e.api_key
       WHERE k.account = $1 AND k.revoked_at IS NULL AND $3 = ANY (e.events)`,
      [doc.account, doc.docId, type, payload && JSON.stringify(payload), now],
    );
    return rowCount ?? 0;
  }

  async claimEvents(o: ClaimOptions): Promise<OutboxEvent[]> {
    const { rows } = await this.query<Parameters<typeof toEvent>[0]>(
      `UPDATE webhook_outbox SET lease_holder = $2, lease_expires = $3
       WHERE seq IN (
         SELECT seq FROM webhook_outbox
         WHERE state = 'pending' AND next_attempt_at <= $1 AND (lease_holder IS NULL OR lease_expires <= $1)
           AND (type <> 'doc.changed' OR attempts > 0 OR LEAST(first_change_at + $5, last_change_at + $6) <= $1)
         ORDER BY next_attempt_at, seq LIMIT $4
         FOR UPDATE SKIP LOCKED)
       RETURNING *`,
      [o.now, o.holder, o.now + o.leaseMs, o.limit, o.maxWaitMs, o.debounceMs],
    );
    return rows.map(toEvent);
  }

  async completeEvent(id: string, holder: string, now: number): Promise<boolean> {
    const { rowCount } = await this.query(
      `UPDATE webhook_outbox SET state = 'delivered', attempts = attempts + 1, delivered_at = $1, lease_holder = NULL,
         lease_expires = NULL, last_error = NULL WHERE id = $2 AND lease_holder = $3 AND state = 'pending'`,
      [now, id, holder],
    );
    return rowCount === 1;
  }

  async failEvent(id: string, holder: string, now: number, error: string, nextAttemptAt: number | null): Promise<boolean> {
    const { rowCount } = await this.query(
      `UPDATE webhook_outbox SET attempts = attempts + 1, lease_holder = NULL, lease_expires = NULL, last_error = $4,
         next_attempt_at = COALESCE($5::bigint, $3), state = CASE WHEN $5::bigint IS NULL THEN 'failed' ELSE 'pending' END
       WHERE id = $1 AND lease_holder = $2 AND state = 'pending'`,
      [id, holder, now, error.slice(0, 500), nextAttemptAt],
    );
    return rowCount === 1;
  }

  async findEvent(id: string): Promise<OutboxEvent | undefined> {
    const { rows } = await this.query<Parameters<typeof toEvent>[0]>('SELECT * FROM webhook_outbox WHERE id = $1', [id]);
    return rows[0] && toEvent(rows[0]);
  }

  async listEvents(state: OutboxState, apiKey?: string): Promise<OutboxEvent[]> {
    const { rows } = await this.query<Parameters<typeof toEvent>[0]>(
      `SELECT o.* FROM webhook_outbox o
       WHERE o.state = $1 AND ($2::text IS NULL OR o.endpoint_id IN (SELECT id FROM webhook_endpoints WHERE api_key = $2))
       ORDER BY o.seq`,
      [state, apiKey ?? null],
    );
    return rows.map(toEvent);
  }

  async replayEvents(ids: string[] | 'all', now: number): Promise<number> {
    const { rowCount } = await this.query(
      `UPDATE webhook_outbox SET state = 'pending', round_start = attempts, next_attempt_at = $1, last_error = NULL
       WHERE state = 'failed' AND ($2::text[] IS NULL OR id = ANY ($2))`,
      [now, ids === 'all' ? null : ids],
    );
    return rowCount ?? 0;
  }

  async outboxStats(): Promise<OutboxStats> {
    const { rows } = await this.query<{ state: string; retrying: string; n: string; oldest: string | null }>(
      'SELECT state, count(*) FILTER (WHERE attempts > 0) AS retrying, count(*) AS n, min(created_at) AS oldest FROM webhook_outbox GROUP BY state',
    );
    const stats: OutboxStats = { pending: 0, retrying: 0, failed: 0, delivered: 0, oldestPendingAt: null };
    for (const row of rows) {
      if (row.state === 'pending') {
        stats.pending = Number(row.n);
        stats.retrying = Number(row.retrying);
        stats.oldestPendingAt = row.oldest === null ? null : Number(row.oldest);
      } else if (row.state === 'failed') stats.failed = Number(row.n);
      else if (row.state === 'delivered') stats.delivered = Number(row.n);
    }
    return stats;
  }

  async pruneDelivered(before: number, limit: number): Promise<number> {
    const { rowCount } = await this.query(
      "DELETE FROM webhook_outbox WHERE seq IN (SELECT seq FROM webhook_outbox WHERE state = 'delivered' AND delivered_at < $1 LIMIT $2)",
      [before, limit],
    );
    return rowCount ?? 0;
  }

  async docChange(doc: DocKey): Promise<DocChange | undefined> {
    const { rows } = await this.query<Parameters<typeof toChange>[0]>('SELECT * FROM doc_changes WHERE account = $1 AND doc_id = $2', [
      doc.account,
      doc.docId,
    ]);
    return rows[0] && toChange(rows[0]);
  }

  async listChanges(account: string, since: number, limit: number): Promise<DocChange[]> {
    const { rows } = await this.query<Parameters<typeof toChange>[0]>(
      'SELECT * FROM doc_changes WHERE account = $1 AND cursor > $2 ORDER BY cursor LIMIT $3',
      [account, since, limit],
    );
    return rows.map(toChange);
  }
}

function toEndpoint(row: EndpointRow): WebhookEndpoint {
  return { id: row.id, apiKey: row.api_key, url: row.url, events: row.events as WebhookEventType[], createdAt: Number(row.created_at) };
}
