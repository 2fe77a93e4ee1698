/**
 * Worker-thread entry of `SqliteAppender` (sqlite-appender.ts): its own better-sqlite3 connection to the server's
 * file (WAL: readers on the main thread see each commit as soon as it is done) runs `appendUpdates` and
 * `touchSessions`, whose transactions and fsyncs (`synchronous = FULL`) would otherwise block the event loop that
 * relays and acks. One request at a time, in arrival order (the commit queue sends its next batch only after the
 * previous one answered; a sweep's touches may come between two batches).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SqliteStore } from './sqlite.js';
import type { WriterData, WriterReply, WriterRequest } from './sqlite-appender.js';

const data = workerData as WriterData;
// `appendInWorker: false`: this connection writes itself.
const store = new SqliteStore(data.path, { busyTimeoutMs: data.busyTimeoutMs, appendInWorker: false });

parentPort!.on('message', (request: WriterRequest) => {
  // better-sqlite3 runs the transaction when the store method is called, so requests commit in arrival order.
  const done: Promise<WriterReply> =
    request.kind === 'append'
      ? store.appendUpdates(request.entries, request.now).then(() => ({ id: request.id }))
      : store.touchSessions(request.touches, request.now).then((ended) => ({ id: request.id, ended }));
  done.then(
    (reply) => parentPort!.postMessage(reply),
    (error: unknown) => parentPort!.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) } satisfies WriterReply),
  );
});
