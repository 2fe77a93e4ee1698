/** Public surface of `wave-server` (a hand-picked list; everything else is internal). */
export { startServer, DEFAULT_LIMITS } from './server.js';
export type { ServerOptions, ServerLimits, RunningServer } from './server.js';
export { openStore, StoreUrlError } from './store/index.js';
export { SqliteStore } from './store/sqlite.js';
export { PostgresStore, parsePostgresUrl } from './store/postgres.js';
export type { PostgresStoreOptions } from './store/postgres.js';
export { LocalFanout } from './fanout/local.js';
export { RedisFanout } from './fanout/redis.js';
export type { RedisFanoutOptions } from './fanout/redis.js';
export type { Fanout, DocFeed, FanoutEvent } from './fanout/types.js';
export { CommitQueue } from './store/commit-queue.js';
export type { CommitQueueOptions } from './store/commit-queue.js';
export type {
  Store,
  DocKey,
  KeyRecord,
  NewKey,
  CreatedKey,
  SessionInfo,
  StoredDocument,
  AppendEntry,
} from './store/types.js';
export { isOriginAllowed, normalizeOriginSpec, SELF_ORIGIN } from './origin.js';
export { docIdProblem, WS_PATH } from './auth.js';
export type { Logger } from './log.js';
