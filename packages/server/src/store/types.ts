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

/** A session a room holds: its document and epoch. */
export interface SessionTouch {
  doc: DocKey;
  epoch: number;
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

export interface Store extends WebhookStore {
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
  /** Records that the session of `epoch` is in use at `now` (a room, when its last connection leaves). */
  touchSession(doc: DocKey, epoch: number, now: number): Promise<void>;
  /**
   * `touchSession` of every entry, in one transaction (the server's sweep over its rooms with connections,
   * rooms/session-touches.ts). Returns the indices of the entries whose document has no session of that epoch
   * (deleted, or ended and renewed): their rooms no longer hold the session.
   */
  touchSessions(touches: readonly SessionTouch[], now: number): Promise<number[]>;
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
   * (ack after commit, P9). Entries for an epoch that is no longer current are dropped, not stored. In the same
   * transaction each document with stored entries gets one change: version + 1, a new feed cursor, doc.changed.
   * `now` (default: the clock) is the change time that debounce counts from.
   */
  appendUpdates(entries: AppendEntry[], now?: number): Promise<void>;
  /**
   * Sequence number of the newest stored update of `epoch`, or 0 when there is none. Added for compaction: a room
   * reads it after its own appends are committed, then passes it to `compact` with a state that contains every
   * update up to it (its `Y.Doc` has applied everything it appended).
   */
  lastSeq(doc: DocKey, epoch: number): Promise<number>;
  /** Replaces every update of `epoch` with sequence ≤ `upToSeq` by `state` (one transaction). */
  compact(doc: DocKey, epoch: number, state: Uint8Array, upToSeq: number): Promise<void>;
  /** Deletes the document and its session (and records doc.deleted for a document that had one). */
  deleteDocument(doc: DocKey, now?: number): Promise<void>;

  /** A trivial query, for `GET /healthz`: rejects when the store cannot answer. Added for health checks. */
  ping(): Promise<void>;

  close(): Promise<void>;
}

// --- webhooks (outbox.md in packages/server/README.md) ---

/** Event types a webhook endpoint can subscribe to. */
export const WEBHOOK_EVENT_TYPES = ['doc.changed', 'doc.deleted', 'session.ended', 'user.joined', 'user.left'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export interface WebhookEndpoint {
  /** `we_…`, names the endpoint in the CLI. */
  id: string;
  /** Events go to endpoints of every key of the document's account. */
  apiKey: string;
  /** `http:` or `https:` URL the events are POSTed to. */
  url: string;
  events: WebhookEventType[];
  /** Milliseconds since the Unix epoch. */
  createdAt: number;
}

export interface NewWebhookEndpoint {
  apiKey: string;
  url: string;
  /** Default: every type. */
  events?: WebhookEventType[];
}

export interface CreatedWebhookEndpoint {
  record: WebhookEndpoint;
  /** The Standard Webhooks signing secret (`whsec_` + base64 of 32 bytes); shown once, stored sealed. */
  secret: string;
}

export interface CreateWebhookOptions {
  /** Seals the signing secret under the server master key (associated data: the endpoint id). Required. */
  seal: (endpointId: string, secret: string) => Uint8Array;
}

export type OutboxState = 'pending' | 'delivered' | 'failed';

/** One delivery of one event to one endpoint. Its `id` is the `webhook-id` of every attempt. */
export interface OutboxEvent {
  /** `msg_…`, stable across retries and replays. */
  id: string;
  endpointId: string;
  type: WebhookEventType;
  doc: DocKey;
  /** Data fixed when the event was written (user of user.* events, content of session.ended), or null. */
  payload: Record<string, unknown> | null;
  /** Milliseconds since the Unix epoch, like every time below. */
  createdAt: number;
  /** doc.changed: first and latest change this event covers (debounce and max-wait count from them). */
  firstChangeAt: number;
  lastChangeAt: number;
  /** Attempts made so far (replays included). */
  attempts: number;
  /** Attempts made since the event was written or last replayed: the retry schedule's position. */
  roundAttempts: number;
  nextAttemptAt: number;
  state: OutboxState;
  lastError: string | null;
}

export interface ClaimOptions {
  /** The claiming server; only it may complete or fail the claimed events until the lease expires. */
  holder: string;
  now: number;
  /** The lease: a server that dies with claimed events leaves them to others after this long. */
  leaseMs: number;
  limit: number;
  /** doc.changed is due `debounceMs` after its latest change, and at most `maxWaitMs` after its first. */
  debounceMs: number;
  maxWaitMs: number;
}

/** A document's place in the change feed. */
export interface DocChange {
  docId: string;
  epoch: number;
  /** Increases with every stored change of the document (appends, deletion), across sessions. */
  version: number;
  deleted: boolean;
  /** Position in the feed; a later change of the same document moves it to a larger cursor. */
  cursor: number;
  changedAt: number;
}

export interface OutboxStats {
  pending: number;
  /** Pending events that failed at least once. */
  retrying: number;
  failed: number;
  delivered: number;
  /** createdAt of the oldest pending event, or null. */
  oldestPendingAt: number | null;
}

/**
 * The webhook outbox and change feed, part of every store. Changes are recorded by `appendUpdates`,
 * `commitSeed` and `deleteDocument` in their own transactions: a stored change always has its feed entry and its
 * events, a rolled-back one has neither.
 */
export interface WebhookStore {
  createWebhookEndpoint(input: NewWebhookEndpoint, options: CreateWebhookOptions): Promise<CreatedWebhookEndpoint>;
  findWebhookEndpoint(id: string): Promise<WebhookEndpoint | undefined>;
  listWebhookEndpoints(apiKey?: string): Promise<WebhookEndpoint[]>;
  /** Deletes the endpoint and its undelivered events; false when unknown. */
  removeWebhookEndpoint(id: string): Promise<boolean>;
  findWebhookSecret(id: string): Promise<Uint8Array | undefined>;
  /** Writes one event of `type` for every endpoint of the account subscribed to it. Returns how many. */
  enqueueEvent(doc: DocKey, type: WebhookEventType, payload: Record<string, unknown> | null, now: number): Promise<number>;
  /** Leases up to `limit` due pending events (none leased by a live holder) to `holder`. */
  claimEvents(options: ClaimOptions): Promise<OutboxEvent[]>;
  /** Marks a claimed event delivered; false when `holder` lost its lease. */
  completeEvent(id: string, holder: string, now: number): Promise<boolean>;
  /** Records a failed attempt: retried at `nextAttemptAt`, or kept as failed when it is null. */
  failEvent(id: string, holder: string, now: number, error: string, nextAttemptAt: number | null): Promise<boolean>;
  findEvent(id: string): Promise<OutboxEvent | undefined>;
  listEvents(state: OutboxState, apiKey?: string): Promise<OutboxEvent[]>;
  /** Failed events (`ids`, or all of them) become pending again, due at `now`, with a fresh retry schedule. */
  replayEvents(ids: string[] | 'all', now: number): Promise<number>;
  outboxStats(): Promise<OutboxStats>;
  /** Deletes up to `limit` delivered events delivered before `before` (the outbox keeps no history). Returns how many. */
  pruneDelivered(before: number, limit: number): Promise<number>;
  /** The document's feed entry; `undefined` when it never changed. */
  docChange(doc: DocKey): Promise<DocChange | undefined>;
  /** Documents of `account` whose latest change has a cursor > `since`, in cursor order. */
  listChanges(account: string, since: number, limit: number): Promise<DocChange[]>;
}
