/**
 * The webhook outbox and change feed on SQLite (see `WebhookStore` in types.ts). `recordChange` runs inside the
 * transaction of the change that causes it (SqliteStore's append, seed and delete), so a stored change always has
 * its feed entry and its events. SQLite serialises write transactions, so cursors are handed out in commit order.
 *
 * The feed is kept in two tables. `doc_change_log` gets one row per stored change, keyed by its cursor: a commit
 * adds to the log's last page whichever documents it changed. `doc_changes` holds each document's latest change as
 * of the last fold: every `CHANGE_LOG_FOLD`-th change (by cursor) folds the log into it, in the transaction of that
 * change, and empties the log. A document's feed entry is its latest logged change, its version `doc_changes`'
 * plus its logged changes; a document with none logged has its `doc_changes` row. Updating `doc_changes` at every
 * change instead dirtied two pages per document changed (its row and its cursor index entry) in every commit: 37 %
 * of the bytes written per update under many documents (bench/ANALYSIS.md). Each read of the feed is one statement,
 * so it sees the two tables at one commit, before a fold or after it.
 */
import type Database from 'better-sqlite3';
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
import { newEndpointId, newWebhookSecret, validateEventTypes, validateWebhookUrl } from './webhook-ids.js';

export const WEBHOOK_SCHEMA = `
CREATE TABLE IF NOT EXISTS webhook_endpoints (
  id            TEXT PRIMARY KEY,
  api_key       TEXT NOT NULL,
  url           TEXT NOT NULL,
  events        TEXT NOT NULL,          -- JSON array of event types
  secret_sealed BLOB NOT NULL,          -- the signing secret, AES-256-GCM under the master key (secret-box.ts)
  created_at    INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS change_cursor (
  id    INTEGER PRIMARY KEY CHECK (id = 1),
  value INTEGER NOT NULL
);
INSERT OR IGNORE INTO change_cursor (id, value) VALUES (1, 0);
CREATE TABLE IF NOT EXISTS doc_changes (
  account    TEXT NOT NULL,
  doc_id     TEXT NOT NULL,
  epoch      INTEGER NOT NULL,
  version    INTEGER NOT NULL,
  cursor     INTEGER NOT NULL,
  deleted    INTEGER NOT NULL,
  changed_at INTEGER NOT NULL,
  PRIMARY KEY (account, doc_id)
);
CREATE INDEX IF NOT EXISTS doc_changes_by_cursor ON doc_changes (account, cursor);
-- At most CHANGE_LOG_FOLD rows (the changes since the last fold): read by scanning it, so it has no index to write.
CREATE TABLE IF NOT EXISTS doc_change_log (
  cursor     INTEGER PRIMARY KEY,
  account    TEXT NOT NULL,
  doc_id     TEXT NOT NULL,
  epoch      INTEGER NOT NULL,
  deleted    INTEGER NOT NULL,
  changed_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS webhook_outbox (
  seq             INTEGER PRIMARY KEY AUTOINCREMENT,
  id              TEXT NOT NULL UNIQUE,
  endpoint_id     TEXT NOT NULL,
  type            TEXT NOT NULL,
  account         TEXT NOT NULL,
  doc_id          TEXT NOT NULL,
  payload         TEXT,
  created_at      INTEGER NOT NULL,
  first_change_at INTEGER NOT NULL,
  last_change_at  INTEGER NOT NULL,
  attempts        INTEGER NOT NULL DEFAULT 0,
  round_start     INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  state           TEXT NOT NULL,
  lease_holder    TEXT,
  lease_expires   INTEGER,
  last_error      TEXT,
  delivered_at    INTEGER
);
-- At most one doc.changed per endpoint and document that no attempt has started on: later changes fold into it
-- (debounce). Once claimed it leaves this index, and the next change opens a new event with a new id.
CREATE UNIQUE INDEX IF NOT EXISTS outbox_open_change ON webhook_outbox (endpoint_id, account, doc_id)
  WHERE type = 'doc.changed' AND state = 'pending' AND attempts = 0 AND lease_holder IS NULL;
CREATE INDEX IF NOT EXISTS outbox_by_state ON webhook_outbox (state, next_attempt_at);
`;

