/**
 * `Store` on PostgreSQL (`pg` Pool), for several servers sharing one database. Same contract as `SqliteStore`
 * (test/store-contract.ts); what changes is that other processes write concurrently, so every decision that two
 * servers could race on is taken under a row lock in one transaction:
 * - a document's `sessions` row is the lock of that document: `openSession`, `commitSeed`, `appendUpdates` and
 *   `compact` take it `FOR UPDATE`; the seed lease is one conditional `UPDATE` (re-checked after a lock wait).
 * - Appends to one document are therefore serialised across servers, so their `seq` order is their commit order:
 *   once a commit is visible, no row with a smaller seq of that document can still appear. Compaction relies on
 *   it (it deletes rows ≤ upToSeq, all of which its state contains).
 *
 * The schema is migrated lazily, before the first query (`postgres-migrations.ts`), so opening a store is
 * synchronous like SQLite's and a database that is down is reported by the first call, not by the constructor.
 */
import pg from 'pg';
import type { PoolClient } from 'pg';
import type { AppendEntry, CreateKeyOptions, CreatedKey, DocKey, KeyChanges, KeyRecord, NewKey, SessionInfo, SessionTouch, StopWatching, Store, StoredDocument } from './types.js';
import { PostgresKeyWatch } from './postgres-key-watch.js';
import { SCHEMA_NAME, migrate } from './postgres-migrations.js';
import { hashSecret, newApiKey, newSecret, secretMatches } from './secrets.js';
import { validateNewKey, validateOrigins } from './validate.js';
import { PostgresWebhooks } from './postgres-webhooks.js';

export interface PostgresStoreOptions {
  /** A libpq URL without our own parameters (see `parsePostgresUrl`). */
  connectionString: string;
  /** Tables live in this schema (created when missing); default: the database's search_path. */
  schema?: string;
  /**
   * Connections in the pool. The commit queue writes one batch at a time; the rest serve joins, leases and health
   * checks. 10 is pg's default and leaves room for several servers under Postgres's default of 100 connections.
   */
  poolSize?: number;
}

/** Our own query parameter, removed before the URL reaches libpq: `?schema=NAME`. */
export function parsePostgresUrl(url: string): PostgresStoreOptions {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema') ?? undefined;
  parsed.searchParams.delete('schema');
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    throw new TypeError(`schema ${JSON.stringify(schema)}: expected letters, digits and _ (an SQL identifier)`);
  }
  return { connectionString: parsed.toString(), ...(schema !== undefined ? { schema } : {}) };
}

interface KeyRow {
  api_key: string;
  name: string;
  account: string;
  origins: string[];
  require_token: boolean;
  persistent: boolean;
  max_users: number | null;
  secret_hash: Buffer;
  created_at: string;
  revoked_at: string | null;
}

interface SessionRow {
  epoch: number;
  seeded: boolean;
  last_active: string;
  lease_holder: string | null;
  lease_expires: string | null;
}

const SESSION_COLUMNS = 'epoch, seeded, last_active, lease_holder, lease_expires';

export class PostgresStore implements Store {
  readonly schema: string | undefined;
  private readonly pool: pg.Pool;
  private ready: Promise<void> | undefined;
  private closed = false;
  /** Connection settings of the pool, reused by the key watchers' own connections. */
  private readonly clientConfig: pg.ClientConfig;
  private readonly watchers = new Set<PostgresKeyWatch>();
  /** Webhook endpoints, outbox and change feed (postgres-webhooks.ts); the methods below delegate to it. */
  private readonly webhooks = new PostgresWebhooks((sql, params) => this.query(sql, params));

  constructor(options: PostgresStoreOptions) {
    this.schema = options.schema;
    if (this.schema !== undefined && !SCHEMA_NAME.test(this.schema)) {
      throw new TypeError(`schema ${JSON.stringify(this.schema)}: expected an SQL identifier`);
    }
    const settings = [
      // Acks are sent after commit and promise durability: a database configured with synchronous_commit=off
      // would return from COMMIT before the WAL is flushed. Forced on for our sessions whatever the default.
      '-c synchronous_commit=on',
      ...(this.schema !== undefined ? [`-c search_path=${this.schema}`] : []),
    ];
    this.clientConfig = {
      connectionString: options.connectionString,
      options: settings.join(' '),
      // A database that does not answer must surface as an error (healthz, retrying commit queue), not a hang.
      connectionTimeoutMillis: 5_000,
    };
    this.pool = new pg.Pool({ ...this.clientConfig, max: options.poolSize ?? 10 });
    // An idle client that loses its connection emits 'error' on the pool; the next query gets a fresh client.
    this.pool.on('error', () => {});
  }

