/**
 * Runs the store's document writes — `SqliteStore.appendUpdates`, the session calls of joins and sweeps, seeding,
 * compaction, deletion and the rooms' webhook events (`WriterMethod`) — on a worker thread (sqlite-writer.ts), so that their transactions and
 * fsyncs never block the event loop: relays, acks and other documents' messages go on while the disk works. A
 * call's promise resolves only after its transaction committed (ack after commit, P9); the main thread's own
 * connection then reads what it wrote (WAL). The commit queue's group commit is unchanged: one request per batch,
 * one transaction, one fsync.
 *
 * The worker runs the requests one at a time in the order they were posted, so writes to one document commit in
 * the order the server issued them, as they did on the event loop.
 *
 * The worker starts at the first call (CLI commands that never write a document never start one) and is restarted
 * after it died; requests it had not answered reject. The commit queue retries its appends (an append that
 * committed before the worker died and is written again is harmless: a Yjs update applied twice changes nothing);
 * a join whose session call rejected fails with `server_error`, and its client reconnects.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Store } from './types.js';

export interface WriterData {
  path: string;
  busyTimeoutMs: number;
}

/** The `Store` methods the writer thread runs, each one transaction on its connection. */
export type WriterMethod =
  | 'appendUpdates'
  | 'touchSessions'
  | 'openSession'
  | 'acquireSeedLease'
  | 'releaseSeedLease'
  | 'commitSeed'
  | 'compact'
  | 'deleteDocument'
  | 'enqueueEvent';

/** One call for the writer: the method and its arguments, as the main thread's store received them. */
export type WriterRequest = { [M in WriterMethod]: { id: number; method: M; args: Parameters<Store[M]> } }[WriterMethod];

/** What the worker posts once its module graph is loaded and its connection open, before any reply. */
export const WRITER_READY = 'ready';

export interface WriterReply {
  id: number;
  /** The message of the error the transaction threw; absent when it committed. */
  error?: string;
  /** What the method resolved to (structured clone). */
  value?: unknown;
}

/**
 * Starts the worker entry beside this file: the compiled `.js`, or the `.ts` source when the server runs from
 * source (tests under tsx, whose loader a worker thread does not inherit: the thread registers it first).
 */
function startWriter(workerData: WriterData): Worker {
  const compiled = new URL('./sqlite-writer.js', import.meta.url);
  if (existsSync(fileURLToPath(compiled))) return new Worker(compiled, { workerData });
  const source = new URL('./sqlite-writer.ts', import.meta.url).href;
  const bootstrap = `import('tsx/esm/api').then((tsx) => tsx.register()).then(() => import(${JSON.stringify(source)}))`;
  return new Worker(bootstrap, { eval: true, workerData });
}

export class SqliteWriterThread {
  private worker: Worker | undefined;
  /** Settles when the current worker posted `WRITER_READY`, or rejects when it failed before. */
  private ready: Promise<void> = Promise.resolve();
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  /** Calls not yet answered (close waits for them). */
  private readonly inflight = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly data: WriterData) {}

  /** Runs `method` on the writer thread's store; resolves with its result once its transaction committed. */
  call<M extends WriterMethod>(method: M, ...args: Parameters<Store[M]>): Promise<Awaited<ReturnType<Store[M]>>> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    const worker = this.start();
    const id = this.nextId++;
    const done = new Promise<Awaited<ReturnType<Store[M]>>>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      worker.postMessage({ id, method, args } as WriterRequest);
    });
    const settled = done.then(
      () => {},
      () => {},
    );
    this.inflight.add(settled);
    // Referenced while a call is in flight: its caller awaits the answer, which only the thread can give.
    worker.ref();
    void settled.then(() => {
      this.inflight.delete(settled);
      if (this.inflight.size === 0) this.worker?.unref();
    });
    return done;
  }

  /**
   * Starts the thread now rather than at the first call (a server starting), so no join or ack waits for it.
   * Resolves once the thread has loaded and opened its connection; rejects when it failed to.
   */
  warmUp(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    this.start();
    return this.ready;
  }

  /** Waits for the calls in flight, then stops the worker. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.inflight]);
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = startWriter(this.data);
    let ready!: () => void;
    let failed!: (error: Error) => void;
    this.ready = new Promise<void>((resolve, reject) => {
      ready = resolve;
      failed = reject;
    });
    // Awaited only by a starting server; a worker that dies later is restarted by the next call.
    this.ready.catch(() => {});
    worker.on('message', (reply: WriterReply | typeof WRITER_READY) => {
      if (reply === WRITER_READY) {
        // Referenced until then: a server that awaits `warmUp` has nothing else keeping it alive yet.
        if (this.inflight.size === 0) worker.unref();
        return ready();
      }
      const waiter = this.waiting.get(reply.id);
      if (!waiter) return;
      this.waiting.delete(reply.id);
      if (reply.error === undefined) waiter.resolve(reply.value);
      else waiter.reject(new Error(reply.error));
    });
    const failAll = (error: Error): void => {
      failed(error);
      if (this.worker === worker) this.worker = undefined;
      const waiting = [...this.waiting.values()];
      this.waiting.clear();
      for (const { reject } of waiting) reject(error);
    };
    worker.on('error', failAll);
    worker.on('exit', (code) => failAll(new Error(`the SQLite writer thread exited (${code})`)));
    // Between calls, once started, the thread alone keeps no process alive (the store's owner closes it).
    this.worker = worker;
    return worker;
  }
}
