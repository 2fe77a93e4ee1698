/**
 * Worker-thread entry of `SqliteAppender` (sqlite-appender.ts): its own better-sqlite3 connection to the server's
 * file (WAL: readers on the main thread see each commit as soon as it is done) runs `appendUpdates`, whose
 * transaction and fsync (`synchronous = FULL`) would otherwise block the event loop that relays and acks. One
 * request at a time, in arrival order: the commit queue sends the next batch only after the previous one answered.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SqliteStore } from './sqlite.js';
import type { AppendRequest, AppendReply, WriterData } from './sqlite-appender.js';

const data = workerData as WriterData;
// `appendInWorker: false`: this connection writes itself.
const store = new SqliteStore(data.path, { busyTimeoutMs: data.busyTimeoutMs, appendInWorker: false });

parentPort!.on('message', (request: AppendRequest) => {
  // better-sqlite3 runs the transaction when `appendUpdates` is called, so requests commit in arrival order.
  store.appendUpdates(request.entries, request.now).then(
    () => parentPort!.postMessage({ id: request.id } satisfies AppendReply),
    (error: unknown) => parentPort!.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) } satisfies AppendReply),
  );
});
