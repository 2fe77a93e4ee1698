/**
 * Versioned schema of the Postgres store. Each server runs `migrate` at start: migrations not yet recorded in
 * `schema_migrations` run in order, each in its own transaction with its row, so a crash leaves the schema at a
 * whole version. Several servers may start at once: a session advisory lock makes one of them migrate while the
 * others wait and then find nothing left to do.
 *
 * Append new migrations at the end with the next version; never edit one that has shipped.
 */
import type { Pool } from 'pg';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'keys, sessions, updates',
    sql: `
CREATE TABLE keys (
  id            BIGSERIAL UNIQUE,        -- creation order for listKeys (created_at ties within a millisecond)
  api_key       TEXT PRIMARY KEY,
  name          TEXT NOT NULL,
  account       TEXT NOT NULL,
  origins       TEXT[] NOT NULL,
  require_token BOOLEAN NOT NULL,
  persistent    BOOLEAN NOT NULL,
  max_users     INTEGER,
  secret_hash   BYTEA NOT NULL,          -- SHA-256 of the secret; the secret itself is never stored
  created_at    BIGINT NOT NULL,         -- ms since the Unix epoch, like every time in this schema
  revoked_at    BIGINT
);
CREATE TABLE sessions (
  account       TEXT NOT NULL,
  doc_id        TEXT NOT NULL,
  epoch         INTEGER NOT NULL,
  seeded        BOOLEAN NOT NULL,
  last_active   BIGINT NOT NULL,
  lease_holder  TEXT,
  lease_expires BIGINT,
  PRIMARY KEY (account, doc_id)
);
CREATE TABLE updates (
  seq     BIGSERIAL PRIMARY KEY,
  account TEXT NOT NULL,
  doc_id  TEXT NOT NULL,
  epoch   INTEGER NOT NULL,
  data    BYTEA NOT NULL
);
CREATE INDEX updates_by_doc ON updates (account, doc_id, epoch, seq);
`,
  },
  {
    version: 2,
    name: 'compaction in one server-side call',
    // Compaction holds the document's row lock, which every server's appends to that document wait for. Run from
    // the client it would hold it across five round trips, so a stalled server (GC pause, starved CPU) would stall
    // everyone's acks on that document; as one function call the lock lasts the database's own work only.
    // Only rows of that epoch with seq ≤ the last one replaced go; the state reuses that seq, so load order stays
    // "state, then later updates". A session that ended meanwhile is left alone.
    sql: `
CREATE FUNCTION wave_compact(p_account TEXT, p_doc_id TEXT, p_epoch INTEGER, p_state BYTEA, p_up_to BIGINT)
RETURNS BOOLEAN LANGUAGE plpgsql AS $$
DECLARE
  top BIGINT;
BEGIN
  PERFORM 1 FROM sessions WHERE account = p_account AND doc_id = p_doc_id AND epoch = p_epoch FOR UPDATE;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  SELECT max(seq) INTO top FROM updates
   WHERE account = p_account AND doc_id = p_doc_id AND epoch = p_epoch AND seq <= p_up_to;
  IF top IS NULL THEN
    RETURN false;
  END IF;
  DELETE FROM updates WHERE account = p_account AND doc_id = p_doc_id AND epoch = p_epoch AND seq <= top;
  INSERT INTO updates (seq, account, doc_id, epoch, data) VALUES (top, p_account, p_doc_id, p_epoch, p_state);
  RETURN true;
END
$$;
`,
  },
  {
    version: 3,
    name: 'sealed key secrets',
    // HS256 tokens need the secret itself; it is stored sealed under the server master key (secret-box.ts).
    // Keys created before have NULL and get it sealed the first time their secret is presented to the REST API.
    sql: `ALTER TABLE keys ADD COLUMN secret_sealed BYTEA;`,
  },
  {
    version: 4,
    name: 'notify key changes',
    // Servers LISTEN on wave_keys (postgres-key-watch.ts) to close the connections of a key that was revoked or
    // tightened (S15), whoever changed it. The payload names the schema, since schemas of one database share
    // channels.
    sql: `
CREATE FUNCTION wave_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('wave_keys', TG_TABLE_SCHEMA || ' ' || CASE TG_OP WHEN 'DELETE' THEN OLD.api_key ELSE NEW.api_key END);
  RETURN NULL;
END
$$;
CREATE TRIGGER keys_changed AFTER UPDATE OF revoked_at, origins, require_token, account OR DELETE ON keys
  FOR EACH ROW EXECUTE FUNCTION wave_keys_changed();
`,
  },
  {
    version: 5,
    name: 'webhook outbox and change feed',
    // change_cursor is one row: every transaction that records a change updates it, holding its lock until
    // commit, so cursors become visible in increasing order and a reader that saw cursor N never later finds a
    // smaller one (the pull feed never skips). Appends lock their documents' session rows first, then this row.
    // wave_record_changes runs inside the transaction of the change (appendUpdates, commitSeed, deleteDocument).
    sql: `
CREATE TABLE webhook_endpoints (
  id            TEXT PRIMARY KEY,
  api_key       TEXT NOT NULL,
  url           TEXT NOT NULL,
  events        TEXT[] NOT NULL,
  secret_sealed BYTEA NOT NULL,
  created_at    BIGINT NOT NULL,
  n             BIGSERIAL
);
CREATE TABLE change_cursor (id INTEGER PRIMARY KEY CHECK (id = 1), value BIGINT NOT NULL);
INSERT INTO change_cursor VALUES (1, 0);
CREATE TABLE doc_changes (
  account    TEXT NOT NULL,
  doc_id     TEXT NOT NULL,
  epoch      INTEGER NOT NULL,
  version    BIGINT NOT NULL,
  cursor     BIGINT NOT NULL,
  deleted    BOOLEAN NOT NULL,
  changed_at BIGINT NOT NULL,
  PRIMARY KEY (account, doc_id)
);
CREATE INDEX doc_changes_by_cursor ON doc_changes (account, cursor);
CREATE TABLE webhook_outbox (
  seq             BIGSERIAL PRIMARY KEY,
  id              TEXT NOT NULL UNIQUE,
  endpoint_id     TEXT NOT NULL,
  type            TEXT NOT NULL,
  account         TEXT NOT NULL,
  doc_id          TEXT NOT NULL,
  payload         TEXT,
  created_at      BIGINT NOT NULL,
  first_change_at BIGINT NOT NULL,
  last_change_at  BIGINT NOT NULL,
  attempts        INTEGER NOT NULL DEFAULT 0,
  round_start     INTEGER NOT NULL DEFAULT 0,
  next_attempt_at BIGINT NOT NULL,
  state           TEXT NOT NULL,
  lease_holder    TEXT,
  lease_expires   BIGINT,
  last_error      TEXT,
  delivered_at    BIGINT
);
CREATE UNIQUE INDEX outbox_open_change ON webhook_outbox (endpoint_id, account, doc_id)
  WHERE type = 'doc.changed' AND state = 'pending' AND attempts = 0 AND lease_holder IS NULL;
CREATE INDEX outbox_by_state ON webhook_outbox (state, next_attempt_at);
CREATE FUNCTION wave_record_changes(p_accounts TEXT[], p_doc_ids TEXT[], p_epochs INTEGER[], p_deleted BOOLEAN, p_now BIGINT)
RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
  n   INTEGER := coalesce(cardinality(p_accounts), 0);
  top BIGINT;
BEGIN
  -- One row per document (callers group them): ON CONFLICT may touch a row once per statement.
  IF n = 0 THEN
    RETURN;
  END IF;
  UPDATE change_cursor SET value = value + n WHERE id = 1 RETURNING value INTO top;
  INSERT INTO doc_changes (account, doc_id, epoch, version, cursor, deleted, changed_at)
  SELECT t.a, t.d, t.e, 1, top - n + t.i, p_deleted, p_now
  FROM unnest(p_accounts, p_doc_ids, p_epochs) WITH ORDINALITY AS t(a, d, e, i)
  ON CONFLICT (account, doc_id) DO UPDATE SET epoch = EXCLUDED.epoch, version = doc_changes.version + 1,
    cursor = EXCLUDED.cursor, deleted = EXCLUDED.deleted, changed_at = EXCLUDED.changed_at;
  IF p_deleted THEN
    INSERT INTO webhook_outbox (id, endpoint_id, type, account, doc_id, created_at, first_change_at, last_change_at, next_attempt_at, state)
    SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), e.id, 'doc.deleted', t.a, t.d, p_now, p_now, p_now, p_now, 'pending'
    FROM unnest(p_accounts, p_doc_ids) AS t(a, d)
    JOIN keys k ON k.account = t.a AND k.revoked_at IS NULL
    JOIN webhook_endpoints e ON e.api_key = k.api_key AND 'doc.deleted' = ANY (e.events);
  ELSE
    INSERT INTO webhook_outbox (id, endpoint_id, type, account, doc_id, created_at, first_change_at, last_change_at, next_attempt_at, state)
    SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), e.id, 'doc.changed', t.a, t.d, p_now, p_now, p_now, p_now, 'pending'
    FROM unnest(p_accounts, p_doc_ids) AS t(a, d)
    JOIN keys k ON k.account = t.a AND k.revoked_at IS NULL
    JOIN webhook_endpoints e ON e.api_key = k.api_key AND 'doc.changed' = ANY (e.events)
    ON CONFLICT (endpoint_id, account, doc_id) WHERE type = 'doc.changed' AND state = 'pending' AND attempts = 0 AND lease_holder IS NULL
    DO UPDATE SET last_change_at = GREATEST(webhook_outbox.last_change_at, EXCLUDED.last_change_at);
  END IF;
END
$$;
`,
  },
];

