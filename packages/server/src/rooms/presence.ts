/**
 * A room's awareness (PROTOCOL.md P11): every state is stamped with the identity the server gave its connection,
 * a connection publishes only its own client id, and a closed connection's state is removed for everyone.
 * Changes made here (a local peer's update or departure) are also handed to `publish` for the other servers; their
 * changes come back through `applyRemote`, already stamped.
 */
import * as awarenessProtocol from 'y-protocols/awareness';
import { MessageType, ProtocolError, encodeMessage, stampAwarenessUpdate } from 'wave-protocol';
import type { StampedPresence } from 'wave-protocol';
import type { RoomPeer } from './peer.js';
import { newDoc } from '../new-doc.js';

/** Origin of awareness changes received from other servers: relayed to local peers, not published back. */
const REMOTE = Symbol('remote presence');

export class Presence {
  private readonly awareness: awarenessProtocol.Awareness;
  /** The stamped update `apply` is applying, while it applies it (`onUpdate` runs inside). */
  private applying: Uint8Array | null = null;

  /**
   * `broadcast(frame, origin)` sends an encoded Awareness message to every synced peer except `origin`;
   * `publish(update)` hands a local change to the other servers.
   */
  constructor(
    private readonly broadcast: (frame: Uint8Array, origin: unknown) => void,
    private readonly publish: (update: Uint8Array) => void = () => {},
  ) {
    // Awareness takes a doc only for a client id of its own (unused: the server publishes no state) and to end with
    // it. An empty doc of its own, not the room's: the room's doc is dropped while idle (doc-holder.ts), presence is
    // not. Not one doc shared by every room: each Awareness leaves a 'destroy' listener on its doc.
    this.awareness = new awarenessProtocol.Awareness(newDoc());
    // The server publishes no presence of its own.
    this.awareness.setLocalState(null);
    this.awareness.on('update', this.onUpdate);
  }

  /** Applies an awareness update from `peer`, keeping only its own, stamped entry. Throws `ProtocolError`. */
  apply(peer: RoomPeer, identity: StampedPresence, update: Uint8Array): void {
    let stamped: Uint8Array | null;
    try {
      stamped = stampAwarenessUpdate(update, peer.clientId, identity);
    } catch {
      throw new ProtocolError('awareness update does not decode');
    }
    if (stamped === null) return; // only foreign or oversized entries
    this.applying = stamped;
    try {
      awarenessProtocol.applyAwarenessUpdate(this.awareness, stamped, peer);
    } finally {
      this.applying = null;
    }
  }

  /** Applies an awareness update another server published (stamped there). Undecodable input is ignored. */
  applyRemote(update: Uint8Array): void {
    try {
      awarenessProtocol.applyAwarenessUpdate(this.awareness, update, REMOTE);
    } catch {
      // A server of a newer version, or a damaged message: presence is best effort.
    }
  }

  /** Removes a client's state (its last connection closed); peers see it vanish. */
  remove(clientId: number): void {
    if (this.awareness.states.has(clientId)) {
      awarenessProtocol.removeAwarenessStates(this.awareness, [clientId], 'leave');
    }
    // The clock is no longer needed once the removal went out; keeps long-lived rooms from growing.
    this.awareness.meta.delete(clientId);
  }

  /** The current states of everyone but `exceptClientId`, as one Awareness message, or null when there are none. */
  snapshot(exceptClientId: number): Uint8Array | null {
    const clients = [...this.awareness.getStates().keys()].filter((id) => id !== exceptClientId);
    if (clients.length === 0) return null;
    return encodeMessage({ type: MessageType.Awareness, update: awarenessProtocol.encodeAwarenessUpdate(this.awareness, clients) });
  }

  destroy(): void {
    this.awareness.off('update', this.onUpdate);
    this.awareness.destroy();
    this.awareness.doc.destroy();
  }

  private readonly onUpdate = (change: { added: number[]; updated: number[]; removed: number[] }, origin: unknown): void => {
    const clients = [...change.added, ...change.updated, ...change.removed];
    if (clients.length === 0) return;
    // A peer's update of one entry that was applied is, byte for byte, what encodeAwarenessUpdate would write for
    // it: the same client id and clock, and a state parsed from JSON.stringify's output and stringified again. It
    // goes out as it came in, without another pass over the JSON. (Its first byte is the entry count, 1.)
    const applying = this.applying;
    const update =
      applying !== null && applying[0] === 1 && clients.length === 1 ? applying : awarenessProtocol.encodeAwarenessUpdate(this.awareness, clients);
    this.broadcast(encodeMessage({ type: MessageType.Awareness, update }), origin);
    // Each server times out silent states by itself ('timeout'); only changes made here travel.
    if (origin !== REMOTE && origin !== 'timeout') this.publish(update);
  };
}
