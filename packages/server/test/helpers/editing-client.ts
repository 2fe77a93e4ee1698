/**
 * A protocol client for load and failover tests: it edits a shared text with unique tokens, reconnects to the next
 * server of its URL list when its socket closes (as a client behind a load balancer would land on another
 * server), keeps editing while offline, and knows for each of its edits whether the server acknowledged it (P9):
 * an edit is acked once an `Ack` covers the message that carried it — the update it was sent in, or, for edits
 * made offline or sent on a socket that died unacked, the step2 reply of the next connection (P10).
 */
import { EventEmitter } from 'node:events';
import WebSocket from 'ws';
import * as Y from 'yjs';
import { DOC_FORMAT, MessageType, PROTOCOL_VERSION, SyncStep, decodeMessage, encodeMessage } from 'wave-protocol';
import type { ErrorPayload, Message } from 'wave-protocol';

export interface EditingClientOptions {
  /** Servers, `http://HOST:PORT`; the client starts at `first` and moves to the next one after each close. */
  urls: string[];
  first: number;
  apiKey: string;
  docId: string;
  name: string;
  /** Offered when the server asks for the seed. */
  seedText?: string;
  /** Reconnect after a close the client did not ask for (default true). */
  reconnect?: boolean;
  /** Seeded random numbers (tests print their seed). */
  random: () => number;
}

export interface EditRecord {
  token: string;
  kind: 'insert' | 'delete';
  /** Connection and message count that carry it; `undefined` while it waits for the next connection. */
  conn: number | undefined;
  msg: number;
  at: number;
  ackedAt?: number;
}

/** Live updates from the server, and the document sent at sync (step2), which is not a propagation. */
const REMOTE = Symbol('remote');
const SYNC = Symbol('sync');
const SEED = Symbol('seed');
/** Pause before reconnecting: a client backs off a little; 50–250 ms keeps the test fast. */
const RECONNECT_MIN_MS = 50;
const RECONNECT_SPREAD_MS = 200;

export class EditingClient {
  readonly doc = new Y.Doc();
  readonly text = this.doc.getText('text');
  readonly edits: EditRecord[] = [];
  readonly errors: ErrorPayload[] = [];
  /** Index in `urls` of the current (or last) server. */
  serverIndex: number;
  synced = false;
  /** Closes the client did not ask for. */
  unexpectedCloses = 0;
  seedRequests = 0;
  /** Called with the text of every live remote insert (not with the document received at sync). */
  onRemoteInsert: ((inserted: string) => void) | undefined;

  private ws: WebSocket | undefined;
  private conn = 0;
  private sent = 0;
  private epoch: number | undefined;
  private serverVector: Uint8Array | undefined;
  private closing = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly events = new EventEmitter();

  constructor(readonly options: EditingClientOptions) {
    this.events.setMaxListeners(100);
    this.serverIndex = options.first % options.urls.length;
    this.doc.on('update', (update: Uint8Array, origin: unknown) => {
      if (origin === REMOTE || origin === SYNC || origin === SEED || !this.synced) return;
      this.send({ type: MessageType.Sync, step: SyncStep.Update, update });
      this.sent++;
    });
    this.text.observe((event, transaction) => {
      if (transaction.origin !== REMOTE || !this.onRemoteInsert) return;
      for (const op of event.delta) if (typeof op.insert === 'string') this.onRemoteInsert(op.insert);
    });
    this.connect();
  }

  get url(): string {
    return this.options.urls[this.serverIndex]!;
  }

  /** Inserts `token` between two tokens (never inside one), at a random place. */
  insert(token: string): void {
    const text = this.text.toString();
    const boundaries = [0];
    for (let i = text.indexOf(']'); i !== -1; i = text.indexOf(']', i + 1)) boundaries.push(i + 1);
    const at = boundaries[Math.floor(this.options.random() * boundaries.length)]!;
    this.text.insert(at, token);
    this.record(token, 'insert');
  }

  /** Deletes `token` (a whole one); false when it is not in the text. */
  delete(token: string): boolean {
    const index = this.text.toString().indexOf(token);
    if (index === -1) return false;
    this.text.delete(index, token.length);
    this.record(token, 'delete');
    return true;
  }

  get allAcked(): boolean {
    return this.edits.every((e) => e.ackedAt !== undefined);
  }

