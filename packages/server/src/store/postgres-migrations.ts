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
