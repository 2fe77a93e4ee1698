/**
 * Cold load from a snapshot (issue #29 item 3): a server replaces a document's stored updates by one snapshot once
 * more than `--compact-after-updates` were stored; killed (SIGKILL) after more edits, it restarts and loads the
 * snapshot plus the updates stored after it, and a new client reads every acked edit exactly once. On SQLite and,
 * when it is running, on Postgres.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import * as Y from 'yjs';
import { openStore } from '../../src/store/index.js';
import type { DocKey } from '../../src/store/types.js';
import { ServerProcess } from '../helpers/server-process.js';
import { dropSchema, newSchemaName, postgresStoreUrl, services } from '../helpers/services.js';
import { TestClient } from '../helpers/test-client.js';

/** Small, so that a test's few dozen edits make a snapshot. */
const COMPACT_AFTER = 20;

/** The stored rows of the document's current epoch, read with a store of the test's own. */
async function storedRows(storeUrl: string, doc: DocKey): Promise<Uint8Array[]> {
  const store = openStore(storeUrl);
  try {
    const session = await store.getSession(doc);
    return session ? (await store.loadDocument(doc, session.epoch)).updates : [];
  } finally {
    await store.close();
  }
}

function textOf(updates: Uint8Array[]): string {
  const doc = new Y.Doc();
  for (const update of updates) Y.applyUpdate(doc, update);
  return doc.getText('text').toString();
}

async function snapshotRestart(store: string | undefined): Promise<void> {
  let server = await ServerProcess.start({ ...(store !== undefined ? { store } : {}), extraArgs: ['--compact-after-updates', String(COMPACT_AFTER)] });
  try {
    const storeUrl = server.storeUrl;
    const { apiKey } = await server.createKey({ name: 'snap' });
    const doc = { account: 'snap', docId: 'cold' };
    const writer = await TestClient.connect({ url: server.url, apiKey, docId: doc.docId, seedText: 'base\n' });
    await writer.waitSynced();
    // One acked edit at a time: each is its own stored row; with the seed, the count passes the threshold.
    for (let i = 0; i < COMPACT_AFTER; i++) {
      writer.insert(writer.text.length, `before ${i}\n`);
      await writer.waitAllAcked();
    }
    // The snapshot is written in the background: wait until the store holds it (fewer rows than edits).
    let rows: Uint8Array[] = [];
    for (let polls = 0; (rows = await storedRows(storeUrl, doc)).length > 1; polls++) {
      assert.ok(polls < 200, `no snapshot after ${COMPACT_AFTER + 1} stored updates (${rows.length} rows)`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // Later edits are stored after the snapshot, as rows of their own.
    for (let i = 0; i < 3; i++) {
      writer.insert(writer.text.length, `after ${i}\n`);
      await writer.waitAllAcked();
    }
    const acked = writer.text.toString();
    rows = await storedRows(storeUrl, doc);
    assert.equal(rows.length, 4, 'the snapshot plus the three later updates');
    assert.equal(textOf(rows), acked);

    await server.kill('SIGKILL');
    await writer.waitClosed();
    server = await server.restart();
    const reader = await TestClient.connect({ url: server.url, apiKey, docId: doc.docId, seedText: 'MUST NOT SEED\n' });
    await reader.waitSynced();
    assert.deepEqual(reader.seedRequests, []);
    assert.equal(reader.text.toString(), acked, 'every acked edit, once, in order');
    await reader.close();
  } finally {
    await server.cleanup();
  }
}

describe('cold load from a snapshot plus later updates, after SIGKILL', () => {
  it('SQLite', async () => {
    await snapshotRestart(undefined);
  });

  it('a document stored as one row (its seed) is sent as stored, then edited and loaded again', async () => {
    let server = await ServerProcess.start();
    try {
      const { apiKey } = await server.createKey({ name: 'one' });
      const seeder = await TestClient.connect({ url: server.url, apiKey, docId: 'one-row', seedText: 'only the seed' });
      await seeder.waitSynced();
      await seeder.waitAllAcked();
      server = await server.restart();
      const [a, b] = await Promise.all(['a', 'b'].map((name) => TestClient.connect({ url: server.url, apiKey, docId: 'one-row', user: { name } })));
      await Promise.all([a!.waitSynced(), b!.waitSynced()]);
      assert.equal(a!.text.toString(), 'only the seed');
      assert.equal(b!.text.toString(), 'only the seed');
      a!.insert(0, '> ');
      await a!.waitAllAcked();
      await b!.waitFor(() => b!.text.toString() === '> only the seed', 'the edit');
      const late = await TestClient.connect({ url: server.url, apiKey, docId: 'one-row' });
      await late.waitSynced();
      assert.equal(late.text.toString(), '> only the seed', 'a join after a change gets the changed document');
      await Promise.all([a!.close(), b!.close(), late.close(), seeder.close()]);
    } finally {
      await server.cleanup();
    }
  });
});

if (await services('postgres')) {
  describe('cold load from a snapshot plus later updates, after SIGKILL (Postgres)', () => {
    const schema = newSchemaName();
    after(() => dropSchema(schema));
    it('Postgres', async () => {
      await snapshotRestart(postgresStoreUrl(schema));
    });
  });
}