  /** Resolves once the condition holds; re-checked on every frame and socket event. */
  waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!condition()) return;
        cleanup();
        resolve();
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`${this.options.name}: timed out after ${timeoutMs} ms waiting for ${what} (server ${this.serverIndex}, synced ${this.synced}, sent ${this.sent}, unacked ${this.edits.filter((e) => e.ackedAt === undefined).length})`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.events.off('change', check);
      };
      this.events.on('change', check);
      check();
    });
  }

  waitSynced(timeoutMs?: number): Promise<void> {
    return this.waitFor(() => this.synced, 'sync', timeoutMs);
  }

  waitAllAcked(timeoutMs?: number): Promise<void> {
    return this.waitFor(() => this.synced && this.allAcked, 'acks of every edit', timeoutMs);
  }

  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.reconnectTimer);
    const ws = this.ws;
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      ws.once('close', () => resolve());
      ws.close(1000);
    });
  }

  private record(token: string, kind: EditRecord['kind']): void {
    // The doc's update handler sent the edit synchronously when synced: it is message number `sent`.
    this.edits.push({ token, kind, conn: this.synced ? this.conn : undefined, msg: this.sent, at: performance.now() });
  }

  private connect(): void {
    const conn = ++this.conn;
    this.sent = 0;
    this.synced = false;
    this.serverVector = undefined;
    const wsUrl = `${this.url.replace(/^http/, 'ws')}/v2/ws?apiKey=${encodeURIComponent(this.options.apiKey)}&docId=${encodeURIComponent(this.options.docId)}`;
    const ws = new WebSocket(wsUrl);
    this.ws = ws;
    ws.binaryType = 'nodebuffer';
    ws.on('open', () => {
      this.send({
        type: MessageType.Hello,
        hello: {
          protocol: PROTOCOL_VERSION,
          format: DOC_FORMAT,
          apiKey: this.options.apiKey,
          docId: this.options.docId,
          user: { name: this.options.name },
          clientId: this.doc.clientID,
          ...(this.epoch !== undefined ? { epoch: this.epoch } : {}),
        },
      });
    });
    ws.on('message', (data: Buffer) => {
      if (this.conn !== conn) return;
      this.handle(decodeMessage(new Uint8Array(data)));
      this.events.emit('change');
    });
    ws.on('error', () => {}); // a refused connection is followed by 'close'
    ws.on('close', () => {
      if (this.conn !== conn) return;
      this.synced = false;
      this.events.emit('change');
      if (this.closing || this.options.reconnect === false) return;
      this.unexpectedCloses++;
      // Behind a load balancer the next connection lands elsewhere; here: the next server of the list.
      this.serverIndex = (this.serverIndex + 1) % this.options.urls.length;
      this.reconnectTimer = setTimeout(() => this.connect(), RECONNECT_MIN_MS + this.options.random() * RECONNECT_SPREAD_MS);
    });
  }

  private send(message: Message): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(encodeMessage(message));
  }

  private handle(message: Message): void {
    switch (message.type) {
      case MessageType.Welcome:
        this.epoch = message.welcome.epoch;
        break;
      case MessageType.SeedRequest:
        this.seedRequests++;
        if (this.options.seedText) this.doc.transact(() => this.text.insert(0, this.options.seedText!), SEED);
        this.send({ type: MessageType.Seed, epoch: message.epoch, update: Y.encodeStateAsUpdate(this.doc) });
        this.sent++;
        break;
      case MessageType.Sync:
        if (message.step === SyncStep.Step1) {
          // Answered after the server's step2 (which follows at once), so that edits made in between are in it.
          this.serverVector = message.stateVector;
        } else if (message.step === SyncStep.Step2) {
          Y.applyUpdate(this.doc, message.update, SYNC);
          // P10: everything the server lacks; it carries every edit not acked so far.
          this.send({ type: MessageType.Sync, step: SyncStep.Step2, update: Y.encodeStateAsUpdate(this.doc, this.serverVector) });
          this.sent++;
          for (const edit of this.edits) {
            if (edit.ackedAt === undefined) {
              edit.conn = this.conn;
              edit.msg = this.sent;
            }
          }
          this.synced = true;
        } else {
          Y.applyUpdate(this.doc, message.update, REMOTE);
        }
        break;
      case MessageType.Ack: {
        const now = performance.now();
        for (const edit of this.edits) {
          if (edit.ackedAt === undefined && edit.conn === this.conn && edit.msg <= message.count) edit.ackedAt = now;
        }
        break;
      }
      case MessageType.Error:
        this.errors.push(message.error);
        break;
      default:
        break;
    }
  }
}

/** mulberry32: a small seeded generator, so that a failing run can be repeated from its printed seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Percentile (0–100) of a list of numbers, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
