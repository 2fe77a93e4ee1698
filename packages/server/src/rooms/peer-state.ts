/**
 * What a room knows about one joined peer: its stamped identity and permission, whether it has the document, and
 * the count of its update-bearing messages received and acked (PROTOCOL.md P9: acks are cumulative counts).
 */
import { MessageType } from 'wave-protocol';
import type { StampedPresence } from 'wave-protocol';
import type { RoomPeer } from './peer.js';

export class PeerState {
  /**
   * A read-only peer had a message refused (and was told so, once). Acks are cumulative (P9): any later ack would
   * cover the refused message too, so from then on this peer gets no ack on this connection (RELIABILITY.md S17).
   */
  toldReadOnly = false;
  /** Received step1 + step2 of the document; receives relayed updates and presence from now on. */
  synced = false;
  /** Update-bearing messages received (P9). */
  received = 0;
  /** Highest count committed (and acked, or about to be). */
  acked = 0;
  /** An `Ack` send is scheduled. */
  private ackQueued = false;

  constructor(
    readonly peer: RoomPeer,
    readonly identity: StampedPresence,
    readonly permission: 'edit' | 'read',
  ) {}

  /**
   * Records that the peer's first `count` update-bearing messages are committed. One `Ack` goes out per commit:
   * the waiters of a batch resolve together, so the send is deferred to a microtask that runs after all of them;
   * `send(count)` then sends it unless the peer or the room is gone.
   */
  ack(count: number, send: (count: number) => void): void {
    if (this.toldReadOnly || count <= this.acked) return;
    this.acked = count;
    if (this.ackQueued) return;
    this.ackQueued = true;
    queueMicrotask(() => {
      this.ackQueued = false;
      send(this.acked);
    });
  }

  /** S3: a read-only peer's change is not applied, stored, relayed or acked; it is told so once. */
  refuseReadOnly(): void {
    if (this.toldReadOnly) return;
    this.toldReadOnly = true;
    this.peer.send({
      type: MessageType.Error,
      error: { code: 'access_denied', detail: 'this connection is read-only: its edits are not saved or shared', fatal: false },
    });
  }
}