/** Newest schema version this server knows. */
export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** Identifiers we create ourselves; anything else is refused rather than quoted. */
export const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * Brings the database (or `schema`, when given) to `LATEST_VERSION`. Returns the versions it applied. Throws when
 * the database was migrated by a newer server: running old code on a newer schema could corrupt it.
 */
export async function migrate(pool: Pool, schema: string | undefined): Promise<number[]> {
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) throw new TypeError(`schema ${JSON.stringify(schema)}: expected an SQL identifier`);
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    // One lock per schema, so that test runs in separate schemas of one database do not wait for each other.
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [`wave-server migrations ${schema ?? ''}`]);
    try {
      if (schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version    INTEGER PRIMARY KEY,
        name       TEXT NOT NULL,
        applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
      )`);
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
      const applied = new Set(rows.map((r) => r.version));
      const newest = Math.max(0, ...applied);
      if (newest > LATEST_VERSION) {
        throw new Error(`database schema version ${newest} is newer than this server's (${LATEST_VERSION}); upgrade the server`);
      }
      const done: number[] = [];
      for (const migration of MIGRATIONS) {
        if (applied.has(migration.version)) continue;
        await client.query('BEGIN');
        try {
          await client.query(migration.sql);
          await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK').catch(() => {});
          throw new Error(`migration ${migration.version} (${migration.name}) failed: ${(error as Error).message}`, { cause: error });
        }
        done.push(migration.version);
      }
      return done;
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [`wave-server migrations ${schema ?? ''}`]).catch((error: unknown) => {
        // The connection is gone, and with it the session lock.
        broken = error as Error;
      });
    }
  } finally {
    client.release(broken);
  }
}
