/**
 * When a room may ack (PROTOCOL.md P9, RELIABILITY.md D6): an edit is acked only once it is committed to the store
 * **and** the fan-out accepted it, so that every other server holding the document receives it even if this server
 * dies right after the ack or has lost its link to the other servers. Acks are cumulative counts, so an ack may only
 * go out once every earlier change of the room is shared too; this keeps that order by construction: each step's
 * promise resolves only after every step added before it.
 */
export class SharedOrder {
  private tail: Promise<void> = Promise.resolve();

  /**
   * Adds a change's commit-and-publish. Resolves once it and every change added before it are committed and
   * accepted by the fan-out; never rejects (both only resolve).
   */
  add(shared: Promise<void>): Promise<void> {
    // The tail only resolves, so this resolves once the tail and `shared` did: one promise per change (every update).
    this.tail = this.tail.then(() => shared);
    return this.tail;
  }

  /** Resolves once every change added so far is committed and shared (for acks of messages that changed nothing). */
  get settled(): Promise<void> {
    return this.tail;
  }
}
