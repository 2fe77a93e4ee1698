/**
 * The bytes a room relays to its peers for a change. Peers get a message's update as its writer sent it, not the
 * update the room's document emitted for it: that one also deletes what was inserted into the nodes the update
 * deletes, here, including what its writer had not seen, while a client reads from an update's delete set what its
 * writer saw (the rich-text adapter keeps text written into a block a peer deleted without having seen it,
 * `adapters/html/successor.ts`). Both have the same effect on a document: the update integrated whole here
 * (`dropPending`), and deleting a node deletes what a replica holds inside it.
 */
import type * as Y from 'yjs';

/**
 * A message's update is relayed as it was sent (`relayedUpdate`) while at most this many times, plus
 * `RELAY_AS_SENT_SLACK` bytes, the size of the update the document emitted for it; a larger one mostly repeats
 * content the server had (a reply to a step1 after a reconnection can carry a whole delete set), and peers get the
 * emitted one: a client cannot make the server send its peers more than it changed.
 */
const RELAY_AS_SENT_FACTOR = 2;
const RELAY_AS_SENT_SLACK = 1024;

/** The update being applied as one message (a client's, or another server's), with its origin. */
export interface Applying {
  origin: unknown;
  update: Uint8Array;
}

/**
 * What to relay for `emitted`, the update `doc` emitted for a transaction with `origin`, while `applying` (if any)
 * was being applied: its bytes as sent when they integrated whole and are not much larger, else `emitted`.
 */
export function relayedUpdate(doc: Y.Doc, emitted: Uint8Array, origin: unknown, applying: Applying | null): Uint8Array {
  // Not when part of it did not integrate: that part is dropped (`dropPending`), and never relayed. Nor when it is
  // much larger than what it changed (content the server already had): peers would get all of it again.
  const whole = doc.store.pendingStructs === null && doc.store.pendingDs === null;
  const sent = applying && applying.origin === origin && whole ? applying.update : null;
  return sent && sent.length <= RELAY_AS_SENT_FACTOR * emitted.length + RELAY_AS_SENT_SLACK ? sent : emitted;
}
