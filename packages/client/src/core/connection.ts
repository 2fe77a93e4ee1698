/**
 * One WebSocket connection of a session at a time, its reconnects and its heartbeat (PROTOCOL.md P12). The session
 * decides what a lost connection means; this keeps the socket, sends the Hello once it opens, decodes frames, gives
 * up on a socket that stops answering, and reconnects after a capped, jittered backoff (backoff.ts). Every socket it
 * forgets is forgotten for good: its later events are ignored, so at most one socket ever reaches the session.
 */
import * as Y from 'yjs';
import { CloseCode, MessageType, SyncStep, decodeMessage, decodeWholeUpdate, encodeMessage, type HelloPayload, type Message } from 'wave-protocol';
import { Backoff } from './backoff.js';
import { CoeditError } from './errors.js';
import { SOCKET_CONNECTING, SOCKET_OPEN, frameBytes, type SocketFactory, type SocketLike } from './socket.js';

/**
 * Send a Ping after this long without sending anything, or without hearing anything (P12): a client alone on a
 * document keeps sending presence renewals that the server does not echo, and must still prove the socket alive.
 */
const PING_AFTER_MS = 15_000;
/** Declare the socket dead after this long without hearing anything: two missed pings plus slack (P12, R4 ≤ 45 s). */
const DEAD_AFTER_MS = 35_000;
/** A connection attempt not open after this long is abandoned and retried (a server that accepts TCP but hangs). */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Throws unless a Sync message's payload decodes whole: a state vector, or an update (`decodeWholeUpdate`). Yjs
 * applies the structs of an update cut short in its delete set and then throws, and throws on a state vector cut
 * short while encoding the reply: checked here, a bad frame never reaches the document (R10).
 */
function checkSyncPayload(message: Message): void {
  if (message.type !== MessageType.Sync) return;
  if (message.step === SyncStep.Step1) Y.decodeStateVector(message.stateVector);
  else decodeWholeUpdate(message.update);
}

export interface ConnectionEvents {
  /** The socket opened: the Hello to send on it. */
  hello(): HelloPayload;
  /** A decoded server message of the current socket, in arrival order. */
  message(message: Message): void;
  /** A frame this client cannot use (`reject`): reported once; `gone` follows with `rejected` true. */
  report(error: CoeditError): void;
  /**
   * The current socket is gone: closed (`code`, `reason` from the close frame), failed to open, given up on by the
   * heartbeat (1006), or closed by this client for a frame it rejected (1006, `rejected`: already reported).
   * `opened`: it had opened. Never called for a socket dropped with `drop`.
   */
  gone(code: number, reason: string, opened: boolean, rejected: boolean): void;
  /**
   * Asked before each attempt (not after a token refresh it asked for): a promise when the token function must give
   * a fresh token first (the page was offline or asleep past the token's exp), else undefined.
   */
  refreshToken(): Promise<void> | undefined;
}

export interface ConnectionOptions {
  /** The WebSocket URL, query included. */
  url: string;
  socketFactory: SocketFactory;
  /** The session's lifecycle (session-state.ts): nothing connects once it is stopped. */
  lifecycle: { readonly stopped: boolean };
}

export class Connection {
  private socket: SocketLike | null = null;
  private lastSent = 0;
  private lastReceived = 0;
  private startedAt = 0;
  private readonly backoff: Backoff;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  /**
   * A reconnect waits for the token function: no second attempt starts meanwhile. A fact of the attempt, not of the
   * session's phase (`connecting` and `offline` alike).
   */
  private awaitingToken = false;

  constructor(
    private readonly opts: ConnectionOptions,
    private readonly events: ConnectionEvents,
  ) {
    this.backoff = new Backoff();
  }

  /** A socket is opening or open. */
  get active(): boolean {
    return this.socket !== null;
  }

  /** `tokenAsked`: this attempt already asked the token function (a failed call does not hold the reconnect). */
  connect(tokenAsked = false): void {
    if (this.opts.lifecycle.stopped || this.awaitingToken) return;
    const refreshing = tokenAsked ? undefined : this.events.refreshToken();
    if (refreshing) {
      this.awaitingToken = true;
      void refreshing.then(() => {
        this.awaitingToken = false;
        this.connect(true);
      });
      return;
    }
    this.open();
  }

  /** The network is back (a hint from the host): reconnect now instead of at the end of the backoff delay. */
  retryNow(): void {
    if (this.opts.lifecycle.stopped || this.socket) return;
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.connect();
  }

