/**
 * The pull feed `GET /api/v2/changes` against a real server: a reader paging while 1,000 changes are written
 * (and across a restart) ends up having seen every document at its final version, with versions only growing.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerProcess } from '../helpers/server-process.js';

interface Page {
  changes: Array<{ docId: string; version: number; cursor: string; deleted: boolean }>;
  next: string;
}

test('pull feed: pages through 1,000 changes written meanwhile with no gap, and survives a restart', async (t) => {
  let server = await ServerProcess.start();
  t.after(() => server.cleanup());
  const { apiKey, secret } = await server.createKey({ name: 'feed' });
  const auth = { Authorization: `Bearer ${secret}` };
  const feed = async (since: string, limit = 37): Promise<Page> => {
    const res = await fetch(`${server.url}/api/v2/changes?apiKey=${apiKey}&since=${since}&limit=${limit}`, { headers: auth });
    assert.equal(res.status, 200);
    return (await res.json()) as Page;
  };

  assert.equal((await fetch(`${server.url}/api/v2/changes?apiKey=${apiKey}`)).status, 401, 'the secret is required');
  assert.equal((await fetch(`${server.url}/api/v2/changes?apiKey=${apiKey}&since=x`, { headers: auth })).status, 400);
  assert.equal((await fetch(`${server.url}/api/v2/changes?apiKey=${apiKey}&limit=0`, { headers: auth })).status, 400);

  const seen = new Map<string, number>();
  let cursor = '0';
  const readAll = async (): Promise<void> => {
    for (;;) {
      const page = await feed(cursor);
      for (const c of page.changes) {
        assert.ok(c.version > (seen.get(c.docId) ?? 0), `${c.docId}: version ${c.version} after ${seen.get(c.docId)}`);
        seen.set(c.docId, c.version);
      }
      assert.ok(BigInt(page.next) >= BigInt(cursor));
      cursor = page.next;
      if (page.changes.length === 0) return;
    }
  };

  // 100 documents x 10 PUTs = 1,000 stored changes, 10 writers at once, a reader paging all along.
  const docs = Array.from({ length: 100 }, (_, i) => `feed-${i}`);
  const write = async (round: number): Promise<void> => {
    const queue = [...docs];
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        for (let docId = queue.shift(); docId !== undefined; docId = queue.shift()) {
          const res = await fetch(`${server.url}/api/v2/docs/${docId}?apiKey=${apiKey}`, { method: 'PUT', headers: { ...auth, 'Content-Type': 'text/plain' }, body: `${docId} round ${round}` });
          assert.equal(res.status, 204);
        }
      }),
    );
  };
  let writing = true;
  const reader = (async () => {
    while (writing) await readAll();
  })();
  for (let round = 0; round < 5; round++) await write(round);
  writing = false;
  await reader;

  // The cursor survives a restart of the server.
  server = await server.restart();
  for (let round = 5; round < 10; round++) await write(round);
  await readAll();

  const final = new Map<string, number>();
  let from = '0';
  for (;;) {
    const page = await feed(from, 1000);
    for (const c of page.changes) final.set(c.docId, c.version);
    if (page.changes.length === 0) break;
    from = page.next;
  }
  assert.equal(final.size, 100);
  for (const docId of docs) {
    assert.ok(final.get(docId)! >= 10, `${docId}: one version per stored change (${final.get(docId)})`);
    assert.equal(seen.get(docId), final.get(docId), `${docId}: the reader saw the final version`);
  }
});
