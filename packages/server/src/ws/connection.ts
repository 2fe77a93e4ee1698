/**
 * One accepted WebSocket after the upgrade was authorised (P1). A small state machine:
 * `hello` (waiting for the first message, P2) → `joining` (room loading) → `joined` → `closed`.
 * Messages of a joined connection are handled strictly in arrival order, one at a time.
 */
import type { WebSocket } from 'ws';
import {
  CloseCode,
  DOC_FORMAT,
  MessageType,
  PROTOCOL_VERSION,
  ProtocolError,
  SERVER_ERRORS,
  decodeMessage,
  encodeMessage,
  isUpdateBearing,
} from 'wave-protocol';
import type { HelloPayload, Message, ServerErrorCode } from 'wave-protocol';
import type { RoomRegistry } from '../rooms/registry.js';
import type { Room } from '../rooms/room.js';
import { JoinRefused } from '../rooms/peer.js';
import type { RoomPeer } from '../rooms/peer.js';
import type { DocKey, KeyRecord } from '../store/types.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { verifyToken } from '../tokens.js';
import type { JoinRequest } from '../rooms/peer.js';
import { accessWithdrawn } from './key-guard.js';
import type { GuardedConnection } from './key-guard.js';
import { TokenLease } from './token-lease.js';

export interface ConnectionLimits {
  /** P2: the first message must arrive within this long (10 s). */
  helloTimeoutMs: number;
  /**
   * Messages buffered while the connection waits for an asynchronous step (room load, seed commit). Beyond this
   * the client is flooding; it is closed with 4429 instead of growing the server's memory.
   */
  maxQueuedMessages: number;
  /** Messages a connection may send before it is authorised and joined (S8); more closes it with 4429. */
  preAuthMaxMessages: number;
  /** Bytes a connection may send before it is authorised and joined (S8); more closes it with 4429. */
  preAuthMaxBytes: number;
  /**
   * Sustained messages per second of a joined connection, with a burst of twice that (token bucket). Typing
   * sends ~2 messages a keystroke (update + caret), i.e. < 50/s; more than the limit closes with 4429 (S12).
   */
  messagesPerSecond: number;
  /**
   * Update-bearing messages per second of a joined connection, burst one second's worth. Every update costs a relay
   * to each peer and a store write, so this bucket is the one that protects honest peers' acks (S12). A fast typist
   * sends ~10–20 updates/s; scripted edits and automated typing up to ~200/s (RELIABILITY D1 bursts at 200 ops/s).
   */
  updatesPerSecond: number;
  /** Sustained bytes per second of a joined connection, with a burst of four seconds' worth. */
  bytesPerSecond: number;
  /** P12: WebSocket ping period of this connection, counted from its opening; two missed pings terminate it. */
  heartbeatMs: number;
}

export interface ConnectionContext {
  /** apiKey and docId of the upgrade URL; the Hello must repeat them. */
  apiKey: string;
  docId: string;
  /** The key as read when the upgrade was authorised; replaced when the store reports a change (`keyChanged`). */
  key: KeyRecord;
  doc: DocKey;
  /** `Origin` and `Host` headers of the upgrade request, re-checked when the key's origins change (S15). */
  origin?: string | undefined;
  host?: string | undefined;
  registry: RoomRegistry;
  /** The key's secret (unsealed) to verify tokens with, or `undefined` when the server does not have it. */
  secretFor: (apiKey: string) => Promise<string | undefined>;
  limits: ConnectionLimits;
  log: Logger;
  metrics: Metrics;
  onClose: (connection: Connection) => void;
  /** Counts a failed authorisation against the client's address (throttling, S1). */
  onAuthFailure?: () => void;
}

/** Message types only the server sends (S13): a client sending one is closed with 4400. */
const SERVER_ONLY = new Set<number>([MessageType.Welcome, MessageType.Error, MessageType.Ack, MessageType.SeedRequest, MessageType.Pong]);

/**
 * After sending a close frame, how long to wait for the peer's close before dropping the TCP connection. A
 * hostile or dead client must not hold the socket for ws's default 30 s.
 */
const CLOSE_GRACE_MS = 2_000;

let nextId = 1;

