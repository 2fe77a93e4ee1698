/**
 * Wave wire messages. Every WebSocket frame is one binary message: a varuint message type (lib0 encoding)
 * followed by its payload. Types 0 and 1 carry y-protocols' sync and awareness payloads unchanged; the rest are
 * Wave's own. PROTOCOL.md describes the bytes; this file is the only definition of them.
 */
import * as encoding from 'lib0/encoding';
import * as decoding from 'lib0/decoding';
import type { ServerErrorCode } from './errors.js';
import { SERVER_ERRORS } from './errors.js';
import type { UserIdentity, UserInput } from './presence.js';
import { parseJsonSafely } from './json.js';

/** Bumped on any change a peer of the previous version would misread. Sent in `Hello`. */
export const PROTOCOL_VERSION = 1;

export const MessageType = {
  /** Both ways. y-protocols sync: step1 (state vector), step2 (missing updates), update. */
  Sync: 0,
  /** Both ways. y-protocols awareness update. The server rewrites identity fields (see presence.ts). */
  Awareness: 1,
  /** Client → server, first message: who and what. */
  Hello: 2,
  /** Server → client: the join succeeded; epoch and identity as the server stamped it. */
  Welcome: 3,
  /** Server → client: a named error; when `fatal` or when a close follows, the client stops or backs off. */
  Error: 4,
  /** Server → client: cumulative count of this connection's update-bearing messages durably committed. */
  Ack: 5,
  /** Server → client: this connection holds the seed lease and must send `Seed`. */
  SeedRequest: 6,
  /** Client → server: the seeder's editor content as one Yjs update. Update-bearing. */
  Seed: 7,
  /** Client → server heartbeat (browsers cannot send WebSocket pings). */
  Ping: 8,
  /** Server → client heartbeat reply. */
  Pong: 9,
  /**
   * Client → server: a fresh token for this connection (PROTOCOL.md P2b), sent before the current one's `exp`.
   * The server verifies it like `Hello.token` and moves the connection's expiry to the new `exp`.
   */
  Token: 10,
} as const;

export type MessageTypeValue = (typeof MessageType)[keyof typeof MessageType];

/** y-protocols sync sub-types (y-protocols/sync.js messageYjsSyncStep1 etc.). */
export const SyncStep = { Step1: 0, Step2: 1, Update: 2 } as const;

/** Largest JSON payload accepted in a Hello/Welcome/Error message, in UTF-16 code units. Tokens are < 4 KiB. */
export const MAX_JSON_PAYLOAD = 16 * 1024;

/** Longest `Hello.format` accepted: a format name is short, and the server quotes it in an error detail. */
export const MAX_FORMAT_LENGTH = 64;

/** Longest token accepted in `Hello.token` and `Token`, in UTF-16 code units. */
export const MAX_TOKEN_LENGTH = 8192;

export interface HelloPayload {
  /** PROTOCOL_VERSION of the client. */
  protocol: number;
  /**
   * `DOC_FORMAT` of the client: the layout of the shared types it writes. Optional on the wire only so that an
   * earlier client's Hello (which has none) still decodes and gets a clear `protocol_mismatch` (PROTOCOL.md [P2d]).
   */
  format?: string;
  apiKey: string;
  docId: string;
  /** Signed JWT from the integrator's backend, when the key requires or allows one. */
  token?: string;
  /** Display metadata the client asks for; the server decides what is shown (presence.ts). */
  user: UserInput;
  /** The client's Yjs `doc.clientID`; the only awareness client id this connection may publish. */
  clientId: number;
  /** Session epoch the client's unsynced state belongs to; absent on a first join. */
  epoch?: number;
}

export interface WelcomePayload {
  /** Session epoch of the document on the server. A new epoch means a new session (re-seeded content). */
  epoch: number;
  permission: 'edit' | 'read';
  /** The identity as the server stamped it; peers see exactly this. */
  user: UserIdentity;
  /** CSS colour assigned to this user (validated `user.color`, else a palette colour). */
  color: string;
  /** Milliseconds since the Unix epoch at which the server accepted this connection. */
  joinTime: number;
  /** True when the key keeps documents persistently (the server copy always wins). */
  persistent: boolean;
}

