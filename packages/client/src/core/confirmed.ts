/**
 * The server-confirmed state of a session's document: every remote update plus the local updates the server has
 * acked. The difference between it and the live document is exactly this client's unsynced edits, which a session
 * reset re-applies on top of a new session (PROTOCOL.md [P8], RELIABILITY.md D3). A second Y.Doc costs memory
 * and one more apply per update; it is the only way to tell our unacked edits apart once remote edits have
 * interleaved with them (garbage collection removes deleted text from the live doc).
 */
import * as Y from 'yjs';

export class ConfirmedState {
  /** The confirmed copy itself; only offline persistence touches it directly. */
  readonly doc = new Y.Doc();
  /** Local updates not yet acked, with the local edit count each one brought the total to. */
  private unacked: Array<{ edit: number; update: Uint8Array }> = [];

  remote(update: Uint8Array): void {
    Y.applyUpdate(this.doc, update);
  }

  local(edit: number, update: Uint8Array): void {
    this.unacked.push({ edit, update });
  }

  /** Local edits up to and including number `upTo` are durably stored: they become confirmed. */
  acked(upTo: number): void {
    while (this.unacked.length > 0 && (this.unacked[0] as { edit: number }).edit <= upTo) {
      Y.applyUpdate(this.doc, (this.unacked.shift() as { update: Uint8Array }).update);
    }
  }

  text(name: string): string {
    return this.doc.getText(name).toString();
  }

  destroy(): void {
    this.unacked = [];
    this.doc.destroy();
  }
}