interface EndpointRow {
  id: string;
  api_key: string;
  url: string;
  events: string;
  created_at: number;
}

interface OutboxRow {
  id: string;
  endpoint_id: string;
  type: string;
  account: string;
  doc_id: string;
  payload: string | null;
  created_at: number;
  first_change_at: number;
  last_change_at: number;
  attempts: number;
  round_start: number;
  next_attempt_at: number;
  state: string;
  last_error: string | null;
}

interface ChangeRow {
  doc_id: string;
  epoch: number;
  version: number;
  cursor: number;
  deleted: number;
  changed_at: number;
}

const NEW_ID = `'msg_' || lower(hex(randomblob(16)))`;

/**
 * Every change whose cursor is a multiple of this folds the log into `doc_changes`. It bounds the log that each feed
 * read scans, and at 2,000 changes a second of 1,000 documents it rewrites each document's row once per two seconds
 * instead of twice a second.
 */
export const CHANGE_LOG_FOLD = 4096;
const CHANGE_COLUMNS = 'doc_id, epoch, version, cursor, deleted, changed_at';
/** A CTE, to be completed by a WHERE and `GROUP BY doc_id)`: per logged document, its latest change and their number. */
const LOGGED = `logged AS (
  SELECT doc_id, max(cursor) AS cursor, epoch, deleted, changed_at, count(*) AS n FROM doc_change_log`;
/** Logged documents as feed entries: the version folded so far plus the changes logged since. */
const FROM_LOG = `SELECT l.doc_id, l.epoch, coalesce(f.version, 0) + l.n AS version, l.cursor, l.deleted, l.changed_at
  FROM logged l LEFT JOIN doc_changes f ON f.account = @account AND f.doc_id = l.doc_id`;
const SUBSCRIBED = `FROM webhook_endpoints e JOIN keys k ON k.api_key = e.api_key
  WHERE k.account = @account AND k.revoked_at IS NULL AND EXISTS (SELECT 1 FROM json_each(e.events) WHERE value = @type)`;

export class SqliteWebhooks implements WebhookStore {
  private readonly stmt;
  private readonly tx;

