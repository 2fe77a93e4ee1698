/**
 * The storage interface every backend implements (SQLite, Postgres) and that rooms call.
 * Everything that must survive a crash or be shared between servers lives behind it: keys, documents' updates,
 * session epochs and the seed lease. Nothing here may rely on process memory for correctness.
 * One contract test suite runs against every implementation (test/store-contract.ts).
 */

/** A document's identity: documents are namespaced by the account that owns the apiKey. */
export interface DocKey {
  account: string;
  docId: string;
}

export interface KeyRecord {
  /** Public key, appears in pages. */
  apiKey: string;
  /** Display name given at creation. */
  name: string;
  /** Account the key belongs to; documents are stored per account. Defaults to the name. */
  account: string;
  /** Allowed `Origin` values (exact `scheme://host[:port]`), or the literal `self` (same origin as the server). Empty = any. */
  origins: string[];
  requireToken: boolean;
  persistent: boolean;
  /** Connections allowed per document; `null` = the server's default. */
  maxUsers: number | null;
  /** Milliseconds since the Unix epoch. */
  createdAt: number;
  revokedAt: number | null;
}

export interface NewKey {
  name: string;
  account?: string;
  origins?: string[];
  requireToken?: boolean;
  persistent?: boolean;
  maxUsers?: number | null;
}

/** Settings of an existing key that `keys update` changes; absent fields stay as they are. */
export interface KeyChanges {
  /** Replaces the allow-list (`[]` = any origin). Entries as in `NewKey.origins`. */
  origins?: string[];
  requireToken?: boolean;
}

/** Stops a `watchKeys` subscription. */
export type StopWatching = () => Promise<void>;

export interface CreatedKey {
  record: KeyRecord;
  /**
   * Shown once. The store keeps its hash (REST checks) and, when the creator passed `seal`, the sealed secret
   * (token checks need the secret itself; see secret-box.ts). Used to sign tokens (HS256) and to call the REST API.
   */
  secret: string;
}

export interface CreateKeyOptions {
  /** Seals the new secret for storage (server master key); without it only the hash is stored. */
  seal?: (apiKey: string, secret: string) => Uint8Array;
}

/** A document's current session. */
export interface SessionInfo {
  epoch: number;
  /** True once the epoch's initial content is committed (P5). */
  seeded: boolean;
}

export interface StoredDocument {
  /** Updates in commit order (Yjs v1 encoding); applying all of them rebuilds the document. */
  updates: Uint8Array[];
  /** Sequence number of the last update, or 0 when there is none. Passed to `compact`. */
  lastSeq: number;
}

export interface AppendEntry {
  doc: DocKey;
  epoch: number;
  update: Uint8Array;
}

export interface Store {
  // --- keys ---
  createKey(input: NewKey, options?: CreateKeyOptions): Promise<CreatedKey>;
  /** The key record, revoked ones included; `undefined` when unknown. */
  findKey(apiKey: string): Promise<KeyRecord | undefined>;
  listKeys(): Promise<KeyRecord[]>;
  /** Returns false when the key is unknown or already revoked. */
  revokeKey(apiKey: string): Promise<boolean>;
  /**
   * Changes an active key's origin allow-list and token rule (`keys update`). Returns the updated record, or
   * `undefined` when the key is unknown or revoked. Throws `TypeError` for a malformed origin.
   */
  updateKey(apiKey: string, changes: KeyChanges): Promise<KeyRecord | undefined>;
  /**
   * Reports key changes made by any process sharing this store (the `keys` CLI, another server): revocation,
   * origins, token rule. `onChange(apiKey)` names the changed key; `onChange(undefined)` means "any key may have
   * changed" (the store cannot tell which, or notifications may have been missed). Delivered within about 250 ms
   * of the change's commit. Added so that open connections of a key revoked or tightened are closed (S15).
   */
  watchKeys(onChange: (apiKey: string | undefined) => void): StopWatching;
  /** Checks a secret against the stored hash (constant time). */
  verifySecret(apiKey: string, secret: string): Promise<boolean>;
  /** The sealed secret of a key, or `undefined` (unknown key, or a key created before secrets were sealed). */
  findSealedSecret(apiKey: string): Promise<Uint8Array | undefined>;
  /** Stores the sealed secret of a key (migration of keys created before secrets were sealed). */
  setSealedSecret(apiKey: string, sealed: Uint8Array): Promise<void>;

  // --- sessions (P4–P8) ---
  /**
   * Returns the document's live session, first ending it if it expired: a session has expired when
   * `persistent` is false and `now - lastActive > graceMs`. Ending it means, in one transaction: epoch + 1,
   * unseeded, no lease, every stored update of the old epoch deleted. A document never seen gets epoch 1.
   * Also marks the session active at `now`.
   */
  openSession(doc: DocKey, opts: { now: number; graceMs: number; persistent: boolean }): Promise<SessionInfo>;
  /** Records that the session of `epoch` is in use at `now` (rooms call it while they have connections). */
  touchSession(doc: DocKey, epoch: number, now: number): Promise<void>;
  /** Current session without side effects; `undefined` for a document never seen. */
  getSession(doc: DocKey): Promise<SessionInfo | undefined>;
  /**
   * Takes the seed lease of an unseeded `epoch` for `holder` when nobody holds an unexpired one (or `holder`
   * already does, which renews it until `now + ttlMs`). False when seeded, the epoch is not current, or another
   * holder has it.
   */
  acquireSeedLease(doc: DocKey, epoch: number, holder: string, now: number, ttlMs: number): Promise<boolean>;
  /** Gives the lease up if `holder` has it. */
  releaseSeedLease(doc: DocKey, epoch: number, holder: string): Promise<void>;
  /**
   * In one transaction: when `holder` holds the lease of the current, unseeded `epoch`, store `update` as the
   * epoch's first update, mark it seeded and clear the lease. Returns false (and stores nothing) otherwise.
   */
  commitSeed(doc: DocKey, epoch: number, holder: string, update: Uint8Array, now: number): Promise<boolean>;

  // --- updates ---
  /** Every update of `epoch`, in commit order. */
  loadDocument(doc: DocKey, epoch: number): Promise<StoredDocument>;
  /**
   * Appends updates of any number of documents in **one** transaction; resolves only after it is committed
   * (ack after commit, P9). Entries for an epoch that is no longer current are dropped, not stored.
   */
  appendUpdates(entries: AppendEntry[]): Promise<void>;
  /**
   * Sequence number of the newest stored update of `epoch`, or 0 when there is none. Added for compaction: a room
   * reads it after its own appends are committed, then passes it to `compact` with a state that contains every
   * update up to it (its `Y.Doc` has applied everything it appended).
   */
  lastSeq(doc: DocKey, epoch: number): Promise<number>;
  /** Replaces every update of `epoch` with sequence ≤ `upToSeq` by `state` (one transaction). */
  compact(doc: DocKey, epoch: number, state: Uint8Array, upToSeq: number): Promise<void>;
  /** Deletes the document and its session. */
  deleteDocument(doc: DocKey): Promise<void>;

  /** A trivial query, for `GET /healthz`: rejects when the store cannot answer. Added for health checks. */
  ping(): Promise<void>;

  close(): Promise<void>;
}
