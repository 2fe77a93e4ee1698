/**
 * Counts local edits and what the server has acknowledged, per PROTOCOL.md [P9]/[P10].
 * Each update-bearing message records how many local edits existed when it was sent; an `Ack{n}` (cumulative,
 * per connection) marks every edit covered by the n-th message as durably stored.
 */
export class AckTracker {
  private localEdits = 0;
  private ackedEdits = 0;
  /** For each update-bearing message sent on the current connection, in order: `localEdits` when sent. */
  private covers: number[] = [];
  /** How many of this connection's messages were acked already (`covers` is trimmed from the front). */
  private ackedMessages = 0;

  /** A local edit happened (one Yjs update of local origin). */
  localEdit(): void {
    this.localEdits++;
  }

  /** An update-bearing message was sent; it carries every local edit made so far that the server lacks. */
  sent(): void {
    this.covers.push(this.localEdits);
  }

  /**
   * An update-bearing message that carries none of the local edits was sent (a read-only client's empty step2
   * reply): its ack confirms only what was confirmed already.
   */
  sentNothing(): void {
    this.covers.push(this.ackedEdits);
  }

  /** The server acked `count` update-bearing messages of this connection. Returns true when `pending` changed. */
  acked(count: number): boolean {
    const before = this.ackedEdits;
    while (this.ackedMessages < count && this.covers.length > 0) {
      const covered = this.covers.shift() as number;
      this.ackedMessages++;
      if (covered > this.ackedEdits) this.ackedEdits = covered;
    }
    return this.ackedEdits !== before;
  }

  /** The connection is gone: its unacked messages may be lost; the next connection starts counting at zero. */
  connectionLost(): void {
    this.covers = [];
    this.ackedMessages = 0;
  }

  /** True when some local edit is not covered by any message sent on the current connection. */
  hasUnsent(): boolean {
    const lastCovered = this.covers.length > 0 ? (this.covers[this.covers.length - 1] as number) : this.ackedEdits;
    return this.localEdits > lastCovered;
  }

  /** Local edits counted so far; the n-th edit is number n. */
  get edits(): number {
    return this.localEdits;
  }

  /** Number of the last local edit the server has durably stored. */
  get acknowledged(): number {
    return this.ackedEdits;
  }

  /** Local edits not yet durably stored on the server. */
  get pending(): number {
    return this.localEdits - this.ackedEdits;
  }
}
