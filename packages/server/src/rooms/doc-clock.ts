/**
 * The clock a document has reached for one client: its state vector's entry, without building the state vector.
 */
import type * as Y from 'yjs';

/**
 * The clock `doc` has reached for `client` (0 for a client it has never seen), read from the client's struct list:
 * O(1), where `Y.encodeStateVector` or a copy of the store costs one entry per client the document ever had (every
 * session of every user adds one).
 */
export function docClock(doc: Y.Doc, client: number): number {
  const list = doc.store.clients.get(client) as Array<Y.Item | Y.GC> | undefined;
  const last = list?.[list.length - 1];
  return last ? last.id.clock + last.length : 0;
}
