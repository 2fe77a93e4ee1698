/**
 * The pull feed `GET /api/v2/changes` against real servers: a reader paging while 1,000 changes are written
 * (and across a restart) ends up having seen every document at its final version, with versions only growing.
 * Once on one server (SQLite), once on two servers sharing Postgres + Redis, writers and reader spread over both.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Cluster } from '../helpers/cluster.js';
import { ServerProcess } from '../helpers/server-process.js';
import { services } from '../helpers/services.js';

interface Page {
  changes: Array<{ docId: string; version: number; cursor: string; deleted: boolean }>;
  next: string;
}

interface Deployment {
  urls(): string[];
  restart(): Promise<void>;
}

async function pageThroughChanges(deployment: Deployment, apiKey: string, secret: string): Promise<void> {
  const auth = { Authorization: `Bearer ${secret}` };
  let turn = 0;
  const url = (): string => deployment.urls()[turn++ % deployment.urls().length]!;
  const feed = async (since: string, limit = 37): Promise<Page> => {
    const res = await fetch(`${url()}/api/v2/changes?apiKey=${apiKey}&since=${since}&limit=${limit}`, { headers: auth });
    assert.equal(res.status, 200);
    return (await res.json()) as Page;
  };

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
          const res = await fetch(`${url()}/api/v2/docs/${docId}?apiKey=${apiKey}`, {
            method: 'PUT',
            headers: { ...auth, 'Content-Type': 'text/plain' },
            body: `${docId} round ${round}`,
          });
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

  // The cursor survives a restart.
  await deployment.restart();
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
}

test('pull feed: pages through 1,000 changes written meanwhile with no gap, and survives a restart', async (t) => {
  let server = await ServerProcess.start();
  t.after(() => server.cleanup());
  const { apiKey, secret } = await server.createKey({ name: 'feed' });
  const auth = { Authorization: `Bearer ${secret}` };
  assert.equal((await fetch(`${server.url}/api/v2/changes?apiKey=${apiKey}`)).status, 401, 'the secret is required');
  assert.equal((await fetch(`${server.url}/api/v2/changes?apiKey=${apiKey}&since=x`, { headers: auth })).status, 400);
  assert.equal((await fetch(`${server.url}/api/v2/changes?apiKey=${apiKey}&limit=0`, { headers: auth })).status, 400);
  await pageThroughChanges(
    {
      urls: () => [server.url],
      restart: async () => {
        server = await server.restart();
      },
    },
    apiKey,
    secret,
  );
});

if (await services('postgres', 'redis')) {
  test('pull feed on two servers sharing Postgres: writes and pages on both, no gap, across a restart of one', async (t) => {
    const cluster = await Cluster.start(2);
    t.after(() => cluster.cleanup());
    const { apiKey, secret } = await cluster.createKey({ name: 'feed' });
    await pageThroughChanges(
      {
        urls: () => cluster.urls,
        restart: async () => {
          cluster.servers[1] = await cluster.servers[1]!.restart();
        },
      },
      apiKey,
      secret,
    );
  });
}
