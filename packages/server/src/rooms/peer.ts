/** What a room needs from a connection. `ws/connection.ts` implements it; tests may use fakes. */
import type { HelloPayload, Message, ServerErrorCode } from 'wave-protocol';

export interface RoomPeer {
  /** Unique within this server process. */
  readonly id: string;
  /** `Hello.clientId`: the only awareness client id this peer may publish (P11). */
  readonly clientId: number;
  /** False once the socket is closing or closed. */
  readonly open: boolean;
  send(message: Message): void;
  /** Sends an already encoded frame (one encoding shared by every receiver of a broadcast). */
  sendFrame(frame: Uint8Array): void;
  /** Sends `Error{code, detail, fatal}` and closes with the code's close code (or `closeCode`). */
  fail(code: ServerErrorCode, detail: string, closeCode?: number): void;
  /** Closes without an error message (1001/1012: server going away, reconnect). */
  close(code: number, reason: string): void;
}

/** The join request of a peer, as validated by the connection. */
export type JoinRequest = Pick<HelloPayload, 'user' | 'clientId' | 'epoch'> & {
  /** From the token (default `edit`): a `read` peer's updates are refused (not applied, stored or relayed). */
  permission?: 'edit' | 'read';
};

/** A join the room refuses (session full …); the connection turns it into `Error` + close. */
export class JoinRefused extends Error {
  override readonly name = 'JoinRefused';
  constructor(
    readonly code: ServerErrorCode,
    detail: string,
  ) {
    super(detail);
  }
}
