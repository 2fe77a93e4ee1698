/**
 * `new Y.Doc()` draws its `guid` as a v4 UUID, one `crypto.getRandomValues` call per hex digit (31, lib0's
 * `random.uuidv4`): about 70 µs here, against 4 µs for the rest of the constructor. A join creates up to three docs
 * on the event loop (the room's, its presence's, the seed check's), so a reconnect storm of 1,000 documents spent
 * a fifth of a second on guids alone. The server's docs are top-level and local: a guid is written to the wire only
 * with a subdocument (yjs `ContentDoc`), which keeps its own. A process-unique guid is therefore enough.
 */
import * as Y from 'yjs';

let created = 0;

/** A `Y.Doc` with a process-unique `guid` and Yjs's defaults otherwise (`gc: true`). */
export function newDoc(): Y.Doc {
  return new Y.Doc({ guid: `wave-server-${++created}` });
}