  constructor(
    db: Database.Database,
    private readonly check: () => void,
  ) {
    this.stmt = {
      insertEndpoint: db.prepare(
        'INSERT INTO webhook_endpoints (id, api_key, url, events, secret_sealed, created_at) VALUES (@id, @api_key, @url, @events, @secret_sealed, @created_at)',
      ),
      findEndpoint: db.prepare<[string], EndpointRow>('SELECT id, api_key, url, events, created_at FROM webhook_endpoints WHERE id = ?'),
      listEndpoints: db.prepare<[], EndpointRow>('SELECT id, api_key, url, events, created_at FROM webhook_endpoints ORDER BY created_at, rowid'),
      deleteEndpoint: db.prepare<[string]>('DELETE FROM webhook_endpoints WHERE id = ?'),
      deleteEndpointEvents: db.prepare<[string]>("DELETE FROM webhook_outbox WHERE endpoint_id = ? AND state <> 'delivered'"),
      findSecret: db.prepare<[string], { secret_sealed: Buffer }>('SELECT secret_sealed FROM webhook_endpoints WHERE id = ?'),
      bumpCursor: db.prepare<[], { value: number }>('UPDATE change_cursor SET value = value + 1 WHERE id = 1 RETURNING value'),
      logChange: db.prepare(
        `INSERT INTO doc_change_log (cursor, account, doc_id, epoch, deleted, changed_at)
         VALUES (@cursor, @account, @doc_id, @epoch, @deleted, @now)`,
      ),
      // Per document: its latest logged change (SQLite takes the bare columns of a max() query from the max row)
      // and how many it logged, added to its version. WHERE true: an upsert's SELECT needs a WHERE (SQLite's
      // parsing ambiguity with ON).
      foldLog: db.prepare(
        `INSERT INTO doc_changes (account, doc_id, epoch, version, cursor, deleted, changed_at)
         SELECT account, doc_id, epoch, n, cursor, deleted, changed_at FROM (
           SELECT account, doc_id, max(cursor) AS cursor, epoch, deleted, changed_at, count(*) AS n
           FROM doc_change_log GROUP BY account, doc_id) WHERE true
         ON CONFLICT (account, doc_id) DO UPDATE SET epoch = excluded.epoch, version = version + excluded.version,
           cursor = excluded.cursor, deleted = excluded.deleted, changed_at = excluded.changed_at`,
      ),
      clearLog: db.prepare('DELETE FROM doc_change_log'),
      upsertChanged: db.prepare(
        `INSERT INTO webhook_outbox (id, endpoint_id, type, account, doc_id, payload, created_at, first_change_at, last_change_at, next_attempt_at, state)
         SELECT ${NEW_ID}, e.id, @type, @account, @doc_id, NULL, @now, @now, @now, @now, 'pending' ${SUBSCRIBED}
         ON CONFLICT (endpoint_id, account, doc_id) WHERE type = 'doc.changed' AND state = 'pending' AND attempts = 0 AND lease_holder IS NULL
         DO UPDATE SET last_change_at = max(last_change_at, excluded.last_change_at)`,
      ),
      insertEvent: db.prepare(
        `INSERT INTO webhook_outbox (id, endpoint_id, type, account, doc_id, payload, created_at, first_change_at, last_change_at, next_attempt_at, state)
         SELECT ${NEW_ID}, e.id, @type, @account, @doc_id, @payload, @now, @now, @now, @now, 'pending' ${SUBSCRIBED}`,
      ),
      due: db.prepare<{ now: number; limit: number; debounce: number; maxWait: number }, { seq: number }>(
        `SELECT seq FROM webhook_outbox
         WHERE state = 'pending' AND next_attempt_at <= @now AND (lease_holder IS NULL OR lease_expires <= @now)
           AND (type <> 'doc.changed' OR attempts > 0 OR min(first_change_at + @maxWait, last_change_at + @debounce) <= @now)
         ORDER BY next_attempt_at, seq LIMIT @limit`,
      ),
      lease: db.prepare<[string, number, number], OutboxRow>(
        'UPDATE webhook_outbox SET lease_holder = ?, lease_expires = ? WHERE seq = ? RETURNING *',
      ),
      complete: db.prepare<[number, string, string]>(
        `UPDATE webhook_outbox SET state = 'delivered', attempts = attempts + 1, delivered_at = ?, lease_holder = NULL,
           lease_expires = NULL, last_error = NULL WHERE id = ? AND lease_holder = ? AND state = 'pending'`,
      ),
      fail: db.prepare(
        `UPDATE webhook_outbox SET attempts = attempts + 1, lease_holder = NULL, lease_expires = NULL, last_error = @error,
           next_attempt_at = coalesce(@next, @now), state = CASE WHEN @next IS NULL THEN 'failed' ELSE 'pending' END
         WHERE id = @id AND lease_holder = @holder AND state = 'pending'`,
      ),
      findEvent: db.prepare<[string], OutboxRow>('SELECT * FROM webhook_outbox WHERE id = ?'),
      listEvents: db.prepare<[string], OutboxRow>('SELECT * FROM webhook_outbox WHERE state = ? ORDER BY seq'),
      replayOne: db.prepare<[number, string]>(
        "UPDATE webhook_outbox SET state = 'pending', round_start = attempts, next_attempt_at = ?, last_error = NULL WHERE id = ? AND state = 'failed'",
      ),
      replayAll: db.prepare<[number]>(
        "UPDATE webhook_outbox SET state = 'pending', round_start = attempts, next_attempt_at = ?, last_error = NULL WHERE state = 'failed'",
      ),
      stats: db.prepare<[], { state: string; retrying: number; n: number; oldest: number | null }>(
        `SELECT state, sum(attempts > 0) AS retrying, count(*) AS n, min(created_at) AS oldest FROM webhook_outbox GROUP BY state`,
      ),
      prune: db.prepare<[number, number]>(
        "DELETE FROM webhook_outbox WHERE seq IN (SELECT seq FROM webhook_outbox WHERE state = 'delivered' AND delivered_at < ? LIMIT ?)",
      ),
      docChange: db.prepare<{ account: string; doc_id: string }, ChangeRow>(
        `WITH ${LOGGED} WHERE account = @account AND doc_id = @doc_id GROUP BY doc_id)
         ${FROM_LOG}
         UNION ALL
         SELECT ${CHANGE_COLUMNS} FROM doc_changes WHERE account = @account AND doc_id = @doc_id AND NOT EXISTS (SELECT 1 FROM logged)`,
      ),
      listChanges: db.prepare<{ account: string; since: number; limit: number }, ChangeRow>(
        `WITH ${LOGGED} WHERE account = @account GROUP BY doc_id)
         ${FROM_LOG} WHERE l.cursor > @since
         UNION ALL
         SELECT ${CHANGE_COLUMNS} FROM doc_changes
         WHERE account = @account AND cursor > @since AND doc_id NOT IN (SELECT doc_id FROM logged)
         ORDER BY cursor LIMIT @limit`,
      ),
    };
    this.tx = {
      claim: db.transaction((o: ClaimOptions): OutboxRow[] => {
        const rows = this.stmt.due.all({ now: o.now, limit: o.limit, debounce: o.debounceMs, maxWait: o.maxWaitMs });
        return rows.map((r) => this.stmt.lease.get(o.holder, o.now + o.leaseMs, r.seq)!);
      }),
      remove: db.transaction((id: string): boolean => {
        this.stmt.deleteEndpointEvents.run(id);
        return this.stmt.deleteEndpoint.run(id).changes === 1;
      }),
      replay: db.transaction((ids: string[], now: number): number => {
        let n = 0;
        for (const id of ids) n += this.stmt.replayOne.run(now, id).changes;
        return n;
      }),
    };
  }