export interface ErrorPayload {
  code: ServerErrorCode;
  /** For people; never parsed. */
  detail: string;
  fatal: boolean;
}

export type SyncMessage =
  | { type: typeof MessageType.Sync; step: typeof SyncStep.Step1; stateVector: Uint8Array }
  | { type: typeof MessageType.Sync; step: typeof SyncStep.Step2 | typeof SyncStep.Update; update: Uint8Array };

export type Message =
  | SyncMessage
  | { type: typeof MessageType.Awareness; update: Uint8Array }
  | { type: typeof MessageType.Hello; hello: HelloPayload }
  | { type: typeof MessageType.Welcome; welcome: WelcomePayload }
  | { type: typeof MessageType.Error; error: ErrorPayload }
  | { type: typeof MessageType.Ack; count: number }
  | { type: typeof MessageType.SeedRequest; epoch: number }
  | { type: typeof MessageType.Seed; epoch: number; update: Uint8Array }
  | { type: typeof MessageType.Ping }
  | { type: typeof MessageType.Pong }
  | { type: typeof MessageType.Token; token: string };

/** Thrown by `decodeMessage` for a frame that is not a well-formed Wave message. */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
}

export function encodeMessage(message: Message): Uint8Array {
  const enc = encoding.createEncoder();
  encoding.writeVarUint(enc, message.type);
  switch (message.type) {
    case MessageType.Sync:
      encoding.writeVarUint(enc, message.step);
      encoding.writeVarUint8Array(enc, message.step === SyncStep.Step1 ? message.stateVector : message.update);
      break;
    case MessageType.Awareness:
      encoding.writeVarUint8Array(enc, message.update);
      break;
    case MessageType.Hello:
      encoding.writeVarString(enc, JSON.stringify(message.hello));
      break;
    case MessageType.Welcome:
      encoding.writeVarString(enc, JSON.stringify(message.welcome));
      break;
    case MessageType.Error:
      encoding.writeVarString(enc, JSON.stringify(message.error));
      break;
    case MessageType.Ack:
      encoding.writeVarUint(enc, message.count);
      break;
    case MessageType.SeedRequest:
      encoding.writeVarUint(enc, message.epoch);
      break;
    case MessageType.Seed:
      encoding.writeVarUint(enc, message.epoch);
      encoding.writeVarUint8Array(enc, message.update);
      break;
    case MessageType.Ping:
    case MessageType.Pong:
      break;
    case MessageType.Token:
      encoding.writeVarString(enc, message.token);
      break;
  }
  return encoding.toUint8Array(enc);
}

/**
 * Decodes one frame. Shapes are checked here (types, lengths, JSON structure); meaning (is this apiKey known,
 * does this update integrate) is the receiver's job. Throws `ProtocolError` for anything malformed, including
 * trailing bytes.
 */
export function decodeMessage(frame: Uint8Array): Message {
  try {
    const dec = decoding.createDecoder(frame);
    const type = decoding.readVarUint(dec);
    const message = decodeBody(type, dec);
    if (decoding.hasContent(dec)) throw new ProtocolError(`trailing bytes after message type ${type}`);
    return message;
  } catch (err) {
    if (err instanceof ProtocolError) throw err;
    throw new ProtocolError(`malformed frame: ${(err as Error).message}`);
  }
}