  /** Runs the migrations once; every public method awaits it. */
  private init(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    this.ready ??= migrate(this.pool, this.schema).then(
      () => {},
      (error: unknown) => {
        this.ready = undefined; // the next call tries again (the database may come back)
        throw error;
      },
    );
    return this.ready;
  }

  private async query<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    await this.init();
    return this.pool.query<R>(sql, params);
  }

  /** Runs `fn` in one transaction (READ COMMITTED; decisions are made under row locks). */
  private async transaction<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
    await this.init();
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError as Error; // the connection is unusable: drop it from the pool
      });
      throw error;
    } finally {
      client.release(broken);
    }
  }

  // --- keys ---

  async createKey(input: NewKey, options: CreateKeyOptions = {}): Promise<CreatedKey> {
    const valid = validateNewKey(input);
    const apiKey = newApiKey();
    const secret = newSecret();
    const createdAt = Date.now();
    await this.query(
      `INSERT INTO keys (api_key, name, account, origins, require_token, persistent, max_users, secret_hash, created_at, secret_sealed)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
        apiKey, valid.name, valid.account, valid.origins, valid.requireToken, valid.persistent, valid.maxUsers, hashSecret(secret), createdAt,
        options.seal ? Buffer.from(options.seal(apiKey, secret)) : null,
      ],
    );
    return { record: { apiKey, ...valid, createdAt, revokedAt: null }, secret };
  }

  async findKey(apiKey: string): Promise<KeyRecord | undefined> {
    const { rows } = await this.query<KeyRow>('SELECT * FROM keys WHERE api_key = $1', [apiKey]);
    return rows[0] && toKeyRecord(rows[0]);
  }

  async listKeys(): Promise<KeyRecord[]> {
    const { rows } = await this.query<KeyRow>('SELECT * FROM keys ORDER BY created_at, id');
    return rows.map(toKeyRecord);
  }

  async revokeKey(apiKey: string): Promise<boolean> {
    const { rowCount } = await this.query('UPDATE keys SET revoked_at = $1 WHERE api_key = $2 AND revoked_at IS NULL', [Date.now(), apiKey]);
    return rowCount === 1;
  }

  async updateKey(apiKey: string, changes: KeyChanges): Promise<KeyRecord | undefined> {
    const origins = changes.origins === undefined ? null : validateOrigins(changes.origins);
    const { rows } = await this.query<KeyRow>(
      `UPDATE keys SET origins = coalesce($2, origins), require_token = coalesce($3, require_token)
       WHERE api_key = $1 AND revoked_at IS NULL RETURNING *`,
      [apiKey, origins, changes.requireToken ?? null],
    );
    return rows[0] && toKeyRecord(rows[0]);
  }

  watchKeys(onChange: (apiKey: string | undefined) => void): StopWatching {
    if (this.closed) throw new Error('store is closed');
    const watch = new PostgresKeyWatch(this.clientConfig, () => this.init(), onChange);
    this.watchers.add(watch);
    return async () => {
      this.watchers.delete(watch);
      await watch.stop();
    };
  }

  async findSealedSecret(apiKey: string): Promise<Uint8Array | undefined> {
    const { rows } = await this.query<{ secret_sealed: Buffer | null }>('SELECT secret_sealed FROM keys WHERE api_key = $1', [apiKey]);
    return rows[0]?.secret_sealed ?? undefined;
  }

  async setSealedSecret(apiKey: string, sealed: Uint8Array): Promise<void> {
    await this.query('UPDATE keys SET secret_sealed = $1 WHERE api_key = $2', [Buffer.from(sealed), apiKey]);
  }

  async verifySecret(apiKey: string, secret: string): Promise<boolean> {
    const { rows } = await this.query<Pick<KeyRow, 'secret_hash' | 'revoked_at'>>(
      'SELECT secret_hash, revoked_at FROM keys WHERE api_key = $1',
      [apiKey],
    );
    const row = rows[0];
    return secretMatches(row?.secret_hash, secret) && row !== undefined && row.revoked_at === null;
  }

  // --- sessions ---

  async openSession(doc: DocKey, opts: { now: number; graceMs: number; persistent: boolean }): Promise<SessionInfo> {
    return this.transaction(async (c) => {
      // Two servers opening a new document at once: one inserts, the other waits for that commit and finds the row.
      const inserted = await c.query(
        `INSERT INTO sessions (account, doc_id, epoch, seeded, last_active) VALUES ($1, $2, 1, false, $3)
         ON CONFLICT (account, doc_id) DO NOTHING`,
        [doc.account, doc.docId, opts.now],
      );
      if (inserted.rowCount === 1) return { epoch: 1, seeded: false };
      const row = await lockSession(c, doc);
      if (!row) throw new Error(`session of ${doc.account}/${doc.docId} vanished while it was opened`);
      if (!opts.persistent && opts.now - Number(row.last_active) > opts.graceMs) {
        // The session ended: a new epoch starts empty, and the old content goes in the same transaction.
        const epoch = row.epoch + 1;
        await c.query('DELETE FROM updates WHERE account = $1 AND doc_id = $2', [doc.account, doc.docId]);
        await c.query(
          `UPDATE sessions SET epoch = $1, seeded = false, last_active = $2, lease_holder = NULL, lease_expires = NULL
           WHERE account = $3 AND doc_id = $4`,
          [epoch, opts.now, doc.account, doc.docId],
        );
        return { epoch, seeded: false };
      }
      await touch(c, doc, row.epoch, opts.now);
      return { epoch: row.epoch, seeded: row.seeded };
    });
  }

  async touchSession(doc: DocKey, epoch: number, now: number): Promise<void> {
    await this.init();
    await touch(this.pool, doc, epoch, now);
  }

  async touchSessions(touches: readonly SessionTouch[], now: number): Promise<number[]> {
    if (touches.length === 0) return [];
    // One statement: `locked` takes the session rows FOR UPDATE sorted, as appendUpdates does, so that two servers'
    // sweeps and batches cannot deadlock; GREATEST never moves activity back. The indices returned are the touches
    // that matched a session of their epoch.
    const { rows } = await this.query<{ i: number }>(
      `WITH t AS (
         SELECT * FROM unnest($2::text[], $3::text[], $4::int[]) WITH ORDINALITY AS t(account, doc_id, epoch, i)
       ), locked AS (
         SELECT s.account, s.doc_id, t.i FROM sessions s
         JOIN t ON s.account = t.account AND s.doc_id = t.doc_id AND s.epoch = t.epoch
         ORDER BY s.account, s.doc_id FOR UPDATE OF s
       )
       UPDATE sessions s SET last_active = GREATEST(s.last_active, $1)
       FROM locked l WHERE s.account = l.account AND s.doc_id = l.doc_id
       RETURNING l.i::int AS i`,
      [now, touches.map((t) => t.doc.account), touches.map((t) => t.doc.docId), touches.map((t) => t.epoch)],
    );
    const touched = new Set(rows.map((r) => Number(r.i) - 1));
    return touches.map((_, i) => i).filter((i) => !touched.has(i));
  }

  async getSession(doc: DocKey): Promise<SessionInfo | undefined> {
    const { rows } = await this.query<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE account = $1 AND doc_id = $2`, [
      doc.account,
      doc.docId,
    ]);
    const row = rows[0];
    return row && { epoch: row.epoch, seeded: row.seeded };
  }

  async acquireSeedLease(doc: DocKey, epoch: number, holder: string, now: number, ttlMs: number): Promise<boolean> {
    // One statement: after waiting for a competing writer's row lock, Postgres re-checks the WHERE clause on the
    // new row version, so two servers asking at the same instant cannot both win.
    const { rowCount } = await this.query(
      `UPDATE sessions SET lease_holder = $4, lease_expires = $5
       WHERE account = $1 AND doc_id = $2 AND epoch = $3 AND NOT seeded
         AND (lease_holder IS NULL OR lease_holder = $4 OR lease_expires <= $6)`,
      [doc.account, doc.docId, epoch, holder, now + ttlMs, now],
    );
    return rowCount === 1;
  }

  async releaseSeedLease(doc: DocKey, epoch: number, holder: string): Promise<void> {
    await this.query(
      `UPDATE sessions SET lease_holder = NULL, lease_expires = NULL
       WHERE account = $1 AND doc_id = $2 AND epoch = $3 AND lease_holder = $4`,
      [doc.account, doc.docId, epoch, holder],
    );
  }

  async commitSeed(doc: DocKey, epoch: number, holder: string, update: Uint8Array, now: number): Promise<boolean> {
    const data = toBuffer(update);
    return this.transaction(async (c) => {
      const row = await lockSession(c, doc);
      // The holder check alone gives exclusivity: an expired lease stays this holder's until another takes it.
      if (!row || row.epoch !== epoch || row.seeded || row.lease_holder !== holder) return false;
      await c.query('INSERT INTO updates (account, doc_id, epoch, data) VALUES ($1, $2, $3, $4)', [doc.account, doc.docId, epoch, data]);
      await c.query(
        `UPDATE sessions SET seeded = true, lease_holder = NULL, lease_expires = NULL, last_active = GREATEST(last_active, $3)
         WHERE account = $1 AND doc_id = $2`,
        [doc.account, doc.docId, now],
      );
      await c.query('SELECT wave_record_changes($1, $2, $3, false, $4)', [[doc.account], [doc.docId], [epoch], now]);
      return true;
    });
  }

  // --- updates ---

  async loadDocument(doc: DocKey, epoch: number): Promise<StoredDocument> {
    const { rows } = await this.query<{ seq: string; data: Buffer }>(
      'SELECT seq, data FROM updates WHERE account = $1 AND doc_id = $2 AND epoch = $3 ORDER BY seq',
      [doc.account, doc.docId, epoch],
    );
    return { updates: rows.map((r) => r.data), lastSeq: rows.length > 0 ? Number(rows[rows.length - 1]!.seq) : 0 };
  }

  async lastSeq(doc: DocKey, epoch: number): Promise<number> {
    const { rows } = await this.query<{ seq: string | null }>(
      'SELECT max(seq) AS seq FROM updates WHERE account = $1 AND doc_id = $2 AND epoch = $3',
      [doc.account, doc.docId, epoch],
    );
    return Number(rows[0]?.seq ?? 0);
  }

  async appendUpdates(entries: AppendEntry[], now = Date.now()): Promise<void> {
    if (entries.length === 0) return;
    // Checked before the transaction: pg would store a non-byte value as its text form instead of failing.
    const data = entries.map((e, i) => {
      if (!(e.update instanceof Uint8Array)) throw new TypeError(`appendUpdates: entry ${i} update is not a Uint8Array`);
      return toBuffer(e.update);
    });
    // One statement, so one round trip and its own transaction (the ack latency is mostly round trips + fsync):
    // - `locked` takes every document's session row FOR UPDATE, sorted, so two servers' batches cannot deadlock.
    //   That serialises appends per document across servers: seq order = commit order (see the header).
    //   (A CTE with FOR UPDATE is never inlined; a row is inserted only after its document's row is locked.)
    // - Entries whose epoch is not the current one are dropped by the join: that session's content is gone.
    // - WITH ORDINALITY + ORDER BY keeps the seq order equal to the enqueue order.
    // - Each document with stored rows gets its change recorded (version, feed cursor, doc.changed) by
    //   wave_record_changes in the same statement, after the session rows are locked (lock order: sessions, then
    //   change_cursor), set-based: one cursor update per batch.
    await this.query(
      `WITH locked AS (
         SELECT account, doc_id, epoch FROM sessions
         WHERE (account, doc_id) IN (SELECT DISTINCT * FROM unnest($1::text[], $2::text[]))
         ORDER BY account, doc_id FOR UPDATE
       ), inserted AS (
         INSERT INTO updates (account, doc_id, epoch, data)
         SELECT t.account, t.doc_id, t.epoch, t.data
         FROM unnest($1::text[], $2::text[], $3::int[], $4::bytea[]) WITH ORDINALITY AS t(account, doc_id, epoch, data, n)
         JOIN locked l ON l.account = t.account AND l.doc_id = t.doc_id AND l.epoch = t.epoch
         ORDER BY t.n
         RETURNING account, doc_id, epoch
       )
       SELECT wave_record_changes(array_agg(account), array_agg(doc_id), array_agg(epoch), false, $5)
       FROM (SELECT account, doc_id, max(epoch) AS epoch FROM inserted GROUP BY account, doc_id) d`,
      [entries.map((e) => e.doc.account), entries.map((e) => e.doc.docId), entries.map((e) => e.epoch), data, now],
    );
  }

  async compact(doc: DocKey, epoch: number, state: Uint8Array, upToSeq: number): Promise<void> {
    // Under the document's row lock, in one server-side call (migration 2 says why): rows other servers append
    // after upToSeq stay, after the state.
    await this.query('SELECT wave_compact($1, $2, $3, $4, $5)', [doc.account, doc.docId, epoch, toBuffer(state), upToSeq]);
  }

  async deleteDocument(doc: DocKey, now = Date.now()): Promise<void> {
    await this.transaction(async (c) => {
      const session = await lockSession(c, doc);
      await c.query('DELETE FROM updates WHERE account = $1 AND doc_id = $2', [doc.account, doc.docId]);
      await c.query('DELETE FROM sessions WHERE account = $1 AND doc_id = $2', [doc.account, doc.docId]);
      if (session) await c.query('SELECT wave_record_changes($1, $2, $3, true, $4)', [[doc.account], [doc.docId], [session.epoch], now]);
    });
  }

  // --- webhooks (postgres-webhooks.ts) ---

  createWebhookEndpoint: PostgresWebhooks['createWebhookEndpoint'] = (input, options) => this.webhooks.createWebhookEndpoint(input, options);
  findWebhookEndpoint: PostgresWebhooks['findWebhookEndpoint'] = (id) => this.webhooks.findWebhookEndpoint(id);
  listWebhookEndpoints: PostgresWebhooks['listWebhookEndpoints'] = (apiKey) => this.webhooks.listWebhookEndpoints(apiKey);
  removeWebhookEndpoint: PostgresWebhooks['removeWebhookEndpoint'] = (id) => this.webhooks.removeWebhookEndpoint(id);
  findWebhookSecret: PostgresWebhooks['findWebhookSecret'] = (id) => this.webhooks.findWebhookSecret(id);
  enqueueEvent: PostgresWebhooks['enqueueEvent'] = (doc, type, payload, now) => this.webhooks.enqueueEvent(doc, type, payload, now);
  claimEvents: PostgresWebhooks['claimEvents'] = (options) => this.webhooks.claimEvents(options);
  completeEvent: PostgresWebhooks['completeEvent'] = (id, holder, now) => this.webhooks.completeEvent(id, holder, now);
  failEvent: PostgresWebhooks['failEvent'] = (id, holder, now, error, next) => this.webhooks.failEvent(id, holder, now, error, next);
  findEvent: PostgresWebhooks['findEvent'] = (id) => this.webhooks.findEvent(id);
  listEvents: PostgresWebhooks['listEvents'] = (state, apiKey) => this.webhooks.listEvents(state, apiKey);
  replayEvents: PostgresWebhooks['replayEvents'] = (ids, now) => this.webhooks.replayEvents(ids, now);
  outboxStats: PostgresWebhooks['outboxStats'] = () => this.webhooks.outboxStats();
  pruneDelivered: PostgresWebhooks['pruneDelivered'] = (before, limit) => this.webhooks.pruneDelivered(before, limit);
  docChange: PostgresWebhooks['docChange'] = (doc) => this.webhooks.docChange(doc);
  listChanges: PostgresWebhooks['listChanges'] = (account, since, limit) => this.webhooks.listChanges(account, since, limit);

  async ping(): Promise<void> {
    await this.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.watchers].map((w) => w.stop()));
    this.watchers.clear();
    // Let a migration in progress finish before the pool goes (pool.end waits for checked-out clients).
    await this.ready?.catch(() => {});
    await this.pool.end();
  }
}

async function lockSession(c: PoolClient, doc: DocKey): Promise<SessionRow | undefined> {
  const { rows } = await c.query<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE account = $1 AND doc_id = $2 FOR UPDATE`, [
    doc.account,
    doc.docId,
  ]);
  return rows[0];
}

async function touch(c: Pick<pg.Pool, 'query'>, doc: DocKey, epoch: number, now: number): Promise<void> {
  // GREATEST: an older touch (a slow server) never moves activity back.
  await c.query('UPDATE sessions SET last_active = GREATEST(last_active, $1) WHERE account = $2 AND doc_id = $3 AND epoch = $4', [
    now,
    doc.account,
    doc.docId,
    epoch,
  ]);
}

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function toKeyRecord(row: KeyRow): KeyRecord {
  return {
    apiKey: row.api_key,
    name: row.name,
    account: row.account,
    origins: row.origins,
    requireToken: row.require_token,
    persistent: row.persistent,
    maxUsers: row.max_users,
    createdAt: Number(row.created_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}
