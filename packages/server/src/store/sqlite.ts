/**
 * `Store` on SQLite (better-sqlite3). One file holds keys, sessions and updates; several processes (the server and
 * the `keys` CLI) may open it at once, which is how keys created or revoked by the CLI reach a running server.
 *
 * better-sqlite3 is synchronous: a method run on this connection runs its statements at call time and returns a
 * settled Promise. All statements are short (indexed lookups, one insert per update); large work is batched by the
 * commit queue. For a file store, the document writes a room makes while clients join and edit — `appendUpdates`
 * (the hot path, a transaction and an fsync per batch), the session calls (`openSession`, `touchSessions`), seeding, compaction,
 * deletion and the rooms' webhook events — run on a worker thread with its own connection (sqlite-writer-thread.ts),
 * so their commits never block the event loop. Keys, webhook endpoints and deliveries, and reads stay on this
 * connection.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import type {
  AppendEntry,
  CreateKeyOptions,
  CreatedKey,
  DocKey,
  KeyChanges,
  KeyRecord,
  NewKey,
  SessionInfo,
  SessionTouch,
  StopWatching,
  Store,
  StoredDocument,
} from './types.js';
import { hashSecret, newApiKey, newSecret, secretMatches } from './secrets.js';
import { validateNewKey, validateOrigins } from './validate.js';
import { SqliteWebhooks, WEBHOOK_SCHEMA } from './sqlite-webhooks.js';
import { SqliteWriterThread } from './sqlite-writer-thread.js';

/** Bumped when the schema changes; `PRAGMA user_version` holds the version a file was created with. */
/**
 * 2: `keys.secret_sealed` (tokens need the secret; secret-box.ts). 3: `key_changes` (watchKeys). 4: webhook outbox
 * and change feed. 5: the feed's change log (sqlite-webhooks.ts); a server of version 4 would not read it.
 */
const SCHEMA_VERSION = 5;