export class Connection implements RoomPeer, GuardedConnection {
  readonly id = `c${nextId++}`;
  clientId = -1;
  /** WebSocket pings sent since the last sign of life (P12). */
  private missedPings = 0;
  private state: 'hello' | 'joining' | 'joined' | 'closed' = 'hello';
  private room: Room | undefined;
  private readonly queue: Message[] = [];
  private draining = false;
  private helloTimer: NodeJS.Timeout | undefined;
  /**
   * Pings on a timer of this connection's own: connections opened at different moments are pinged at different
   * moments, so no single task pings every socket of the server.
   */
  private readonly heartbeatTimer: NodeJS.Timeout;
  /** Frames and bytes received before the connection joined (S8). */
  private preAuthMessages = 0;
  private preAuthBytes = 0;
  /** Token buckets of a joined connection (S12), refilled by elapsed time. */
  private messageTokens: number;
  private byteTokens: number;
  private updateTokens: number;
  private refilledAt = performance.now();
  /** Whether the Hello carried a token; `undefined` until the Hello arrives. */
  private presentedToken: boolean | undefined;
  /** Ends the connection when its token expires (S16); set once the Hello's token is verified. */
  private lease: TokenLease | undefined;

  constructor(
    private readonly ws: WebSocket,
    private readonly ctx: ConnectionContext,
  ) {
    this.messageTokens = 2 * ctx.limits.messagesPerSecond;
    this.byteTokens = 4 * ctx.limits.bytesPerSecond;
    this.updateTokens = ctx.limits.updatesPerSecond;
    ws.on('message', (data, isBinary) => this.onFrame(data, isBinary));
    ws.on('pong', () => {
      this.missedPings = 0;
    });
    ws.on('close', () => this.onClose());
    // 'error' covers frames over maxPayload (ws closes with 1009 itself) and broken sockets; 'close' follows.
    ws.on('error', () => {});
    this.helloTimer = setTimeout(() => {
      // Not fatal: a client whose Hello is merely late (a loaded machine, a slow link) reconnects with backoff.
      this.fail('validation_error', `no Hello within ${ctx.limits.helloTimeoutMs / 1000} s`, 4408, false);
    }, ctx.limits.helloTimeoutMs);
    this.helloTimer.unref();
    this.heartbeatTimer = setInterval(() => this.heartbeat(), ctx.limits.heartbeatMs);
    this.heartbeatTimer.unref();
  }

  get apiKey(): string {
    return this.ctx.apiKey;
  }

  /** The key changed in the store (S15): closes the connection when it may no longer use it. */
  keyChanged(key: KeyRecord | undefined): void {
    if (this.state === 'closed') return;
    if (key) this.ctx.key = key;
    const access = { origin: this.ctx.origin, host: this.ctx.host, token: this.presentedToken };
    const withdrawn = accessWithdrawn(key, access);
    if (withdrawn !== undefined) this.fail('validation_error', withdrawn);
  }

  get open(): boolean {
    return this.state !== 'closed' && this.ws.readyState === this.ws.OPEN;
  }

  send(message: Message): void {
    this.sendFrame(encodeMessage(message));
  }

