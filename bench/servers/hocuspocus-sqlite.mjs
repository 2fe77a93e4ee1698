// The durable Hocuspocus peer: the Server with its Database extension (@hocuspocus/extension-database, Hocuspocus's
// documented way to store), whose `fetch`/`store` callbacks read and write one row per document in better-sqlite3
// (WAL, synchronous=FULL: the same durability per commit as Wave's SQLite store).
//
// Store timing is Hocuspocus's default, as its users get it: `onStoreDocument` (the extension's `store`, with the
// whole document encoded by Y.encodeStateAsUpdate) runs once a document has had no change for `debounce` (2 s), or
// on the first change `maxDebounce` (10 s) after its first unstored change, or when its last client disconnects.
// Edits are applied, relayed and acknowledged (SyncStatus) before that: nothing is acked after a durable write.
// better-sqlite3 runs each upsert synchronously, on the event loop that relays the edits.
import { Server } from '@hocuspocus/server';
import { Database } from '@hocuspocus/extension-database';
import SQLite from 'better-sqlite3';

const file = process.env.SQLITE_FILE;
if (!file) throw new Error('SQLITE_FILE is required');
const db = new SQLite(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec('CREATE TABLE IF NOT EXISTS documents (name TEXT PRIMARY KEY, data BLOB NOT NULL)');
const select = db.prepare('SELECT data FROM documents WHERE name = ?');
const upsert = db.prepare('INSERT INTO documents (name, data) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET data = excluded.data');
let stores = 0;

const server = new Server({
  address: process.env.HOST ?? '127.0.0.1',
  port: Number(process.env.PORT ?? 0),
  quiet: true,
  extensions: [
    new Database({
      fetch: async ({ documentName }) => select.get(documentName)?.data ?? null,
      store: async ({ documentName, state }) => {
        upsert.run(documentName, state);
        stores++;
      },
    }),
  ],
});
// The bench reads how many stores ran (SIGUSR2 → one line on stdout) to report the store rate next to the latencies;
// the handler is in place before the bench learns that the server listens.
process.on('SIGUSR2', () => console.log(`stores ${stores}`));
await server.listen();
console.log(`listening on http://${process.env.HOST ?? '127.0.0.1'}:${server.address.port}`);