/** How often a watching server reads the key change counter: a revoked key's sockets close within this + a query. */
const KEY_POLL_MS = 250;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS keys (
  api_key       TEXT PRIMARY KEY,
  name          TEXT NOT NULL,
  account       TEXT NOT NULL,
  origins       TEXT NOT NULL,          -- JSON array of strings
  require_token INTEGER NOT NULL,
  persistent    INTEGER NOT NULL,
  max_users     INTEGER,
  secret_hash   BLOB NOT NULL,          -- SHA-256 of the secret (REST checks)
  created_at    INTEGER NOT NULL,
  revoked_at    INTEGER,
  secret_sealed BLOB                    -- AES-256-GCM under the server master key (token checks); NULL for old keys
);
CREATE TABLE IF NOT EXISTS sessions (
  account       TEXT NOT NULL,
  doc_id        TEXT NOT NULL,
  epoch         INTEGER NOT NULL,
  seeded        INTEGER NOT NULL,
  last_active   INTEGER NOT NULL,
  lease_holder  TEXT,
  lease_expires INTEGER,
  PRIMARY KEY (account, doc_id)
);
CREATE TABLE IF NOT EXISTS updates (
  seq     INTEGER PRIMARY KEY AUTOINCREMENT,
  account TEXT NOT NULL,
  doc_id  TEXT NOT NULL,
  epoch   INTEGER NOT NULL,
  data    BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS updates_by_doc ON updates (account, doc_id, epoch, seq);
-- One row counting changes to keys that can withdraw access, whoever made them (the CLI, SQL by hand): servers poll
-- it (watchKeys). Maintained by triggers, so no writer can change a key without bumping it.
CREATE TABLE IF NOT EXISTS key_changes (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  version INTEGER NOT NULL
);
INSERT OR IGNORE INTO key_changes (id, version) VALUES (1, 0);
CREATE TRIGGER IF NOT EXISTS keys_updated AFTER UPDATE OF revoked_at, origins, require_token, account ON keys
BEGIN UPDATE key_changes SET version = version + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS keys_deleted AFTER DELETE ON keys
BEGIN UPDATE key_changes SET version = version + 1 WHERE id = 1; END;
`;

interface KeyRow {
  api_key: string;
  name: string;
  account: string;
  origins: string;
  require_token: number;
  persistent: number;
  max_users: number | null;
  secret_hash: Buffer;
  created_at: number;
  revoked_at: number | null;
}

interface SessionRow {
  epoch: number;
  seeded: number;
  last_active: number;
  lease_holder: string | null;
  lease_expires: number | null;
}

export interface SqliteStoreOptions {
  /** Milliseconds a statement waits for another process's write lock before failing (SQLITE_BUSY). */
  busyTimeoutMs?: number;
  /**
   * Commit the document writes (`WriterMethod`) on a worker thread (default true for a file; `:memory:` cannot be
   * shared with another connection, so it always writes here).
   */
  writeInWorker?: boolean;
}

/** Default of `SqliteStoreOptions.busyTimeoutMs`. */
const BUSY_TIMEOUT_MS = 5_000;

export class SqliteStore implements Store {
  readonly path: string;
  /** Webhook endpoints, outbox and change feed (sqlite-webhooks.ts); the methods below delegate to it. */
  private readonly webhooks: SqliteWebhooks;
  private readonly db: Database.Database;
  private readonly stmt;
  private readonly tx;
  private closed = false;
  /** The writer thread of the document writes, when they run on one. */
  private readonly writer: SqliteWriterThread | undefined;
  /** Poll timers of `watchKeys`, stopped at close. */
  private readonly watchers = new Set<NodeJS.Timeout>();

  /** `path` is a file path (its folder is created when missing) or `:memory:`. */
  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.path = path === ':memory:' ? path : resolve(path);
    if (this.path !== ':memory:') mkdirSync(dirname(this.path), { recursive: true });
    this.db = new Database(this.path);
    // Another process (the CLI, a second server) may hold the write lock for a moment; wait instead of failing.
    const busyTimeoutMs = options.busyTimeoutMs ?? BUSY_TIMEOUT_MS;
    this.db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    this.db.pragma('journal_mode = WAL');
    // We ack an edit only after its transaction commits, and promise that acked edits survive crashes. In WAL mode
    // `synchronous = NORMAL` does not fsync the WAL at commit: the commit survives a killed process but a power
    // loss or OS crash can roll it back, losing acked edits. `FULL` fsyncs the WAL on every commit; the commit
    // queue groups many updates into one transaction so that the fsync cost is paid once per batch.
    this.db.pragma('synchronous = FULL');
    this.migrate();
    if (options.writeInWorker !== false && this.path !== ':memory:') this.writer = new SqliteWriterThread({ path: this.path, busyTimeoutMs });

    const db = this.db;
    this.webhooks = new SqliteWebhooks(db, () => this.check());
    this.stmt = {
      insertKey: db.prepare(
        `INSERT INTO keys (api_key, name, account, origins, require_token, persistent, max_users, secret_hash, created_at, revoked_at, secret_sealed)
         VALUES (@api_key, @name, @account, @origins, @require_token, @persistent, @max_users, @secret_hash, @created_at, NULL, @secret_sealed)`,
      ),
      findSealed: db.prepare<[string], { secret_sealed: Buffer | null }>('SELECT secret_sealed FROM keys WHERE api_key = ?'),
      setSealed: db.prepare<[Uint8Array, string]>('UPDATE keys SET secret_sealed = ? WHERE api_key = ?'),
      findKey: db.prepare<[string], KeyRow>('SELECT * FROM keys WHERE api_key = ?'),
      listKeys: db.prepare<[], KeyRow>('SELECT * FROM keys ORDER BY created_at, rowid'),
      revokeKey: db.prepare<[number, string]>('UPDATE keys SET revoked_at = ? WHERE api_key = ? AND revoked_at IS NULL'),
      updateKey: db.prepare<{ api_key: string; origins: string | null; require_token: number | null }>(
        `UPDATE keys SET origins = coalesce(@origins, origins), require_token = coalesce(@require_token, require_token)
         WHERE api_key = @api_key AND revoked_at IS NULL`,
      ),
      keyVersion: db.prepare<[], { version: number }>('SELECT version FROM key_changes WHERE id = 1'),
      getSession: db.prepare<[string, string], SessionRow>(
        'SELECT epoch, seeded, last_active, lease_holder, lease_expires FROM sessions WHERE account = ? AND doc_id = ?',
      ),
      insertSession: db.prepare<[string, string, number]>(
        'INSERT INTO sessions (account, doc_id, epoch, seeded, last_active) VALUES (?, ?, 1, 0, ?)',
      ),
      renewSession: db.prepare<[number, number, string, string]>(
        `UPDATE sessions SET epoch = ?, seeded = 0, last_active = ?, lease_holder = NULL, lease_expires = NULL
         WHERE account = ? AND doc_id = ?`,
      ),
      touch: db.prepare<[number, string, string, number]>(
        'UPDATE sessions SET last_active = max(last_active, ?) WHERE account = ? AND doc_id = ? AND epoch = ?',
      ),
      setLease: db.prepare<[string | null, number | null, string, string]>(
        'UPDATE sessions SET lease_holder = ?, lease_expires = ? WHERE account = ? AND doc_id = ?',
      ),
      markSeeded: db.prepare<[number, string, string]>(
        'UPDATE sessions SET seeded = 1, lease_holder = NULL, lease_expires = NULL, last_active = max(last_active, ?) WHERE account = ? AND doc_id = ?',
      ),
      insertUpdate: db.prepare<[string, string, number, Uint8Array]>(
        'INSERT INTO updates (account, doc_id, epoch, data) VALUES (?, ?, ?, ?)',
      ),
      insertUpdateAt: db.prepare<[number, string, string, number, Uint8Array]>(
        'INSERT INTO updates (seq, account, doc_id, epoch, data) VALUES (?, ?, ?, ?, ?)',
      ),
      loadUpdates: db.prepare<[string, string, number], { seq: number; data: Buffer }>(
        'SELECT seq, data FROM updates WHERE account = ? AND doc_id = ? AND epoch = ? ORDER BY seq',
      ),
      lastSeq: db.prepare<[string, string, number], { seq: number | null }>(
        'SELECT max(seq) AS seq FROM updates WHERE account = ? AND doc_id = ? AND epoch = ?',
      ),
      lastSeqUpTo: db.prepare<[string, string, number, number], { seq: number | null }>(
        'SELECT max(seq) AS seq FROM updates WHERE account = ? AND doc_id = ? AND epoch = ? AND seq <= ?',
      ),
      deleteUpdatesUpTo: db.prepare<[string, string, number, number]>(
        'DELETE FROM updates WHERE account = ? AND doc_id = ? AND epoch = ? AND seq <= ?',
      ),
      deleteDocUpdates: db.prepare<[string, string]>('DELETE FROM updates WHERE account = ? AND doc_id = ?'),
      deleteSession: db.prepare<[string, string]>('DELETE FROM sessions WHERE account = ? AND doc_id = ?'),
      ping: db.prepare('SELECT 1 AS ok'),
    };

    this.tx = {
      openSession: db.transaction((doc: DocKey, now: number, graceMs: number, persistent: boolean): SessionInfo => {
        const row = this.stmt.getSession.get(doc.account, doc.docId);
        if (!row) {
          this.stmt.insertSession.run(doc.account, doc.docId, now);
          return { epoch: 1, seeded: false };
        }
        if (!persistent && now - row.last_active > graceMs) {
          // The session ended: a new epoch starts empty. Old updates go in the same transaction, so a crash
          // cannot leave a new epoch next to stale content.
          const epoch = row.epoch + 1;
          this.stmt.deleteDocUpdates.run(doc.account, doc.docId);
          this.stmt.renewSession.run(epoch, now, doc.account, doc.docId);
          return { epoch, seeded: false };
        }
        this.stmt.touch.run(now, doc.account, doc.docId, row.epoch);
        return { epoch: row.epoch, seeded: row.seeded === 1 };
      }),
      acquireLease: db.transaction((doc: DocKey, epoch: number, holder: string, now: number, ttlMs: number): boolean => {
        const row = this.stmt.getSession.get(doc.account, doc.docId);
        if (!row || row.epoch !== epoch || row.seeded === 1) return false;
        const free = row.lease_holder === null || row.lease_holder === holder || (row.lease_expires ?? 0) <= now;
        if (!free) return false;
        this.stmt.setLease.run(holder, now + ttlMs, doc.account, doc.docId);
        return true;
      }),
      releaseLease: db.transaction((doc: DocKey, epoch: number, holder: string): void => {
        const row = this.stmt.getSession.get(doc.account, doc.docId);
        if (row && row.epoch === epoch && row.lease_holder === holder) {
          this.stmt.setLease.run(null, null, doc.account, doc.docId);
        }
      }),
      commitSeed: db.transaction((doc: DocKey, epoch: number, holder: string, update: Uint8Array, now: number): boolean => {
        const row = this.stmt.getSession.get(doc.account, doc.docId);
        // The holder check alone gives exclusivity: an expired lease is still this holder's until another
        // holder takes it (which rewrites lease_holder), so a slow but sole seeder is not refused.
        if (!row || row.epoch !== epoch || row.seeded === 1 || row.lease_holder !== holder) return false;
        this.stmt.insertUpdate.run(doc.account, doc.docId, epoch, update);
        this.stmt.markSeeded.run(now, doc.account, doc.docId);
        this.webhooks.recordChange(doc, epoch, false, now);
        return true;
      }),
      touchSessions: db.transaction((touches: readonly SessionTouch[], now: number): number[] => {
        const ended: number[] = [];
        touches.forEach((t, i) => {
          // Matched rows, changed or not: none when the document has no session of that epoch.
          if (this.stmt.touch.run(now, t.doc.account, t.doc.docId, t.epoch).changes === 0) ended.push(i);
        });
        return ended;
      }),
      append: db.transaction((entries: AppendEntry[], now: number): void => {
        // Current epoch per document, read once per transaction.
        const epochs = new Map<string, number | undefined>();
        const changed = new Map<string, AppendEntry>();
        for (const entry of entries) {
          const id = `${entry.doc.account}\u0000${entry.doc.docId}`;
          let current = epochs.get(id);
          if (!epochs.has(id)) {
            current = this.stmt.getSession.get(entry.doc.account, entry.doc.docId)?.epoch;
            epochs.set(id, current);
          }
          if (current !== entry.epoch) continue; // stale epoch: that session's content is gone
          this.stmt.insertUpdate.run(entry.doc.account, entry.doc.docId, entry.epoch, entry.update);
          changed.set(id, entry);
        }
        // One change (version + 1, doc.changed) per document stored in this transaction, in the same transaction.
        for (const entry of changed.values()) this.webhooks.recordChange(entry.doc, entry.epoch, false, now);
      }),
      compact: db.transaction((doc: DocKey, epoch: number, state: Uint8Array, upToSeq: number): void => {
        // Reuse the highest replaced seq for the state so that load order stays "state, then later updates".
        const top = this.stmt.lastSeqUpTo.get(doc.account, doc.docId, epoch, upToSeq)?.seq ?? null;
        if (top === null) return;
        this.stmt.deleteUpdatesUpTo.run(doc.account, doc.docId, epoch, top);
        this.stmt.insertUpdateAt.run(top, doc.account, doc.docId, epoch, state);
      }),
      deleteDocument: db.transaction((doc: DocKey, now: number): void => {
        const session = this.stmt.getSession.get(doc.account, doc.docId);
        this.stmt.deleteDocUpdates.run(doc.account, doc.docId);
        this.stmt.deleteSession.run(doc.account, doc.docId);
        if (session) this.webhooks.recordChange(doc, session.epoch, true, now);
      }),
    };
  }

  private migrate(): void {
    const version = this.db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) {
      throw new Error(`${this.path}: schema version ${version} is newer than this server's (${SCHEMA_VERSION})`);
    }
    this.db.transaction(() => {
      const current = this.db.pragma('user_version', { simple: true }) as number;
      // Version 1 files lack the sealed secret column; their keys keep working and get it sealed on first use.
      if (current === 1) this.db.exec('ALTER TABLE keys ADD COLUMN secret_sealed BLOB');
      this.db.exec(SCHEMA);
      this.db.exec(WEBHOOK_SCHEMA);
      this.db.pragma(`user_version = ${SCHEMA_VERSION}`);
    }).immediate();
  }

  private check(): void {
    if (this.closed) throw new Error('store is closed');
  }

  // --- keys ---

  async createKey(input: NewKey, options: CreateKeyOptions = {}): Promise<CreatedKey> {
    this.check();
    const valid = validateNewKey(input);
    const apiKey = newApiKey();
    const secret = newSecret();
    const createdAt = Date.now();
    this.stmt.insertKey.run({
      api_key: apiKey,
      name: valid.name,
      account: valid.account,
      origins: JSON.stringify(valid.origins),
      require_token: valid.requireToken ? 1 : 0,
      persistent: valid.persistent ? 1 : 0,
      max_users: valid.maxUsers,
      secret_hash: hashSecret(secret),
      secret_sealed: options.seal ? options.seal(apiKey, secret) : null,
      created_at: createdAt,
    });
    return {
      record: { apiKey, ...valid, createdAt, revokedAt: null },
      secret,
    };
  }

  async findKey(apiKey: string): Promise<KeyRecord | undefined> {
    this.check();
    const row = this.stmt.findKey.get(apiKey);
    return row && toKeyRecord(row);
  }

  async listKeys(): Promise<KeyRecord[]> {
    this.check();
    return this.stmt.listKeys.all().map(toKeyRecord);
  }

  async revokeKey(apiKey: string): Promise<boolean> {
    this.check();
    return this.stmt.revokeKey.run(Date.now(), apiKey).changes === 1;
  }

  async updateKey(apiKey: string, changes: KeyChanges): Promise<KeyRecord | undefined> {
    this.check();
    const origins = changes.origins === undefined ? null : JSON.stringify(validateOrigins(changes.origins));
    const requireToken = changes.requireToken === undefined ? null : changes.requireToken ? 1 : 0;
    if (this.stmt.updateKey.run({ api_key: apiKey, origins, require_token: requireToken }).changes !== 1) return undefined;
    return this.findKey(apiKey);
  }

  watchKeys(onChange: (apiKey: string | undefined) => void): StopWatching {
    this.check();
    let seen = this.stmt.keyVersion.get()?.version;
    const timer = setInterval(() => {
      if (this.closed) return;
      let version: number | undefined;
      try {
        version = this.stmt.keyVersion.get()?.version;
      } catch {
        // Busy beyond the timeout: read again at the next tick; the counter only grows, so nothing is missed.
        return;
      }
      if (version === seen) return;
      seen = version;
      onChange(undefined);
    }, KEY_POLL_MS);
    timer.unref();
    this.watchers.add(timer);
    return async () => {
      clearInterval(timer);
      this.watchers.delete(timer);
    };
  }

  async findSealedSecret(apiKey: string): Promise<Uint8Array | undefined> {
    this.check();
    return this.stmt.findSealed.get(apiKey)?.secret_sealed ?? undefined;
  }

  async setSealedSecret(apiKey: string, sealed: Uint8Array): Promise<void> {
    this.check();
    this.stmt.setSealed.run(sealed, apiKey);
  }

  async verifySecret(apiKey: string, secret: string): Promise<boolean> {
    this.check();
    const row = this.stmt.findKey.get(apiKey);
    return secretMatches(row?.secret_hash, secret) && row !== undefined && row.revoked_at === null;
  }

  // --- sessions ---

  async openSession(doc: DocKey, opts: { now: number; graceMs: number; persistent: boolean }): Promise<SessionInfo> {
    this.check();
    if (this.writer) return this.writer.call('openSession', doc, opts);
    return this.tx.openSession.immediate(doc, opts.now, opts.graceMs, opts.persistent);
  }

  async touchSession(doc: DocKey, epoch: number, now: number): Promise<void> {
    await this.touchSessions([{ doc, epoch }], now);
  }

  async touchSessions(touches: readonly SessionTouch[], now: number): Promise<number[]> {
    this.check();
    if (touches.length === 0) return [];
    if (this.writer) return this.writer.call('touchSessions', touches, now);
    return this.tx.touchSessions.immediate(touches, now);
  }

  async getSession(doc: DocKey): Promise<SessionInfo | undefined> {
    this.check();
    const row = this.stmt.getSession.get(doc.account, doc.docId);
    return row && { epoch: row.epoch, seeded: row.seeded === 1 };
  }

  async acquireSeedLease(doc: DocKey, epoch: number, holder: string, now: number, ttlMs: number): Promise<boolean> {
    this.check();
    if (this.writer) return this.writer.call('acquireSeedLease', doc, epoch, holder, now, ttlMs);
    return this.tx.acquireLease.immediate(doc, epoch, holder, now, ttlMs);
  }

  async releaseSeedLease(doc: DocKey, epoch: number, holder: string): Promise<void> {
    this.check();
    if (this.writer) return this.writer.call('releaseSeedLease', doc, epoch, holder);
    this.tx.releaseLease.immediate(doc, epoch, holder);
  }

  async commitSeed(doc: DocKey, epoch: number, holder: string, update: Uint8Array, now: number): Promise<boolean> {
    this.check();
    if (this.writer) return this.writer.call('commitSeed', doc, epoch, holder, update, now);
    return this.tx.commitSeed.immediate(doc, epoch, holder, update, now);
  }

  // --- updates ---

  /**
   * Runs `body` in one `BEGIN IMMEDIATE` transaction of this connection; the store methods it calls run theirs as
   * savepoints inside it (the writer thread's group commit, sqlite-writer.ts). Throws when the transaction could not
   * begin or commit, in which case nothing `body` wrote is stored.
   */
  inOneTransaction<T>(body: () => T): T {
    this.check();
    return this.db.transaction(body).immediate();
  }

  /**
   * Starts the writer thread now (the server, at start); it starts at the first document write otherwise. Resolves
   * once it can take writes; rejects when it could not start.
   */
  startWriter(): Promise<void> {
    return this.writer ? this.writer.warmUp() : Promise.resolve();
  }

  async loadDocument(doc: DocKey, epoch: number): Promise<StoredDocument> {
    this.check();
    const rows = this.stmt.loadUpdates.all(doc.account, doc.docId, epoch);
    return { updates: rows.map((r) => r.data), lastSeq: rows.length > 0 ? rows[rows.length - 1]!.seq : 0 };
  }

  async lastSeq(doc: DocKey, epoch: number): Promise<number> {
    this.check();
    return this.stmt.lastSeq.get(doc.account, doc.docId, epoch)?.seq ?? 0;
  }

  async appendUpdates(entries: AppendEntry[], now = Date.now()): Promise<void> {
    this.check();
    if (entries.length === 0) return;
    if (this.writer) return this.writer.call('appendUpdates', entries, now);
    this.tx.append.immediate(entries, now);
  }

  async compact(doc: DocKey, epoch: number, state: Uint8Array, upToSeq: number): Promise<void> {
    this.check();
    if (this.writer) return this.writer.call('compact', doc, epoch, state, upToSeq);
    this.tx.compact.immediate(doc, epoch, state, upToSeq);
  }

  async deleteDocument(doc: DocKey, now = Date.now()): Promise<void> {
    this.check();
    if (this.writer) return this.writer.call('deleteDocument', doc, now);
    this.tx.deleteDocument.immediate(doc, now);
  }

  // --- webhooks (sqlite-webhooks.ts) ---

  createWebhookEndpoint: SqliteWebhooks['createWebhookEndpoint'] = (input, options) => this.webhooks.createWebhookEndpoint(input, options);
  findWebhookEndpoint: SqliteWebhooks['findWebhookEndpoint'] = (id) => this.webhooks.findWebhookEndpoint(id);
  listWebhookEndpoints: SqliteWebhooks['listWebhookEndpoints'] = (apiKey) => this.webhooks.listWebhookEndpoints(apiKey);
  removeWebhookEndpoint: SqliteWebhooks['removeWebhookEndpoint'] = (id) => this.webhooks.removeWebhookEndpoint(id);
  findWebhookSecret: SqliteWebhooks['findWebhookSecret'] = (id) => this.webhooks.findWebhookSecret(id);
  /** On the writer thread for a file store: rooms write user.joined, user.left and session.ended at every join and leave. */
  enqueueEvent: SqliteWebhooks['enqueueEvent'] = (doc, type, payload, now) =>
    this.writer ? this.writer.call('enqueueEvent', doc, type, payload, now) : this.webhooks.enqueueEvent(doc, type, payload, now);
  claimEvents: SqliteWebhooks['claimEvents'] = (options) => this.webhooks.claimEvents(options);
  completeEvent: SqliteWebhooks['completeEvent'] = (id, holder, now) => this.webhooks.completeEvent(id, holder, now);
  failEvent: SqliteWebhooks['failEvent'] = (id, holder, now, error, next) => this.webhooks.failEvent(id, holder, now, error, next);
  findEvent: SqliteWebhooks['findEvent'] = (id) => this.webhooks.findEvent(id);
  listEvents: SqliteWebhooks['listEvents'] = (state, apiKey) => this.webhooks.listEvents(state, apiKey);
  replayEvents: SqliteWebhooks['replayEvents'] = (ids, now) => this.webhooks.replayEvents(ids, now);
  outboxStats: SqliteWebhooks['outboxStats'] = () => this.webhooks.outboxStats();
  pruneDelivered: SqliteWebhooks['pruneDelivered'] = (before, limit) => this.webhooks.pruneDelivered(before, limit);
  docChange: SqliteWebhooks['docChange'] = (doc) => this.webhooks.docChange(doc);
  listChanges: SqliteWebhooks['listChanges'] = (account, since, limit) => this.webhooks.listChanges(account, since, limit);

  async ping(): Promise<void> {
    this.check();
    this.stmt.ping.get();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.watchers) clearInterval(timer);
    this.watchers.clear();
    await this.writer?.close();
    this.db.close();
  }
}

function toKeyRecord(row: KeyRow): KeyRecord {
  return {
    apiKey: row.api_key,
    name: row.name,
    account: row.account,
    origins: parseOrigins(row.origins),
    requireToken: row.require_token === 1,
    persistent: row.persistent === 1,
    maxUsers: row.max_users,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

function parseOrigins(json: string): string[] {
  const value: unknown = JSON.parse(json);
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
