/**
 * A small Wave protocol client over `ws` for server tests. It speaks PROTOCOL.md like a real client would: Hello,
 * seeds its "editor content" when asked, answers step1 with step2, applies sync and awareness, counts its
 * update-bearing messages and the acks, and records **every** frame it receives (raw bytes and decoded form).
 * Waiting is event-driven: `waitFor` re-checks its condition on each frame or socket event, with a deadline.
 */
import { EventEmitter } from 'node:events';
import WebSocket from 'ws';
import * as Y from 'yjs';
import * as awarenessProtocol from 'y-protocols/awareness';
import { DOC_FORMAT, MessageType, PROTOCOL_VERSION, SyncStep, decodeMessage, encodeMessage } from 'wave-protocol';
import type { ErrorPayload, HelloPayload, Message, UserInput, WelcomePayload } from 'wave-protocol';

export interface TestClientOptions {
  /** Server origin, `http://HOST:PORT`. */
  url: string;
  apiKey: string;
  docId: string;
  /** `Origin` header of the upgrade request; none by default (a non-browser client). */
  origin?: string;
  user?: UserInput;
  /** Editor content offered when the server sends `SeedRequest`. */
  seedText?: string;
  /** `Hello.epoch`. */
  epoch?: number;
  /** Fields that replace those of the Hello the client would send (protocol tests). */
  helloOverride?: Partial<HelloPayload>;
  /** Send Hello on open (default true). */
  hello?: boolean;
  /** Answer SeedRequest with Seed (default true). */
  autoSeed?: boolean;
  /** Answer WebSocket pings (default true); false simulates a dead peer whose socket stays open. */
  autoPong?: boolean;
}

export interface Frame {
  /** ms since the client was created. */
  at: number;
  bytes: Uint8Array;
  message?: Message;
  decodeError?: string;
}

const REMOTE = Symbol('remote');
const SEED = Symbol('seed');
const DEFAULT_TIMEOUT_MS = 10_000;

export class TestClient {
  readonly ws: WebSocket;
  readonly doc = new Y.Doc();
  readonly text = this.doc.getText('text');
  readonly awareness = new awarenessProtocol.Awareness(this.doc);
  readonly frames: Frame[] = [];
  readonly acks: number[] = [];
  readonly errors: ErrorPayload[] = [];
  readonly seedRequests: number[] = [];
  welcome: WelcomePayload | undefined;
  /** Update-bearing messages sent (Sync step2/update, Seed), the server's ack unit (P9). */
  sent = 0;
  pongs = 0;
  synced = false;
  /** Status of a refused upgrade (no WebSocket). */
  httpStatus: number | undefined;
  closeEvent: { code: number; reason: string } | undefined;
  readonly opened: Promise<void>;
  readonly closed: Promise<{ code: number; reason: string }>;

  private readonly events = new EventEmitter();
  private readonly started = Date.now();

  constructor(readonly options: TestClientOptions) {
    this.events.setMaxListeners(100);
    this.awareness.setLocalState(null);
    const wsUrl = `${options.url.replace(/^http/, 'ws')}/v2/ws?apiKey=${encodeURIComponent(options.apiKey)}&docId=${encodeURIComponent(options.docId)}`;
    this.ws = new WebSocket(wsUrl, {
      ...(options.origin !== undefined ? { origin: options.origin } : {}),
      autoPong: options.autoPong !== false,
    });
    this.ws.binaryType = 'nodebuffer';
    let closedResolve!: (v: { code: number; reason: string }) => void;
    this.closed = new Promise((r) => (closedResolve = r));
    this.opened = new Promise<void>((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.on('unexpected-response', (req, res) => {
        this.httpStatus = res.statusCode;
        res.resume();
        req.destroy();
        reject(new Error(`upgrade refused with HTTP ${res.statusCode}`));
        this.awareness.destroy();
        this.closeEvent = { code: -1, reason: `HTTP ${res.statusCode}` };
        closedResolve(this.closeEvent);
        this.changed();
      });
      this.ws.on('error', (error) => {
        reject(error);
        this.changed();
      });
    });
    this.opened.catch(() => {});
    this.ws.on('open', () => {
      if (options.hello !== false) this.sendHello();
    });
    this.ws.on('message', (data: Buffer, isBinary: boolean) => this.onFrame(data, isBinary));
    this.ws.on('close', (code: number, reason: Buffer) => {
      this.closeEvent ??= { code, reason: reason.toString() };
      closedResolve(this.closeEvent);
      this.awareness.destroy();
      this.changed();
    });
    this.doc.on('update', (update: Uint8Array, origin: unknown) => {
      if (origin === REMOTE || origin === SEED || !this.synced) return;
      this.send({ type: MessageType.Sync, step: SyncStep.Update, update });
      this.sent++;
    });
    this.awareness.on('update', ({ added, updated, removed }: { added: number[]; updated: number[]; removed: number[] }, origin: unknown) => {
      if (origin !== 'local') return;
      const clients = [...added, ...updated, ...removed].filter((id) => id === this.doc.clientID);
      if (clients.length === 0 || this.ws.readyState !== WebSocket.OPEN) return;
      this.send({ type: MessageType.Awareness, update: awarenessProtocol.encodeAwarenessUpdate(this.awareness, clients) });
    });
  }

  /** Connects and waits for the socket to open. */
  static async connect(options: TestClientOptions): Promise<TestClient> {
    const client = new TestClient(options);
    await client.opened;
    return client;
  }

  get clientId(): number {
    return this.doc.clientID;
  }

  /** Decoded messages received, in order. */
  get messages(): Message[] {
    return this.frames.flatMap((f) => (f.message ? [f.message] : []));
  }