  /**
   * After a lost connection: reconnects after the next backoff delay. `phase`: this client's place in each backoff
   * window (backoff.ts `spreadPhase`), used when this loss starts an outage.
   */
  retryLater(phase?: number): void {
    const delay = this.backoff.next(Date.now(), phase);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.connect();
    }, delay);
  }

  /** The session is online: the next outage's backoff starts from its base again. */
  online(): void {
    this.backoff.reset();
  }

  /** No more reconnects; the socket is dropped (closed with `code`, `reason`). */
  stop(code: number, reason: string): void {
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.drop(code, reason);
  }

  /** Opens a socket; one that cannot even be created is gone at once (1006). */
  private open(): void {
    let socket: SocketLike;
    try {
      socket = this.opts.socketFactory(this.opts.url);
    } catch (err) {
      this.events.gone(1006, `could not open a WebSocket: ${(err as Error).message}`, false, false);
      return;
    }
    socket.binaryType = 'arraybuffer';
    this.socket = socket;
    this.startedAt = Date.now();
    let opened = false;
    socket.onopen = () => {
      opened = true;
      this.lastReceived = Date.now();
      this.send({ type: MessageType.Hello, hello: this.events.hello() });
    };
    socket.onmessage = (ev) => {
      if (socket !== this.socket) return;
      this.lastReceived = Date.now();
      const bytes = frameBytes(ev.data);
      if (!bytes) return;
      let message: Message;
      try {
        message = decodeMessage(bytes);
        checkSyncPayload(message);
      } catch (err) {
        this.reject(`the server sent a frame this client cannot read: ${(err as Error).message}`);
        return;
      }
      this.events.message(message);
    };
    socket.onclose = (ev) => {
      if (socket !== this.socket) return;
      this.socket = null;
      this.events.gone(ev.code, ev.reason, opened, false);
    };
    socket.onerror = () => {
      /* onclose follows and carries the code */
    };
  }

  /** Sends `message` if the socket is open; true when it was sent. */
  send(message: Message): boolean {
    const socket = this.socket;
    if (!socket || socket.readyState !== SOCKET_OPEN) return false;
    socket.send(encodeMessage(message));
    this.lastSent = Date.now();
    return true;
  }

  /**
   * The current socket carried a frame this client cannot use (RELIABILITY.md R10: truncated, of an unknown type, of
   * a length past its bytes, a state vector or an update that does not decode whole, presence that does not
   * decode): one non-fatal `server_error` report, the socket closed (`BadMessage`, for the server's log) and
   * forgotten, then `gone` (1006, `rejected`), so the session reconnects after its backoff as after any lost socket.
   * The close is not waited for: a 4400 echoed by the server would read as the server refusing this client.
   */
  reject(detail: string): void {
    const socket = this.socket;
    if (!socket) return;
    this.socket = null;
    this.events.report(new CoeditError('server_error', detail, false));
    if (socket.readyState <= SOCKET_OPEN) socket.close(CloseCode.BadMessage, 'bad frame');
    this.events.gone(1006, 'bad frame', true, true);
  }

  /** Forgets the socket (no `gone` for it) and closes it unless it is closing already. */
  drop(code?: number, reason?: string): void {
    const socket = this.socket;
    this.socket = null;
    if (socket && socket.readyState <= SOCKET_OPEN) socket.close(code, reason);
  }

  /**
   * The heartbeat, run every few seconds: gives up on an attempt that does not open and on an open socket that
   * hears nothing (both are `gone`, 1006), and pings when the line has been quiet.
   */
  check(now: number): void {
    const socket = this.socket;
    if (socket && socket.readyState === SOCKET_CONNECTING && now - this.startedAt > CONNECT_TIMEOUT_MS) {
      // TCP accepted but the upgrade never answered (a frozen server or proxy): give up on this attempt.
      this.socket = null;
      this.events.gone(1006, 'connection attempt timed out', false, false);
      socket.close();
      return;
    }
    if (!socket || socket.readyState !== SOCKET_OPEN) return;
    if (now - this.lastReceived > DEAD_AFTER_MS) {
      // The socket looks open but nothing arrives (server frozen, network gone silently): drop it.
      this.socket = null;
      socket.close(CloseCode.Normal, 'heartbeat timeout');
      this.events.gone(1006, 'heartbeat timeout', true, false);
      return;
    }
    if (now - this.lastSent > PING_AFTER_MS || now - this.lastReceived > PING_AFTER_MS) this.send({ type: MessageType.Ping });
  }
}
