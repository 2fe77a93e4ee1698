/**
 * A socket factory for `Session` over real WebSockets (`ws`) that a test can misbehave with, per client:
 * - `cut()` drops the current socket like a dead network (the session sees 1006), `refuse(true)` makes every
 *   new connection attempt fail at once (no route, connection refused) until `refuse(false)`;
 * - every attempt is recorded (start, end, whether it opened) — RELIABILITY.md R1 judges the backoff from them;
 * - every update-bearing frame (PROTOCOL.md P9) is timed from the moment the session sends it to the `Ack` that
 *   covers it — the ack latency of C2;
 * - optional latency (each frame delayed by a random 0..max ms, FIFO per direction, as on one TCP connection) and
 *   replays (C3): after the session's `Sync step2` on a new connection, the last N update-carrying Sync frames the
 *   client ever sent are sent again. The server counts replays as update-bearing messages (P9), so the `Ack`
 *   counts coming back are translated to what the session itself sent; the session never learns about replays.
 */
import WebSocket from 'ws';
import { MessageType, SyncStep, decodeMessage, encodeMessage, isUpdateBearing, type Message } from 'wave-protocol';
import type { SocketFactory, SocketLike } from '../../src/core/socket.js';
import { frameBytes } from '../../src/core/socket.js';
import { assertBrowserCloseCode } from './util.js';

export interface Attempt {
  client: string;
  /** `Date.now()` when the session asked for a socket. */
  start: number;
  /** When the attempt failed or the socket closed; undefined while open or connecting. */
  end?: number;
  opened: boolean;
  /** Failed by `refuse(true)`, without touching the network. */
  refused: boolean;
}

export interface LinkOptions {
  /** Each frame (both directions) is delayed by a random 0..latencyMs, keeping the order of its direction. */
  latencyMs?: number;
  /** After each reconnect, send again this many of the client's last update-carrying Sync frames (C3). */
  replayLast?: number;
  /** Randomness for latency; seeded by the test. */
  random?: () => number;
}

/** All clients of one test: their links, attempts and ack latencies. */
export class WsLab {
  readonly attempts: Attempt[] = [];
  /** Milliseconds from an update-bearing send to the `Ack` covering it, over every client and connection. */
  readonly ackLatencies: number[] = [];
  /** The same, by kind of frame: `update` (an edit while online), `step2` (the catch-up after a (re)connect), `seed`. */
  readonly ackLatenciesByKind: Record<'update' | 'step2' | 'seed', number[]> = { update: [], step2: [], seed: [] };
  private readonly links = new Map<string, ClientLink>();

  /** Frames injected as replays (C3), over every client. */
  get replayed(): number {
    let n = 0;
    for (const link of this.links.values()) n += link.replayed;
    return n;
  }

  /** The socket factory of client `name` (one per session). */
  factory(name: string, options: LinkOptions = {}): SocketFactory {
    const link = new ClientLink(this, name, options);
    this.links.set(name, link);
    return (url) => link.open(url);
  }

  link(name: string): ClientLink {
    const link = this.links.get(name);
    if (!link) throw new Error(`no client ${name}`);
    return link;
  }

  attemptsOf(name: string): Attempt[] {
    return this.attempts.filter((a) => a.client === name);
  }
}

export class ClientLink {
  private refusing = false;
  private current: LabSocket | null = null;
  /** The client's update-carrying Sync frames, newest last, at most `replayLast` of them. */
  readonly history: Uint8Array[] = [];
  connections = 0;
  /** Frames injected as replays on this client's sockets (C3). */
  replayed = 0;

  constructor(
    readonly lab: WsLab,
    readonly name: string,
    readonly options: LinkOptions,
  ) {}

  open(url: string): SocketLike {
    const attempt: Attempt = { client: this.name, start: Date.now(), opened: false, refused: this.refusing };
    this.lab.attempts.push(attempt);
    if (this.refusing) return new RefusedSocket(attempt);
    const socket = new LabSocket(this, url, attempt, this.connections++ > 0);
    this.current = socket;
    return socket;
  }

  /** Drops the current socket like a dead network: no close handshake, the session sees 1006. */
  cut(): void {
    this.current?.terminate();
    this.current = null;
  }

  /**
   * Hands `bytes` to the session as a frame of the current socket, as a hostile server or a broken proxy would send
   * them (RELIABILITY.md R10): the real server never sends such frames, so they are made here.
   */
  deliver(bytes: Uint8Array): void {
    if (!this.current) throw new Error(`${this.name} has no socket to deliver to`);
    this.current.onmessage?.({ data: bytes.slice().buffer });
  }

  /** While true, every new connection attempt fails at once (the client is offline). */
  refuse(on: boolean): void {
    this.refusing = on;
  }

  get isOpen(): boolean {
    return this.current?.readyState === WebSocket.OPEN;
  }

  /** The current socket is open and every update-bearing frame sent on it (replays included) is acked. */
  get settled(): boolean {
    return this.isOpen && (this.current?.allAcked ?? false);
  }

  /** For failure messages: the current socket's state and how many of its update-bearing frames are acked. */
  describe(): string {
    return this.current ? `socket ${this.current.readyState}, ${this.current.ackState}` : 'no socket';
  }

  remember(frame: Uint8Array): void {
    const keep = this.options.replayLast ?? 0;
    if (keep === 0) return;
    this.history.push(frame);
    if (this.history.length > keep) this.history.shift();
  }
}