  /**
   * Records a stored change of `doc` (call inside the transaction that stores it): the next cursor, version + 1,
   * and its events — doc.changed folds into the endpoint's open one; doc.deleted is a new event.
   */
  recordChange(doc: DocKey, epoch: number, deleted: boolean, now: number): void {
    const cursor = this.stmt.bumpCursor.get()!.value;
    this.stmt.logChange.run({ account: doc.account, doc_id: doc.docId, epoch, cursor, deleted: deleted ? 1 : 0, now });
    if (cursor % CHANGE_LOG_FOLD === 0) {
      this.stmt.foldLog.run();
      this.stmt.clearLog.run();
    }
    if (deleted) {
      this.stmt.insertEvent.run({ type: 'doc.deleted', account: doc.account, doc_id: doc.docId, payload: null, now });
    } else {
      this.stmt.upsertChanged.run({ type: 'doc.changed', account: doc.account, doc_id: doc.docId, now });
    }
  }

  async createWebhookEndpoint(input: NewWebhookEndpoint, options: CreateWebhookOptions): Promise<CreatedWebhookEndpoint> {
    this.check();
    const url = validateWebhookUrl(input.url);
    const events = validateEventTypes(input.events);
    const id = newEndpointId();
    const secret = newWebhookSecret();
    const createdAt = Date.now();
    this.stmt.insertEndpoint.run({
      id,
      api_key: input.apiKey,
      url,
      events: JSON.stringify(events),
      secret_sealed: options.seal(id, secret),
      created_at: createdAt,
    });
    return { record: { id, apiKey: input.apiKey, url, events, createdAt }, secret };
  }

  async findWebhookEndpoint(id: string): Promise<WebhookEndpoint | undefined> {
    this.check();
    const row = this.stmt.findEndpoint.get(id);
    return row && toEndpoint(row);
  }

  async listWebhookEndpoints(apiKey?: string): Promise<WebhookEndpoint[]> {
    this.check();
    return this.stmt.listEndpoints.all().map(toEndpoint).filter((e) => apiKey === undefined || e.apiKey === apiKey);
  }

  async removeWebhookEndpoint(id: string): Promise<boolean> {
    this.check();
    return this.tx.remove.immediate(id);
  }

