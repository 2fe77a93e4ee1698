/**
 * Named error codes shared by server and client (API.md, "Error codes"), and the WebSocket close codes
 * that carry them when the server ends a connection.
 *
 * Close codes 4000–4999 are reserved for applications by RFC 6455 §7.4.2; we mirror HTTP statuses in the
 * 44xx range so that a close code reads like the HTTP answer it stands for (4401 ≈ 401 Unauthorized).
 */

/** Every error code a `CoeditError` or a server `Error` message can carry. */
export const ERROR_CODES = [
  'invalid_config',
  'validation_error',
  'access_denied',
  'session_full',
  'document_too_large',
  'rate_limited',
  'connection_lost',
  'session_reset',
  'protocol_mismatch',
  'server_error',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value);
}

/** WebSocket close codes used by Wave. The 1xxx ones are RFC 6455's own. */
export const CloseCode = {
  /**
   * RFC 6455: normal closure. The only 1xxx code a browser may send: its `WebSocket.close` throws InvalidAccessError
   * for any code but 1000 and 3000–4999 (WHATWG WebSockets Standard, `close()`), so the client closes with it.
   */
  Normal: 1000,
  /** RFC 6455: endpoint going away (server shutdown, page unload). Clients reconnect. Sent by the server only. */
  GoingAway: 1001,
  /** RFC 6455: frame larger than the server accepts (`ws` maxPayload). */
  MessageTooBig: 1009,
  /** RFC 6455 registry: service restart. Clients reconnect. */
  ServiceRestart: 1012,
  /** A frame that does not decode as a Wave message, or a message out of order. */
  BadMessage: 4400,
  /** Unknown or revoked apiKey, bad or expired token. */
  Unauthorized: 4401,
  /** Origin outside the key's allow-list, or no permission for the document. */
  Forbidden: 4403,
  /** The hello was not received within the deadline. */
  HelloTimeout: 4408,
  /** The document already has `--max-users` connections. */
  SessionFull: 4409,
  /** An update would make the document larger than the server's limit. */
  DocumentTooLarge: 4413,
  /** The client speaks a protocol version the server does not. */
  ProtocolMismatch: 4426,
  /** Too many messages or bytes in a time window. */
  RateLimited: 4429,
  /** The client's address already has `--max-connections-per-address` open connections (S19). Reconnect later. */
  TooManyConnections: 4430,
  /** The server failed in a way the client cannot fix; retrying later may work. */
  ServerError: 4500,
} as const;

export type CloseCodeValue = (typeof CloseCode)[keyof typeof CloseCode];

/**
 * For each server-side error code: the close code it ends the connection with and whether the client should
 * stop (`fatal`) or reconnect with backoff.
 */
export const SERVER_ERRORS: Readonly<Record<Exclude<ErrorCode, 'invalid_config' | 'connection_lost' | 'session_reset'>, { close: CloseCodeValue; fatal: boolean }>> = {
  validation_error: { close: CloseCode.Unauthorized, fatal: true },
  access_denied: { close: CloseCode.Forbidden, fatal: true },
  session_full: { close: CloseCode.SessionFull, fatal: true },
  // Fatal: reconnecting would re-send the same oversized edit and loop (RELIABILITY.md R9).
  document_too_large: { close: CloseCode.DocumentTooLarge, fatal: true },
  rate_limited: { close: CloseCode.RateLimited, fatal: false },
  protocol_mismatch: { close: CloseCode.ProtocolMismatch, fatal: true },
  server_error: { close: CloseCode.ServerError, fatal: false },
};

export type ServerErrorCode = keyof typeof SERVER_ERRORS;

/**
 * Maps a close code received by a client to the error code it stands for, or `undefined` for closes
 * that are not errors (1000, 1001, 1012) or unknown.
 */
export function errorCodeForClose(close: number): ErrorCode | undefined {
  switch (close) {
    case CloseCode.BadMessage:
    case CloseCode.Unauthorized:
      return 'validation_error';
    // The Hello arrived late (a loaded client, a slow link): a connection problem, retried with backoff.
    case CloseCode.HelloTimeout:
      return 'connection_lost';
    case CloseCode.Forbidden:
      return 'access_denied';
    case CloseCode.SessionFull:
      return 'session_full';
    case CloseCode.DocumentTooLarge:
    case CloseCode.MessageTooBig:
      return 'document_too_large';
    case CloseCode.ProtocolMismatch:
      return 'protocol_mismatch';
    case CloseCode.RateLimited:
    case CloseCode.TooManyConnections:
      return 'rate_limited';
    case CloseCode.ServerError:
      return 'server_error';
    default:
      return undefined;
  }
}

/**
 * Every server limit and the named error code and close code it ends a connection with. The server's
 * README "Security" table gives their defaults and flags; this is the one place a client or a test reads them from.
 */
export const LIMIT_ERRORS = {
  /** WebSocket frame over the size limit (`--max-frame-bytes`): ws closes 1009 itself, no Error message. */
  frameSize: { code: 'document_too_large', close: CloseCode.MessageTooBig },
  /** Messages or bytes before the connection joined. */
  preAuthFlood: { code: 'rate_limited', close: CloseCode.RateLimited },
  /** No Hello (or no authorisation) within the deadline. */
  helloDeadline: { code: 'validation_error', close: CloseCode.HelloTimeout },
  /** Updates, messages or bytes per second of a joined connection. */
  rate: { code: 'rate_limited', close: CloseCode.RateLimited },
  /** Open connections per client address (`--max-connections-per-address`), refused at the upgrade. */
  connectionsPerAddress: { code: 'rate_limited', close: CloseCode.TooManyConnections },
  /** Connections per document (`--max-users`). */
  usersPerDocument: { code: 'session_full', close: CloseCode.SessionFull },
  /** Document size (`--max-document-bytes`), checked before the update is applied. */
  documentSize: { code: 'document_too_large', close: CloseCode.DocumentTooLarge },
  /** docId length and characters. */
  docId: { code: 'validation_error', close: CloseCode.BadMessage },
  /**
   * Structs per update, values or shared types nested past the depth limits, bytes after an update's end, and
   * updates that do not integrate.
   */
  hostileUpdate: { code: 'validation_error', close: CloseCode.BadMessage },
  /** A read-only connection's change: refused, the connection stays open. */
  readOnly: { code: 'access_denied', close: null },
} as const satisfies Record<string, { code: ServerErrorCode; close: CloseCodeValue | null }>;
