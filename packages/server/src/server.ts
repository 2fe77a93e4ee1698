/**
 * The Wave server: node:http for plain routes, `ws` (noServer) for `/v2/ws`, rooms over a `Store`.
 * `startServer` is what the CLI runs and what tests start in-process.
 */
import { createServer, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';
import { CloseCode, LIMIT_ERRORS, MessageType, SERVER_ERRORS, encodeMessage } from 'wave-protocol';
import type { ServerErrorCode } from 'wave-protocol';
import { authorizeUpgrade } from './auth.js';
import { clientAddress } from './client-address.js';
import type { UpgradeDecision } from './auth.js';
import { createHttpHandler, resolvePaths } from './http.js';
import type { StaticPaths } from './http.js';
import { consoleLogger } from './log.js';
import type { Logger } from './log.js';
import { LocalFanout } from './fanout/local.js';
import { RedisFanout } from './fanout/redis.js';
import type { Fanout } from './fanout/types.js';
import { Metrics } from './metrics.js';
import { RoomRegistry } from './rooms/registry.js';
import { DEFAULT_WEBHOOK_OPTIONS, WebhookDelivery } from './webhooks/delivery.js';
import type { WebhookOptions } from './webhooks/delivery.js';
import { storeRoomEvents } from './webhooks/events.js';
import { DEFAULT_COMPACT_IDLE_AFTER_MS, DEFAULT_MAX_DOCUMENT_BYTES, DEFAULT_MAX_STRUCTS_PER_UPDATE } from './rooms/room-options.js';
import { DEFAULT_MAX_TYPE_DEPTH, DEFAULT_MAX_VALUE_DEPTH } from './rooms/depth-check.js';
import { AuthThrottle } from './throttle.js';
import { SecretBox, defaultSecretKeyFile, loadSecretBox } from './secret-box.js';
import { SqliteStore } from './store/sqlite.js';
import { randomBytes } from 'node:crypto';
import { CommitQueue } from './store/commit-queue.js';
import { openStore } from './store/index.js';
import type { DocKey, Store } from './store/types.js';
import { Connection } from './ws/connection.js';
import { KeyGuard } from './ws/key-guard.js';

export interface ServerLimits {
  /**
   * Largest WebSocket frame accepted. ws defaults to 100 MiB, which lets any client make the server allocate
   * 100 MiB per frame (RELIABILITY.md S7). A 1 MB paste is one update (R9) of more than 1 MB in a rich-text editor:
   * each line it makes is a block break with its block attributes, so 4 MiB.
   */
  maxPayloadBytes: number;
  /** P2: the Hello deadline. */
  helloTimeoutMs: number;
  /** Messages a connection may have waiting while the server works on its previous one. */
  maxQueuedMessages: number;
  /** Connections per document when the key sets no `maxUsers` (`--max-users`; the next one gets `session_full`). */
  maxUsersPerDoc: number;
  /** S8: messages and bytes a connection may send before it has joined (`rate_limited`, 4429). */
  preAuthMaxMessages: number;
  preAuthMaxBytes: number;
  /** S12: sustained messages and bytes per second of one joined connection (`rate_limited`, 4429). */
  messagesPerSecond: number;
  updatesPerSecond: number;
  bytesPerSecond: number;
  /** Largest document (encoded state), checked before an update is applied (`document_too_large`, 4413). */
  maxDocumentBytes: number;
  /** Structs one update may carry (bounds the work of one message; `document_too_large`, 4413). */
  maxStructsPerUpdate: number;
  /** Deepest JSON-like value (embed, format value, JSON content) an update may carry (`validation_error`, 4400; D7). */
  maxValueDepth: number;
  /** Deepest nesting of shared types (elements in elements) an update may create (`validation_error`, 4400; D7). */
  maxTypeDepth: number;
  /** S1: failed authorisations per client address and minute; beyond it upgrades get HTTP 429. */
  authFailuresPerMinute: number;
  /**
   * S19: open WebSocket connections per client address; the next one is refused with `rate_limited` and close 4430.
   * Generous because a company NAT or a proxy without `--trust-proxy` puts many users behind one address.
   */
  maxConnectionsPerAddress: number;
  /** Time for a client to send the upgrade request's headers (slow-trickle clients, S8). */
  headersTimeoutMs: number;
  /** P12: WebSocket ping period, per connection from its opening; a socket that misses two pings is terminated. */
  heartbeatMs: number;
  /** How long an empty room stays loaded. */
  unloadDelayMs: number;
  /** Seed lease lifetime (renewed while the seeder is connected). */
  leaseTtlMs: number;
  /** Re-check period of peers waiting for a seeder that is not on this server. */
  leasePollMs: number;
  /** Stored updates of a document after which it is compacted. */
  compactAfterUpdates: number;
  /** Idle time after which a loaded document is held in compact form until its next use (rooms/doc-holder.ts). */
  compactIdleAfterMs: number;
  /**
   * Group-commit window in milliseconds: updates of every document arriving within it share one transaction (one
   * fsync). It delays acks, never relays (rooms relay before committing). `CommitQueueOptions.windowMs`.
   */
  groupCommitMs: number;
  /** Upper bound of a graceful shutdown (RELIABILITY.md D4: sockets closed ≤ 5 s). */
  shutdownTimeoutMs: number;
  /**
   * Part of the shutdown spent waiting for fan-out publishes before closing sockets. What is not published by
   * then is committed already: other servers get it from the store, or from the clients' resync on reconnect.
   */
  shutdownPublishMs: number;
}

export const DEFAULT_LIMITS: Readonly<ServerLimits> = {
  maxPayloadBytes: 4 * 1024 * 1024,
  helloTimeoutMs: 10_000,
  maxQueuedMessages: 1_000,
  maxUsersPerDoc: 256,
  preAuthMaxMessages: 1_000,
  preAuthMaxBytes: 5 * 1024 * 1024,
  messagesPerSecond: 500,
  updatesPerSecond: 400,
  bytesPerSecond: 2 * 1024 * 1024,
  maxDocumentBytes: DEFAULT_MAX_DOCUMENT_BYTES,
  maxStructsPerUpdate: DEFAULT_MAX_STRUCTS_PER_UPDATE,
  maxValueDepth: DEFAULT_MAX_VALUE_DEPTH,
  maxTypeDepth: DEFAULT_MAX_TYPE_DEPTH,
  authFailuresPerMinute: 30,
  maxConnectionsPerAddress: 1_000,
  headersTimeoutMs: 10_000,
  heartbeatMs: 30_000,
  unloadDelayMs: 1_000,
  leaseTtlMs: 10_000,
  leasePollMs: 1_000,
  compactAfterUpdates: 500,
  compactIdleAfterMs: DEFAULT_COMPACT_IDLE_AFTER_MS,
  groupCommitMs: 5,
  shutdownTimeoutMs: 5_000,
  shutdownPublishMs: 1_000,
};

export interface ServerOptions {
  /** Default `127.0.0.1`. */
  host?: string;
  /** Default 8080; 0 picks a free port (see `RunningServer.port`). */
  port?: number;
  /** A store URL (`sqlite:PATH`), or an open `Store` (then the caller closes it). Default `sqlite:./data/wave.db`. */
  store?: string | Store;
  /**
   * Fan-out across servers: a `redis://` (or `rediss://`) URL, or a `Fanout` (then the caller closes it).
   * Default: none, this server runs alone.
   */
  redis?: string | Fanout;
  /** Session grace period in seconds (default 60). */
  sessionGraceSeconds?: number;
  paths?: Partial<StaticPaths>;
  limits?: Partial<ServerLimits>;
  log?: Logger;
  /**
   * Master key of sealed key secrets (secret-box.ts): a `SecretBox`, or the path of its key file
   * (`--secret-key-file`). Default: `secret.key` next to a SQLite store, else `./data/secret.key`.
   */
  secretKey?: SecretBox | string;
  /**
   * Take the client address of per-address budgets from the reverse proxy's `Forwarded` / `X-Forwarded-For`
   * (client-address.ts) instead of the socket (`--trust-proxy`). Only behind a proxy that sets them: otherwise a
   * client could name any address. Default false.
   */
  trustProxy?: boolean;
  /**
   * Called right after an `Ack` frame (P9: the peer's first `count` update-bearing messages are committed) was handed
   * to a peer's socket, with the document it belongs to. Synchronous; it runs on the ack path, so it must not throw
   * or block. For instrumentation; RELIABILITY.md D2's test ends the process here, the worst moment to crash.
   */
  onAckSent?: (doc: DocKey, count: number) => void;
  /** Webhook delivery (webhooks/delivery.ts): debounce, max-wait, retry schedule, timeout (`--webhook-*`). */
  webhooks?: Partial<WebhookOptions>;
}

export interface RunningServer {
  /** `http://HOST:PORT` with the actual port. */
  url: string;
  host: string;
  port: number;
  store: Store;
  /** Seals key secrets (tests creating keys in-process pass `seal: (k, s) => server.secretBox.seal(k, s)`). */
  secretBox: SecretBox;
  /** Identifies this process among the servers sharing a store and a Redis. */
  serverId: string;
  /** Live counters (tests; `/metrics` shows them too). */
  stats(): { connections: number; rooms: number; pendingCommits: number; pendingPublishes: number };
  /**
   * Graceful shutdown: stops accepting, commits pending updates (their acks go out), closes sockets with 1012,
   * unloads rooms and closes the store (when the server opened it). Bounded by `limits.shutdownTimeoutMs`.
   */
  close(): Promise<void>;
}

export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  const log = options.log ?? consoleLogger;
  const limits: ServerLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const host = options.host ?? '127.0.0.1';
  const graceSeconds = options.sessionGraceSeconds ?? 60;
  if (!Number.isFinite(graceSeconds) || graceSeconds < 0) {
    throw new TypeError(`sessionGraceSeconds ${graceSeconds}: expected a number ≥ 0`);
  }
  const serverId = randomUUID();
  if (typeof options.redis === 'string' && !/^rediss?:\/\//i.test(options.redis)) {
    throw new TypeError(`redis ${JSON.stringify(options.redis)}: expected a redis:// or rediss:// URL`);
  }
  const ownsStore = typeof options.store !== 'object';
  const store = typeof options.store === 'object' ? options.store : openStore(options.store ?? 'sqlite:./data/wave.db');
  // Loads while the rest starts; awaited before listening, so that the first join does not wait for it.
  const writerStarted = store instanceof SqliteStore ? store.startWriter() : Promise.resolve();
  const ownsFanout = typeof options.redis !== 'object';
  const fanout: Fanout =
    typeof options.redis === 'object'
      ? options.redis
      : options.redis
        ? new RedisFanout({ url: options.redis, serverId, log })
        : new LocalFanout();
  const metrics = new Metrics();
  const secretBox = resolveSecretBox(options.secretKey, options.store);
  const throttle = new AuthThrottle(limits.authFailuresPerMinute, 60_000);
  const trustProxy = options.trustProxy ?? false;
  /** The key's secret for token checks; keys from before sealing get it sealed at their first REST call. */
  const secretFor = async (apiKey: string): Promise<string | undefined> => {
    const sealed = await store.findSealedSecret(apiKey);
    return sealed === undefined ? undefined : secretBox.open(apiKey, sealed);
  };

  const queue = new CommitQueue(store, {
    windowMs: limits.groupCommitMs,
    onError: (error, attempt) => log.error(`commit failed (attempt ${attempt}); updates kept in memory, retrying`, error),
  });
  const registry = new RoomRegistry(store, queue, {
    graceMs: Math.round(graceSeconds * 1000),
    serverId,
    leaseTtlMs: limits.leaseTtlMs,
    leasePollMs: limits.leasePollMs,
    compactAfterUpdates: limits.compactAfterUpdates,
    compactIdleAfterMs: limits.compactIdleAfterMs,
    unloadDelayMs: limits.unloadDelayMs,
    maxUsersPerDoc: limits.maxUsersPerDoc,
    maxDocumentBytes: limits.maxDocumentBytes,
    maxStructsPerUpdate: limits.maxStructsPerUpdate,
    maxValueDepth: limits.maxValueDepth,
    maxTypeDepth: limits.maxTypeDepth,
    fanout,
    metrics,
    log,
    onAckSent: options.onAckSent,
    events: storeRoomEvents(store, log),
  });
  const webhooks = new WebhookDelivery(store, secretBox, serverId, { ...DEFAULT_WEBHOOK_OPTIONS, ...options.webhooks }, metrics, log);

  let url = '';
  const httpServer = createServer(
    // Check header and request timeouts every second (Node's default is 30 s), so a slow-trickle client is cut
    // within about headersTimeoutMs (S8).
    { connectionsCheckingInterval: 1_000 },
    createHttpHandler({
      store,
      ...(fanout.shared ? { fanout } : {}),
      docs: { registry, secretBox, throttle, trustProxy },
      metrics: {
        registry: metrics,
        gauges: () => ({ connections: connections.size, documents: registry.size, documentsCompact: registry.compactCount, pendingCommits: queue.pending, pendingPublishes: fanout.pending, outbox: webhooks.stats }),
      },
      paths: resolvePaths(options.paths),
      log,
      fallbackOrigin: () => url,
    }),
  );
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: limits.maxPayloadBytes,
    // Compression would let a small frame inflate to maxPayload and costs CPU per message; updates are small.
    perMessageDeflate: false,
    clientTracking: false,
  });
  const connections = new Set<Connection>();
  /** Open connections per client address (S19). An address is removed when its count drops to zero. */
  const perAddress = new Map<string, number>();
  /** Sockets upgraded only to be refused (P1); closed by themselves, terminated at shutdown. */
  const refusing = new Set<WebSocket>();
  let closing = false;
  // Keys revoked or tightened by any process close their open connections (S15).
  const keyGuard = new KeyGuard(store, () => connections, log);
  const stopWatchingKeys = store.watchKeys((apiKey) => keyGuard.changed(apiKey));

  // Slow-trickle clients (S8): the upgrade request's headers must arrive within this time.
  httpServer.headersTimeout = limits.headersTimeoutMs;
  httpServer.requestTimeout = Math.max(limits.headersTimeoutMs, 30_000);

  httpServer.on('upgrade', (req, socket: Duplex, head: Buffer) => {
    // A module-level no-op: an arrow made here would keep this handler's scope (the request) alive with the socket.
    socket.on('error', ignoreError);
    if (closing) return refuse(socket, 503);
    const address = clientAddress(req, trustProxy);
    // S1: an address that failed authorisation too often is answered 429 before anything else is looked at.
    if (throttle.blocked(address)) return refuse(socket, 429);
    const keyGeneration = keyGuard.generation;
    authorizeUpgrade(req, store)
      .catch((error: unknown): UpgradeDecision => {
        log.error('reading the apiKey', error);
        return { kind: 'refuse', code: 'server_error', detail: 'the server cannot check keys now; retry later', close: CloseCode.ServerError };
      })
      .then((decision) => {
        if (closing) return refuse(socket, 503);
        if (decision.kind === 'http') {
          return refuse(socket, decision.status);
        }
        wss.handleUpgrade(req, socket, head, (ws) => {
          if (decision.kind === 'refuse') {
            if (decision.code === 'validation_error') throttle.failed(address);
            refuseSocket(ws, decision.code, decision.detail, decision.close);
            return;
          }
          if (closing) {
            ws.close(CloseCode.ServiceRestart, 'server restarting');
            return;
          }
          if ((perAddress.get(address) ?? 0) >= limits.maxConnectionsPerAddress) {
            const { code, close } = LIMIT_ERRORS.connectionsPerAddress;
            refuseSocket(ws, code, `this address already has ${limits.maxConnectionsPerAddress} open connections; close some or retry later`, close);
            return;
          }
          openConnection(ws, decision, address, keyGeneration);
        });
      })
      .catch((error: unknown) => {
        log.error('upgrade', error);
        socket.destroy();
      });
  });

  /**
   * Outside the upgrade handler on purpose: closures made there would keep its whole scope — the upgrade request,
   * its headers and first bytes — alive for as long as the connection (~2 KB per connection in a heap snapshot).
   */
  function openConnection(ws: WebSocket, decision: Extract<UpgradeDecision, { kind: 'accept' }>, address: string, keyGeneration: number): void {
    const connection = new Connection(ws, {
      apiKey: decision.apiKey,
      docId: decision.docId,
      key: decision.key,
      doc: decision.doc,
      origin: decision.origin,
      host: decision.host,
      registry,
      secretFor,
      limits,
      log,
      metrics,
      onClose: (c) => {
        if (!connections.delete(c)) return;
        const left = (perAddress.get(address) ?? 1) - 1;
        if (left > 0) perAddress.set(address, left);
        else perAddress.delete(address);
      },
      onAuthFailure: () => throttle.failed(address),
    });
    connections.add(connection);
    keyGuard.opened(connection, keyGeneration);
    perAddress.set(address, (perAddress.get(address) ?? 0) + 1);
  }

  function refuse(socket: Duplex, status: number): void {
    metrics.rejected(`http_${status}`);
    refuseHttp(socket, status);
  }

  function refuseSocket(ws: WebSocket, code: ServerErrorCode, detail: string, close: number): void {
    metrics.rejected(code);
    refusing.add(ws);
    ws.on('error', () => {});
    ws.on('close', () => refusing.delete(ws));
    // Only the error: no Welcome, no document byte (P1, S1).
    ws.send(encodeMessage({ type: MessageType.Error, error: { code, detail, fatal: SERVER_ERRORS[code].fatal } }));
    ws.close(close, code);
    setTimeout(() => ws.terminate(), 2_000).unref();
  }

  try {
    await writerStarted.catch((error: unknown) => {
      throw new Error(`the SQLite writer thread did not start: ${error instanceof Error ? error.message : String(error)}`);
    });
    await new Promise<void>((resolveListen, rejectListen) => {
      httpServer.once('error', rejectListen);
      httpServer.listen(options.port ?? 8080, host, () => {
        httpServer.off('error', rejectListen);
        resolveListen();
      });
    });
  } catch (error) {
    if (ownsFanout) await fanout.close();
    if (ownsStore) await store.close();
    throw error;
  }
  const address = httpServer.address();
  const port = typeof address === 'object' && address !== null ? address.port : (options.port ?? 8080);
  url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  webhooks.start();

  let closed: Promise<void> | undefined;
  async function shutdown(): Promise<void> {
    closing = true;
    // Deliveries still in flight after this keep their lease: the event goes out again after it expires.
    const webhooksClosed = bounded(webhooks.close(), 1_000);
    const serverClosed = new Promise<void>((r) => httpServer.close(() => r()));
    httpServer.closeIdleConnections();
    // 1. Commit what was received so far and publish it to the other servers (an edit is acked once both are
    //    done, D6), so that the clients that are about to reconnect there find their edits already relayed. The
    //    acks go out before the close frames: they are sent from microtasks after the publish, so let one
    //    macrotask pass.
    await queue.flush();
    await bounded(fanout.flush(), limits.shutdownPublishMs);
    await new Promise((r) => setImmediate(r));
    // 2. Close the sockets (clients reconnect on 1012) and give them a moment to answer the close.
    for (const connection of connections) connection.close(CloseCode.ServiceRestart, 'server restarting');
    for (const ws of refusing) ws.terminate();
    await waitUntil(() => connections.size === 0, 1_000);
    for (const connection of connections) connection.terminate();
    // 3. Rooms flush their last commits and record the session activity; then the store closes.
    await registry.close();
    await queue.flush();
    await bounded(fanout.flush(), limits.shutdownPublishMs);
    await stopWatchingKeys();
    await webhooksClosed;
    httpServer.closeAllConnections();
    await serverClosed;
    wss.close();
    if (ownsFanout) await fanout.close();
    if (ownsStore) await store.close();
    metrics.close();
  }

  return {
    url,
    host,
    port,
    store,
    secretBox,
    serverId,
    stats: () => ({ connections: connections.size, rooms: registry.size, pendingCommits: queue.pending, pendingPublishes: fanout.pending }),
    close(): Promise<void> {
      closed ??= withTimeout(shutdown(), limits.shutdownTimeoutMs).catch((error: unknown) => {
        log.error('shutdown did not finish cleanly', error);
        metrics.close();
        for (const connection of connections) connection.terminate();
        httpServer.closeAllConnections();
      });
      return closed;
    },
  };
}

function resolveSecretBox(given: SecretBox | string | undefined, store: string | Store | undefined): SecretBox {
  if (given instanceof SecretBox) return given;
  if (typeof given === 'string') return loadSecretBox(given);
  if (typeof store === 'string' || store === undefined) return loadSecretBox(defaultSecretKeyFile(store ?? 'sqlite:./data/wave.db'));
  if (store instanceof SqliteStore && store.path !== ':memory:') return loadSecretBox(defaultSecretKeyFile(`sqlite:${store.path}`));
  // An in-memory or caller-owned store without a key file: secrets sealed now are readable by this process only.
  return new SecretBox(randomBytes(32));
}

/** Socket errors after an upgrade are reported by the socket's close; nothing to do on the event itself. */
function ignoreError(): void {}

function refuseHttp(socket: Duplex, status: number): void {
  const text = STATUS_CODES[status] ?? 'Error';
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
  );
  setTimeout(() => socket.destroy(), 1_000).unref();
}

/** Polls `condition` every 10 ms, at most `timeoutMs`. */
async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!condition() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
}

/** Waits for `promise` at most `ms` (what it does goes on; the caller just stops waiting). */
async function bounded(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
