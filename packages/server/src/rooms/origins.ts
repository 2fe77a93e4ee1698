/**
 * Transaction origins a room's `Y.Doc` sees, and the helpers every part of a room shares. A change with `LOADED` or
 * `SEEDED` is already stored: not relayed, not stored again. `REMOTE` is committed (by another server, or read back
 * from the store): relayed to the room's peers, not stored again. Any other origin (a peer, a REST replacement) is
 * relayed, stored and published.
 */
import type * as Y from 'yjs';
import type { DocKey } from '../store/types.js';

export const LOADED = Symbol('loaded from store');
export const SEEDED = Symbol('seed committed');
export const REMOTE = Symbol('remote server');

/** Discards the structs and deletes of `doc` waiting for missing dependencies; true when there were some. */
export function dropPending(doc: Y.Doc): boolean {
  const store = doc.store;
  if (store.pendingStructs === null && store.pendingDs === null) return false;
  store.pendingStructs = null;
  store.pendingDs = null;
  return true;
}

/** `"account"/"docId"`, for log lines. */
export function describeDoc(key: DocKey): string {
  return `${JSON.stringify(key.account)}/${JSON.stringify(key.docId)}`;
}
