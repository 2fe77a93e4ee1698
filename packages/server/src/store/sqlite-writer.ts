/**
 * Worker-thread entry of `SqliteWriterThread` (sqlite-writer-thread.ts): its own better-sqlite3 connection to the
 * server's file (WAL: readers on the main thread see each commit as soon as it is done) runs the store's document
 * writes (`WriterMethod`), whose transactions and fsyncs (`synchronous = FULL`) would otherwise block the event loop
 * that relays and acks.
 *
 * Group commit across calls: the requests that arrived while the previous commit ran (a join storm's
 * `openSession`s, leases and seeds, a batch of updates, the sweep's touches) run in one transaction, one fsync,
 * each call inside it on a savepoint of its own (better-sqlite3 nests a transaction function as a savepoint), in
 * arrival order. A call that throws rolls back its savepoint alone and answers its error; the others commit. Every
 * answer is posted only after the outer COMMIT returned, and when that COMMIT fails every call of the batch answers
 * the error: a call never reports a write that is not on disk.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SqliteStore } from './sqlite.js';
import { WRITER_READY, type WriterData, type WriterReply, type WriterRequest } from './sqlite-writer-thread.js';

const data = workerData as WriterData;
const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** `writeInWorker: false`: this connection writes itself. */
function open(): SqliteStore {
  try {
    return new SqliteStore(data.path, { busyTimeoutMs: data.busyTimeoutMs, writeInWorker: false });
  } catch (error) {
    // A plain Error reaches the main thread with its message (better-sqlite3's own errors arrive as `{ code }`).
    throw new Error(`the writer thread could not open ${data.path}: ${message(error)}`);
  }
}
const store = open();
// Loaded and connected: the server may listen (`SqliteWriterThread.warmUp`).
parentPort!.postMessage(WRITER_READY);

let queued: WriterRequest[] = [];

parentPort!.on('message', (request: WriterRequest) => {
  queued.push(request);
  // Node delivers every message waiting on the port before the check phase: they all join this batch.
  if (queued.length === 1) setImmediate(commitQueued);
});

const answer = (reply: WriterReply): void => parentPort!.postMessage(reply);

function commitQueued(): void {
  const requests = queued;
  queued = [];
  let results: Array<Promise<unknown>>;
  try {
    // The store's methods run their statements synchronously when called; an error becomes their rejection.
    results = store.inOneTransaction(() =>
      requests.map((request) => (store[request.method] as (...args: unknown[]) => Promise<unknown>).apply(store, request.args)),
    );
  } catch (error) {
    for (const request of requests) answer({ id: request.id, error: message(error) });
    return;
  }
  requests.forEach((request, i) =>
    results[i]!.then(
      (value) => answer({ id: request.id, value }),
      (error: unknown) => answer({ id: request.id, error: message(error) }),
    ),
  );
}