  get lastAck(): number {
    return this.acks.length > 0 ? this.acks[this.acks.length - 1]! : 0;
  }

  sendHello(): void {
    const hello: HelloPayload = {
      protocol: PROTOCOL_VERSION,
      format: DOC_FORMAT,
      apiKey: this.options.apiKey,
      docId: this.options.docId,
      user: this.options.user ?? { name: 'tester' },
      clientId: this.doc.clientID,
      ...(this.options.epoch !== undefined ? { epoch: this.options.epoch } : {}),
      ...this.options.helloOverride,
    };
    this.send({ type: MessageType.Hello, hello });
  }

  send(message: Message): void {
    this.sendRaw(encodeMessage(message));
  }

  sendRaw(bytes: Uint8Array | string): void {
    this.ws.send(bytes);
  }

  /** Inserts into the shared text; once synced the update goes out at once. Returns the update-bearing count. */
  insert(index: number, content: string): number {
    this.text.insert(index, content);
    return this.sent;
  }

  /** Publishes this client's presence (the server stamps identity into it). */
  setPresence(state: Record<string, unknown> | null): void {
    this.awareness.setLocalState(state);
  }

  /** Resolves with the condition's value once it is truthy; re-checked on every frame and socket event. */
  waitFor<T>(condition: () => T | undefined | null | false, what: string, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const check = (): boolean => {
        const value = condition();
        if (value === undefined || value === null || value === false) return false;
        cleanup();
        resolve(value);
        return true;
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; ${this.describe()}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.events.off('change', check);
      };
      this.events.on('change', check);
      check();
    });
  }

  waitSynced(timeoutMs?: number): Promise<true> {
    return this.waitFor(() => this.synced || this.failIfClosed('synced'), 'step2', timeoutMs);
  }

  /** Waits until every update-bearing message sent so far is acked. */
  waitAllAcked(timeoutMs?: number): Promise<true> {
    const target = this.sent;
    return this.waitFor(() => this.lastAck >= target || this.failIfClosed(`ack ${target}`), `ack ${target}`, timeoutMs);
  }

  waitClosed(timeoutMs?: number): Promise<{ code: number; reason: string }> {
    return this.waitFor(() => this.closeEvent, 'close', timeoutMs);
  }

  close(): Promise<{ code: number; reason: string }> {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(1000);
    return this.closed;
  }

  /** For `waitFor`: throws (rejecting the wait) when the socket closed before the condition held. */
  private failIfClosed(what: string): false {
    if (this.closeEvent) throw new Error(`socket closed (${this.closeEvent.code} ${this.closeEvent.reason}) before ${what}; ${this.describe()}`);
    return false;
  }

  describe(): string {
    const recent = this.messages.slice(-8).map((m) => {
      const name = Object.entries(MessageType).find(([, v]) => v === m.type)?.[0] ?? String(m.type);
      if (m.type === MessageType.Error) return `Error(${m.error.code}: ${m.error.detail})`;
      if (m.type === MessageType.Ack) return `Ack(${m.count})`;
      if (m.type === MessageType.Sync) return `Sync(${m.step})`;
      return name;
    });
    return `client ${this.doc.clientID} sent=${this.sent} acks=${this.lastAck} synced=${this.synced} close=${JSON.stringify(this.closeEvent)} last frames: ${recent.join(' ')}`;
  }

  private onFrame(data: Buffer, isBinary: boolean): void {
    const bytes = new Uint8Array(data);
    const frame: Frame = { at: Date.now() - this.started, bytes };
    this.frames.push(frame);
    if (!isBinary) {
      frame.decodeError = 'text frame';
      this.changed();
      return;
    }
    try {
      frame.message = decodeMessage(bytes);
    } catch (error) {
      frame.decodeError = (error as Error).message;
      this.changed();
      return;
    }
    // A handler that throws (test assertion) must not break recording of later frames.
    try {
      this.handle(frame.message);
    } finally {
      this.changed();
    }
  }

  private handle(message: Message): void {
    switch (message.type) {
      case MessageType.Welcome:
        this.welcome = message.welcome;
        break;
      case MessageType.SeedRequest:
        this.seedRequests.push(message.epoch);
        if (this.options.autoSeed !== false) this.seed(message.epoch);
        break;
      case MessageType.Sync:
        if (message.step === SyncStep.Step1) {
          this.send({ type: MessageType.Sync, step: SyncStep.Step2, update: Y.encodeStateAsUpdate(this.doc, message.stateVector) });
          this.sent++;
        } else {
          Y.applyUpdate(this.doc, message.update, REMOTE);
          if (message.step === SyncStep.Step2) this.synced = true;
        }
        break;
      case MessageType.Awareness:
        awarenessProtocol.applyAwarenessUpdate(this.awareness, message.update, REMOTE);
        break;
      case MessageType.Ack:
        this.acks.push(message.count);
        break;
      case MessageType.Error:
        this.errors.push(message.error);
        break;
      case MessageType.Pong:
        this.pongs++;
        break;
      default:
        break;
    }
  }

  /** Sends the "editor content" as the seed (P5). */
  seed(epoch: number): void {
    if (this.options.seedText) {
      this.doc.transact(() => this.text.insert(0, this.options.seedText!), SEED);
    }
    this.send({ type: MessageType.Seed, epoch, update: Y.encodeStateAsUpdate(this.doc) });
    this.sent++;
  }

  private changed(): void {
    this.events.emit('change');
  }
}

/** Messages of one type received by a client. */
export function messagesOfType<T extends Message['type']>(client: TestClient, type: T): Array<Extract<Message, { type: T }>> {
  return client.messages.filter((m): m is Extract<Message, { type: T }> => m.type === type);
}
