/**
 * Runs `SqliteStore.appendUpdates` and `touchSessions` on a worker thread (sqlite-writer.ts), so that the commit of
 * a batch and its fsync never block the event loop: relays, acks and other documents' messages go on while the disk
 * works. The promise of an append still resolves only after its transaction committed (ack after commit, P9), and
 * the commit queue's group commit is unchanged: one request per batch, one transaction, one fsync.
 *
 * The worker starts at the first append (CLI commands that never append never start one) and is restarted after
 * it died; requests it had not answered reject, and the commit queue retries them (an append that committed
 * before the worker died and is written again is harmless: a Yjs update applied twice changes nothing).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { AppendEntry, SessionTouch } from './types.js';

export interface WriterData {
  path: string;
  busyTimeoutMs: number;
}

/** One transaction for the writer: a batch of updates, or the session touches of a sweep. */
export type WriterRequest = { id: number; now: number } & ({ kind: 'append'; entries: AppendEntry[] } | { kind: 'touch'; touches: readonly SessionTouch[] });

export interface WriterReply {
  id: number;
  /** The message of the error the transaction threw; absent when it committed. */
  error?: string;
  /** Of a touch: the indices of the touches whose session is gone (`Store.touchSessions`). */
  ended?: number[];
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

export class SqliteAppender {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (reply: WriterReply) => void; reject: (error: Error) => void }>();
  /** Appends not yet answered (close waits for them). */
  private readonly inflight = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly data: WriterData) {}

  /** Resolves once the entries' transaction committed on the worker's connection. */
  async append(entries: AppendEntry[], now: number): Promise<void> {
    await this.request({ id: this.nextId++, now, kind: 'append', entries });
  }

  /** `Store.touchSessions` in one transaction on the worker's connection. */
  async touchSessions(touches: readonly SessionTouch[], now: number): Promise<number[]> {
    return (await this.request({ id: this.nextId++, now, kind: 'touch', touches })).ended ?? [];
  }

  private request(request: WriterRequest): Promise<WriterReply> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    const worker = this.start();
    const done = new Promise<WriterReply>((resolve, reject) => {
      this.waiting.set(request.id, { resolve, reject });
      worker.postMessage(request);
    });
    const settled = done.then(
      () => {},
      () => {},
    );
    this.inflight.add(settled);
    // Referenced while an append is in flight: its caller awaits the answer, which only the thread can give.
    worker.ref();
    void settled.then(() => {
      this.inflight.delete(settled);
      if (this.inflight.size === 0) this.worker?.unref();
    });
    return done;
  }

  /** Starts the thread now rather than at the first append (a server starting), so no ack waits for it. */
  warmUp(): void {
    if (!this.closed) this.start();
  }

  /** Waits for the appends in flight, then stops the worker. */
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
    worker.on('message', (reply: WriterReply) => {
      const waiter = this.waiting.get(reply.id);
      if (!waiter) return;
      this.waiting.delete(reply.id);
      if (reply.error === undefined) waiter.resolve(reply);
      else waiter.reject(new Error(reply.error));
    });
    const failAll = (error: Error): void => {
      if (this.worker === worker) this.worker = undefined;
      const waiting = [...this.waiting.values()];
      this.waiting.clear();
      for (const { reject } of waiting) reject(error);
    };
    worker.on('error', failAll);
    worker.on('exit', (code) => failAll(new Error(`the SQLite writer thread exited (${code})`)));
    // Between appends the thread alone keeps no process alive (the store's owner closes it).
    worker.unref();
    this.worker = worker;
    return worker;
  }
}