  sendFrame(frame: Uint8Array): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(frame);
  }

  fail(code: ServerErrorCode, detail: string, closeCode: number = SERVER_ERRORS[code].close, fatal = SERVER_ERRORS[code].fatal): void {
    if (this.state === 'closed') return;
    this.ctx.metrics.rejected(code);
    this.send({ type: MessageType.Error, error: { code, detail: detail.slice(0, 2048), fatal } });
    this.close(closeCode, code);
  }

  close(code: number, reason: string): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.clearHelloTimer();
    this.lease?.stop();
    this.queue.length = 0;
    if (this.ws.readyState === this.ws.OPEN || this.ws.readyState === this.ws.CONNECTING) {
      this.ws.close(code, reason.slice(0, 120));
      setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS).unref();
    }
    this.leaveRoom();
  }

  /** Heartbeat tick (P12): terminates a socket that answered none of the last two pings. */
  private heartbeat(): void {
    if (this.missedPings >= 2) {
      this.ws.terminate();
      return;
    }
    this.missedPings++;
    if (this.ws.readyState === this.ws.OPEN) this.ws.ping();
  }

  /** Forcibly drops the TCP connection (shutdown after the close grace). */
  terminate(): void {
    this.ws.terminate();
  }

  private onFrame(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): void {
    this.missedPings = 0;
    if (this.state === 'closed') return;
    if (!isBinary) return this.fail('validation_error', 'text frame: every Wave message is a binary frame', 4400);
    const bytes = toBytes(data);
    if (this.state === 'hello' || this.state === 'joining') {
      this.preAuthMessages++;
      this.preAuthBytes += bytes.byteLength;
      const { preAuthMaxMessages, preAuthMaxBytes } = this.ctx.limits;
      if (this.preAuthMessages > preAuthMaxMessages || this.preAuthBytes > preAuthMaxBytes) {
        return this.fail('rate_limited', `more than ${preAuthMaxMessages} messages or ${preAuthMaxBytes} bytes before joining`);
      }
    }
    let message: Message;
    try {
      message = decodeMessage(bytes);
    } catch (error) {
      return this.fail('validation_error', (error as Error).message, 4400);
    }
    if (this.state === 'joined' && !this.takeTokens(bytes.byteLength, isUpdateBearing(message))) {
      return this.fail('rate_limited', `more than ${this.ctx.limits.updatesPerSecond} updates, ${this.ctx.limits.messagesPerSecond} messages or ${this.ctx.limits.bytesPerSecond} bytes per second`);
    }
    if (SERVER_ONLY.has(message.type)) {
      return this.fail('validation_error', `message type ${message.type} is sent by servers only`, 4400);
    }
    if (this.state === 'hello') {
      if (message.type !== MessageType.Hello) {
        return this.fail('validation_error', 'the first message must be Hello (P2)', 4400);
      }
      void this.onHello(message.hello);
      return;
    }
    if (message.type === MessageType.Hello) return this.fail('validation_error', 'Hello sent twice', 4400);
    if (message.type === MessageType.Ping) {
      this.send({ type: MessageType.Pong });
      return;
    }
    if (message.type === MessageType.Token) {
      void this.onToken(message.token);
      return;
    }
    if (this.queue.length >= this.ctx.limits.maxQueuedMessages) {
      return this.fail('rate_limited', 'too many messages while the server was busy with this connection');
    }
    this.queue.push(message);
    void this.drain();
  }

  /** Token buckets (S12): false when this frame exceeds the connection's rate. */
  private takeTokens(bytes: number, update: boolean): boolean {
    const { messagesPerSecond, bytesPerSecond, updatesPerSecond } = this.ctx.limits;
    const now = performance.now();
    const elapsed = (now - this.refilledAt) / 1000;
    this.refilledAt = now;
    this.messageTokens = Math.min(2 * messagesPerSecond, this.messageTokens + elapsed * messagesPerSecond);
    this.byteTokens = Math.min(4 * bytesPerSecond, this.byteTokens + elapsed * bytesPerSecond);
    this.updateTokens = Math.min(updatesPerSecond, this.updateTokens + elapsed * updatesPerSecond);
    this.messageTokens -= 1;
    this.byteTokens -= bytes;
    if (update) this.updateTokens -= 1;
    return this.messageTokens >= 0 && this.byteTokens >= 0 && this.updateTokens >= 0;
  }

  private async onHello(hello: HelloPayload): Promise<void> {
    // The Hello deadline runs on until the token is verified: authorisation as a whole has 10 s (S8).
    if (hello.protocol !== PROTOCOL_VERSION) {
      return this.fail(
        'protocol_mismatch',
        `client speaks protocol ${hello.protocol}, this server speaks ${PROTOCOL_VERSION}`,
      );
    }
    // P2d: a client of another document format would write shared types this server's clients never read.
    if (hello.format !== DOC_FORMAT) return this.fail('protocol_mismatch', formatMismatch(hello.format));
    if (hello.apiKey !== this.ctx.apiKey || hello.docId !== this.ctx.docId) {
      return this.fail('validation_error', 'Hello apiKey/docId differ from the connection URL', 4400);
    }
    this.state = 'joining';
    this.presentedToken = hello.token !== undefined;
    const request: JoinRequest = { user: hello.user, clientId: hello.clientId, permission: 'edit' };
    if (hello.epoch !== undefined) request.epoch = hello.epoch;
    if (hello.token !== undefined || this.ctx.key.requireToken) {
      if (hello.token === undefined) return this.fail('validation_error', 'this apiKey requires a token (config token)');
      let secret: string | undefined;
      try {
        secret = await this.ctx.secretFor(this.ctx.apiKey);
      } catch (error) {
        this.ctx.log.error('reading a key secret', error);
        return this.fail('server_error', 'the server cannot check tokens now; retry later');
      }
      if (secret === undefined) {
        return this.fail('validation_error', 'the server has no secret for this apiKey yet (keys created before tokens: see the README, "Security")');
      }
      const check = await verifyToken(hello.token, secret, this.ctx.docId);
      if ((this.state as string) === 'closed') return;
      if (!check.ok) {
        this.ctx.onAuthFailure?.();
        return this.fail(check.code, check.detail);
      }
      request.permission = check.grant.permission;
      this.lease = new TokenLease(check.grant, secret, this.ctx.docId, (detail) => this.fail('validation_error', detail));
      // The token's identity wins over what the client claims (S4).
      if (check.grant.user !== undefined) request.user = check.grant.user;
    }
    this.clearHelloTimer();
    this.clientId = hello.clientId;
    let room: Room;
    try {
      room = await this.ctx.registry.join(this.ctx.doc, this.ctx.key, this, request);
    } catch (error) {
      if (error instanceof JoinRefused) return this.fail(error.code, error.message);
      this.ctx.log.error(`join of ${JSON.stringify(this.ctx.docId)}`, error);
      return this.fail('server_error', 'the document could not be opened; retry later');
    }
    this.room = room;
    // The socket may have closed while the room loaded (TS cannot see the state change across the await).
    if ((this.state as string) === 'closed') {
      this.leaveRoom();
      return;
    }
    this.state = 'joined';
    // The rate buckets start with what is left of the pre-join budget: a flood that straddles the join is still
    // closed at about `preAuthMaxMessages` / `preAuthMaxBytes` (S8).
    const { preAuthMaxMessages, preAuthMaxBytes } = this.ctx.limits;
    this.messageTokens = Math.min(this.messageTokens, Math.max(0, preAuthMaxMessages - this.preAuthMessages));
    this.byteTokens = Math.min(this.byteTokens, Math.max(0, preAuthMaxBytes - this.preAuthBytes));
    this.refilledAt = performance.now();
    void this.drain();
  }

  /** A fresh token sent in-band (P2b): extends the connection's lease, or ends the connection when it is not valid. */
  private async onToken(token: string): Promise<void> {
    const lease = this.lease;
    if (this.state !== 'joined' || !lease) {
      return this.fail('validation_error', 'Token is accepted only on a joined connection that was opened with a token', 4400);
    }
    let result;
    try {
      result = await lease.renew(token);
    } catch (error) {
      this.ctx.log.error('checking a refreshed token', error);
      return this.fail('server_error', 'the server cannot check tokens now; retry later');
    }
    if ((this.state as string) === 'closed' || result.ok) return;
    if (result.permissionChanged) {
      // The new permission is granted by rejoining: the client reconnects with its newest token (Welcome.permission).
      this.close(CloseCode.ServiceRestart, 'token permission changed; reconnect');
      return;
    }
    this.ctx.onAuthFailure?.();
    this.fail(result.code, result.detail);
  }

  private async drain(): Promise<void> {
    if (this.draining || this.state !== 'joined') return;
    this.draining = true;
    try {
      // Bounded by the queue, which only grows up to maxQueuedMessages.
      while (this.queue.length > 0 && this.state === 'joined' && this.room) {
        const message = this.queue.shift()!;
        const started = performance.now();
        const cpu = process.cpuUsage();
        const pending = this.room.handle(this, message);
        const wallMs = performance.now() - started;
        this.ctx.metrics.messageHandled(wallMs / 1000, wallMs < CPU_READ_FROM_MS ? wallMs / 1000 : cpuSeconds(process.cpuUsage(cpu)));
        if (pending) await pending;
      }
    } catch (error) {
      if (error instanceof ProtocolError) {
        this.fail('validation_error', error.message, 4400);
      } else {
        this.ctx.log.error(`message of ${JSON.stringify(this.ctx.docId)}`, error);
        this.fail('server_error', 'the server failed to handle a message; reconnect');
      }
    } finally {
      this.draining = false;
    }
  }

  private onClose(): void {
    clearInterval(this.heartbeatTimer);
    if (this.state !== 'closed') {
      this.state = 'closed';
      this.clearHelloTimer();
      this.lease?.stop();
      this.queue.length = 0;
      this.leaveRoom();
    }
    this.ctx.onClose(this);
  }

  private leaveRoom(): void {
    const room = this.room;
    this.room = undefined;
    room?.leave(this);
  }

  private clearHelloTimer(): void {
    if (this.helloTimer) clearTimeout(this.helloTimer);
    this.helloTimer = undefined;
  }
}

/**
 * A message handled in less wall time than this counts its wall time as its CPU time (which is at most that) in
 * `messageHandled`; only slower ones read the process's CPU time a second time. `process.cpuUsage` is getrusage(2),
 * which sums every thread of the process: a few µs per call on a virtual machine, against 0.1 µs for
 * `performance.now()`. Read twice for every message it was ~3 % of the server's CPU samples under many documents
 * (bench/ANALYSIS.md). The metric is a maximum, and what S9 bounds (50 ms) is far above this.
 */
const CPU_READ_FROM_MS = 1;

function cpuSeconds(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1e6;
}

function toBytes(data: Buffer | ArrayBuffer | Buffer[]): Uint8Array {
  if (Array.isArray(data)) return new Uint8Array(Buffer.concat(data));
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** The detail of a P2d refusal: both formats, and what the integrator must do. */
function formatMismatch(clientFormat: string | undefined): string {
  const theirs = clientFormat === undefined ? 'no document format (an earlier client, which writes the rich-text tree)' : `document format "${clientFormat}"`;
  return `the client writes ${theirs}, this server stores document format "${DOC_FORMAT}": update the client (wave.client.js, wave-client) to a version that writes "${DOC_FORMAT}"`;
}
