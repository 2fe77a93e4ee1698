/**
 * What Wave's durable write of one update costs in CPU, away from network and scheduling noise: Wave's own
 * `SqliteStore` (packages/server/dist) appending on this thread (`writeInWorker: false`, so the work is counted by
 * `process.cpuUsage`), as its writer thread does under the many-documents load: 1,000 documents with sessions,
 * 30 stored updates each, then batches of 10 one-character updates of documents drawn at random (2,000 updates/s in
 * the server's 5 ms group-commit windows), each batch one `appendUpdates` call: one transaction, one fsync.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const DOCS = 1_000;
const BATCH = 10;
const BATCHES = 2_000;
const ROWS_PER_DOC_BEFORE = 30;

export interface StoreWriteCost {
  /** CPU per update, µs: user and system (the WAL writes and the fsync are system time). */
  userUs: number;
  systemUs: number;
  batch: number;
  docs: number;
}

export async function storeWriteProbe(): Promise<StoreWriteCost | null> {
  const dir = mkdtempSync(join(tmpdir(), 'wave-bench-store-'));
  try {
    const { SqliteStore } = (await import('../../packages/server/dist/store/sqlite.js' as string)) as typeof import('../../packages/server/dist/store/sqlite.js');
    const store = new SqliteStore(join(dir, 'wave.db'), { writeInWorker: false });
    const docs = Array.from({ length: DOCS }, (_, i) => ({ account: 'acct_bench', docId: `store-probe-${i}` }));
    for (const doc of docs) await store.openSession(doc, { now: Date.now(), graceMs: 60_000, persistent: false });
    const update = new Uint8Array(30).fill(7);
    for (let i = 0; i < ROWS_PER_DOC_BEFORE; i++) await store.appendUpdates(docs.map((doc) => ({ doc, epoch: 1, update })));
    const before = process.cpuUsage();
    for (let b = 0; b < BATCHES; b++) {
      await store.appendUpdates(Array.from({ length: BATCH }, () => ({ doc: docs[Math.floor(Math.random() * DOCS)]!, epoch: 1, update })));
    }
    const used = process.cpuUsage(before);
    await store.close();
    const updates = BATCHES * BATCH;
    return { userUs: used.user / updates, systemUs: used.system / updates, batch: BATCH, docs: DOCS };
  } catch {
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