  async findWebhookSecret(id: string): Promise<Uint8Array | undefined> {
    this.check();
    return this.stmt.findSecret.get(id)?.secret_sealed;
  }

  async enqueueEvent(doc: DocKey, type: WebhookEventType, payload: Record<string, unknown> | null, now: number): Promise<number> {
    this.check();
    return this.stmt.insertEvent.run({ type, account: doc.account, doc_id: doc.docId, payload: payload && JSON.stringify(payload), now }).changes;
  }

  async claimEvents(options: ClaimOptions): Promise<OutboxEvent[]> {
    this.check();
    return this.tx.claim.immediate(options).map(toEvent);
  }

  async completeEvent(id: string, holder: string, now: number): Promise<boolean> {
    this.check();
    return this.stmt.complete.run(now, id, holder).changes === 1;
  }

  async failEvent(id: string, holder: string, now: number, error: string, nextAttemptAt: number | null): Promise<boolean> {
    this.check();
    return this.stmt.fail.run({ id, holder, now, error: error.slice(0, 500), next: nextAttemptAt }).changes === 1;
  }

  async findEvent(id: string): Promise<OutboxEvent | undefined> {
    this.check();
    const row = this.stmt.findEvent.get(id);
    return row && toEvent(row);
  }

  async listEvents(state: OutboxState, apiKey?: string): Promise<OutboxEvent[]> {
    this.check();
    const events = this.stmt.listEvents.all(state).map(toEvent);
    if (apiKey === undefined) return events;
    const endpoints = new Set((await this.listWebhookEndpoints(apiKey)).map((e) => e.id));
    return events.filter((e) => endpoints.has(e.endpointId));
  }

  async replayEvents(ids: string[] | 'all', now: number): Promise<number> {
    this.check();
    if (ids === 'all') return this.stmt.replayAll.run(now).changes;
    return this.tx.replay.immediate(ids, now);
  }

  async outboxStats(): Promise<OutboxStats> {
    this.check();
    const stats: OutboxStats = { pending: 0, retrying: 0, failed: 0, delivered: 0, oldestPendingAt: null };
    for (const row of this.stmt.stats.all()) {
      if (row.state === 'pending') {
        stats.pending = row.n;
        stats.retrying = row.retrying;
        stats.oldestPendingAt = row.oldest;
      } else if (row.state === 'failed') stats.failed = row.n;
      else if (row.state === 'delivered') stats.delivered = row.n;
    }
    return stats;
  }

  async pruneDelivered(before: number, limit: number): Promise<number> {
    this.check();
    return this.stmt.prune.run(before, limit).changes;
  }

  async docChange(doc: DocKey): Promise<DocChange | undefined> {
    this.check();
    const row = this.stmt.docChange.get({ account: doc.account, doc_id: doc.docId });
    return row && toChange(row);
  }

  async listChanges(account: string, since: number, limit: number): Promise<DocChange[]> {
    this.check();
    return this.stmt.listChanges.all({ account, since, limit }).map(toChange);
  }
}

function toEndpoint(row: EndpointRow): WebhookEndpoint {
  return { id: row.id, apiKey: row.api_key, url: row.url, events: JSON.parse(row.events) as WebhookEventType[], createdAt: row.created_at };
}

export function toEvent(row: OutboxRow): OutboxEvent {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    type: row.type as WebhookEventType,
    doc: { account: row.account, docId: row.doc_id },
    payload: row.payload === null ? null : (JSON.parse(row.payload) as Record<string, unknown>),
    createdAt: Number(row.created_at),
    firstChangeAt: Number(row.first_change_at),
    lastChangeAt: Number(row.last_change_at),
    attempts: row.attempts,
    roundAttempts: row.attempts - row.round_start,
    nextAttemptAt: Number(row.next_attempt_at),
    state: row.state as OutboxState,
    lastError: row.last_error,
  };
}

export function toChange(row: ChangeRow): DocChange {
  return {
    docId: row.doc_id,
    epoch: row.epoch,
    version: Number(row.version),
    deleted: Boolean(row.deleted),
    cursor: Number(row.cursor),
    changedAt: Number(row.changed_at),
  };
}