/** A FIFO of callbacks, each run at its due time; due times never decrease, so the order is kept. */
class DelayLine {
  private readonly items: Array<{ due: number; run: () => void }> = [];
  private last = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly maxMs: number,
    private readonly random: () => number,
  ) {}

  push(run: () => void): void {
    if (this.maxMs <= 0) return run();
    const due = Math.max(this.last, Date.now() + this.random() * this.maxMs);
    this.last = due;
    this.items.push({ due, run });
    this.arm();
  }

  private arm(): void {
    if (this.timer || this.items.length === 0) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      const now = Date.now();
      while (this.items.length > 0 && this.items[0]!.due <= now) this.items.shift()!.run();
      this.arm();
    }, Math.max(0, this.items[0]!.due - Date.now()));
  }

  clear(): void {
    this.items.length = 0;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

class LabSocket implements SocketLike {
  binaryType = 'arraybuffer';
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  private readonly ws: WebSocket;
  private readonly out: DelayLine;
  private readonly in: DelayLine;
  /** Update-bearing frames of this connection in the order the server receives them. */
  private readonly sent: Array<{ at: number; injected: boolean; kind: 'update' | 'step2' | 'seed' }> = [];
  /** How many entries of `sent` are covered by acks so far. */
  private ackedFrames = 0;
  private injectedAny = false;

  constructor(
    private readonly link: ClientLink,
    url: string,
    private readonly attempt: Attempt,
    private readonly reconnect: boolean,
  ) {
    const random = link.options.random ?? Math.random;
    this.out = new DelayLine(link.options.latencyMs ?? 0, random);
    this.in = new DelayLine(link.options.latencyMs ?? 0, random);
    this.ws = new WebSocket(url);
    this.ws.binaryType = 'nodebuffer';
    this.ws.on('open', () => {
      attempt.opened = true;
      this.in.push(() => this.onopen?.({}));
    });
    this.ws.on('message', (data: Buffer) => {
      const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice();
      this.in.push(() => this.receive(bytes));
    });
    this.ws.on('error', (error) => {
      this.in.push(() => this.onerror?.(error));
    });
    this.ws.on('close', (code: number, reason: Buffer) => {
      attempt.end = Date.now();
      this.out.clear();
      this.in.push(() => this.onclose?.({ code, reason: reason.toString() }));
    });
  }

  get readyState(): number {
    return this.ws.readyState;
  }

  get allAcked(): boolean {
    return this.ackedFrames >= this.sent.length;
  }

  get ackState(): string {
    return `${this.ackedFrames}/${this.sent.length} update-bearing frames acked (${this.sent.filter((f) => f.injected).length} replays)`;
  }

  send(data: Uint8Array): void {
    let message: Message | null = null;
    try {
      message = decodeMessage(data);
    } catch {
      message = null;
    }
    const frame = data.slice();
    if (message && isUpdateBearing(message)) this.sent.push({ at: Date.now(), injected: false, kind: frameKind(message) });
    this.transmit(frame);
    if (message?.type === MessageType.Sync && message.step !== SyncStep.Step1) {
      // The reply to the server's step1 on a new connection: the server now has everything this client has, so
      // every replayed frame integrates (an older frame alone could depend on one that was lost in the cut).
      if (message.step === SyncStep.Step2 && this.reconnect) this.replay();
      this.link.remember(frame);
    }
  }

  private replay(): void {
    for (const frame of [...this.link.history]) {
      this.sent.push({ at: Date.now(), injected: true, kind: 'update' });
      this.injectedAny = true;
      this.link.replayed++;
      this.transmit(frame);
    }
  }

  private transmit(frame: Uint8Array): void {
    this.out.push(() => {
      if (this.ws.readyState === WebSocket.OPEN) this.ws.send(frame);
    });
  }

  private receive(bytes: Uint8Array): void {
    let deliver = bytes;
    try {
      const message = decodeMessage(bytes);
      if (message.type === MessageType.Ack) {
        const covered = Math.min(message.count, this.sent.length);
        let own = 0;
        for (let i = 0; i < covered; i++) {
          const entry = this.sent[i]!;
          if (!entry.injected) own++;
          if (i >= this.ackedFrames && !entry.injected) {
            this.link.lab.ackLatencies.push(Date.now() - entry.at);
            this.link.lab.ackLatenciesByKind[entry.kind].push(Date.now() - entry.at);
          }
        }
        this.ackedFrames = Math.max(this.ackedFrames, covered);
        if (this.injectedAny) deliver = encodeMessage({ type: MessageType.Ack, count: own });
      }
    } catch {
      // Not ours to judge: the session reports frames it cannot read.
    }
    if (frameBytes(deliver)) this.onmessage?.({ data: deliver });
  }

  close(code?: number, reason?: string): void {
    assertBrowserCloseCode(code);
    this.ws.close(code, reason);
  }

  terminate(): void {
    this.ws.terminate();
  }
}

/** An attempt that fails at once, as with no network: `onclose(1006)` on the next turn, never `onopen`. */
class RefusedSocket implements SocketLike {
  binaryType = 'arraybuffer';
  readyState = WebSocket.CONNECTING as number;
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;

  constructor(attempt: Attempt) {
    setImmediate(() => {
      this.readyState = WebSocket.CLOSED;
      attempt.end = Date.now();
      this.onerror?.(new Error('connection refused (test network is down)'));
      this.onclose?.({ code: 1006, reason: '' });
    });
  }

  send(): void {}

  close(): void {}
}

function frameKind(message: Message): 'update' | 'step2' | 'seed' {
  if (message.type === MessageType.Seed) return 'seed';
  return message.type === MessageType.Sync && message.step === SyncStep.Step2 ? 'step2' : 'update';
}
