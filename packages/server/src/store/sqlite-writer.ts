/**
 * Worker-thread entry of `SqliteWriterThread` (sqlite-writer-thread.ts): its own better-sqlite3 connection to the
 * server's file (WAL: readers on the main thread see each commit as soon as it is done) runs the store's document
 * writes (`WriterMethod`), whose transactions and fsyncs (`synchronous = FULL`) would otherwise block the event loop
 * that relays and acks. One request at a time, in arrival order: better-sqlite3 runs a transaction when its store
 * method is called, so requests commit in the order they were posted (the commit queue sends its next batch only
 * after the previous one answered; joins, seeds and sweeps come between batches).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SqliteStore } from './sqlite.js';
import type { WriterData, WriterReply, WriterRequest } from './sqlite-writer-thread.js';

const data = workerData as WriterData;
// `writeInWorker: false`: this connection writes itself.
const store = new SqliteStore(data.path, { busyTimeoutMs: data.busyTimeoutMs, writeInWorker: false });

parentPort!.on('message', (request: WriterRequest) => {
  const method = store[request.method] as (...args: unknown[]) => Promise<unknown>;
  method.apply(store, request.args).then(
    (value) => parentPort!.postMessage({ id: request.id, value } satisfies WriterReply),
    (error: unknown) => parentPort!.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) } satisfies WriterReply),
  );
});