function decodeBody(type: number, dec: decoding.Decoder): Message {
  switch (type) {
    case MessageType.Sync: {
      const step = decoding.readVarUint(dec);
      const bytes = decoding.readVarUint8Array(dec);
      if (step === SyncStep.Step1) return { type, step, stateVector: bytes };
      if (step === SyncStep.Step2 || step === SyncStep.Update) return { type, step, update: bytes };
      throw new ProtocolError(`unknown sync step ${step}`);
    }
    case MessageType.Awareness:
      return { type, update: decoding.readVarUint8Array(dec) };
    case MessageType.Hello:
      return { type, hello: parseHello(readJson(dec)) };
    case MessageType.Welcome:
      return { type, welcome: parseWelcome(readJson(dec)) };
    case MessageType.Error:
      return { type, error: parseError(readJson(dec)) };
    case MessageType.Ack:
      return { type, count: decoding.readVarUint(dec) };
    case MessageType.SeedRequest:
      return { type, epoch: decoding.readVarUint(dec) };
    case MessageType.Seed:
      return { type, epoch: decoding.readVarUint(dec), update: decoding.readVarUint8Array(dec) };
    case MessageType.Ping:
    case MessageType.Pong:
      return { type };
    case MessageType.Token: {
      const token = decoding.readVarString(dec);
      if (token === '' || token.length > MAX_TOKEN_LENGTH) throw new ProtocolError(`token: expected a string of 1–${MAX_TOKEN_LENGTH} characters`);
      return { type, token };
    }
    default:
      throw new ProtocolError(`unknown message type ${type}`);
  }
}

/** True for client → server messages that change the document and are therefore counted by `Ack`. */
export function isUpdateBearing(message: Message): boolean {
  return (
    message.type === MessageType.Seed ||
    (message.type === MessageType.Sync && (message.step === SyncStep.Step2 || message.step === SyncStep.Update))
  );
}

function readJson(dec: decoding.Decoder): Record<string, unknown> {
  const text = decoding.readVarString(dec);
  if (text.length > MAX_JSON_PAYLOAD) throw new ProtocolError(`JSON payload over ${MAX_JSON_PAYLOAD} characters`);
  const value = parseJsonSafely(text);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ProtocolError('JSON payload is not an object');
  }
  return value as Record<string, unknown>;
}

function str(obj: Record<string, unknown>, key: string, max: number): string {
  const v = obj[key];
  if (typeof v !== 'string' || v.length > max) throw new ProtocolError(`${key}: expected a string of at most ${max} characters`);
  return v;
}

function optStr(obj: Record<string, unknown>, key: string, max: number): string | undefined {
  return obj[key] === undefined ? undefined : str(obj, key, max);
}

function uint(obj: Record<string, unknown>, key: string): number {
  const v = obj[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new ProtocolError(`${key}: expected an unsigned integer`);
  return v;
}

function obj(o: Record<string, unknown>, key: string): Record<string, unknown> {
  const v = o[key];
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new ProtocolError(`${key}: expected an object`);
  return v as Record<string, unknown>;
}

function parseHello(o: Record<string, unknown>): HelloPayload {
  const hello: HelloPayload = {
    protocol: uint(o, 'protocol'),
    apiKey: str(o, 'apiKey', 256),
    docId: str(o, 'docId', 1024),
    user: obj(o, 'user') as UserInput,
    clientId: uint(o, 'clientId'),
  };
  const format = optStr(o, 'format', MAX_FORMAT_LENGTH);
  if (format !== undefined) hello.format = format;
  const token = optStr(o, 'token', MAX_TOKEN_LENGTH);
  if (token !== undefined) hello.token = token;
  if (o['epoch'] !== undefined) hello.epoch = uint(o, 'epoch');
  return hello;
}

function parseWelcome(o: Record<string, unknown>): WelcomePayload {
  const permission = o['permission'];
  if (permission !== 'edit' && permission !== 'read') throw new ProtocolError('permission: expected edit or read');
  return {
    epoch: uint(o, 'epoch'),
    permission,
    user: obj(o, 'user') as UserIdentity,
    color: str(o, 'color', 64),
    joinTime: uint(o, 'joinTime'),
    persistent: o['persistent'] === true,
  };
}

function parseError(o: Record<string, unknown>): ErrorPayload {
  const code = o['code'];
  if (typeof code !== 'string' || !Object.hasOwn(SERVER_ERRORS, code)) throw new ProtocolError('code: unknown error code');
  return { code: code as ServerErrorCode, detail: str(o, 'detail', 2048), fatal: o['fatal'] === true };
}
