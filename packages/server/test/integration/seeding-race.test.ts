import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerProcess } from '../helpers/server-process.js';
import { TestClient } from '../helpers/test-client.js';

test('[P4][P5] 10 clients start at once on an empty document: one SeedRequest, one seed, no duplicate', async (t) => {
  const server = await ServerProcess.start();
  t.after(() => server.cleanup());
  const { apiKey } = await server.createKey({ name: 'race' });

  const offered = Array.from({ length: 10 }, (_, i) => `offered seed #${i}: ${'abcdefghij'.slice(0, i + 1)}\n`);
  // Open every socket first, then send all Hellos in the same tick: the joins race on the server.
  const clients = offered.map((seedText) => new TestClient({ url: server.url, apiKey, docId: 'race-doc', seedText, hello: false }));
  t.after(() => Promise.all(clients.map((c) => c.close())));
  await Promise.all(clients.map((c) => c.opened));
  for (const client of clients) client.sendHello();
  await Promise.all(clients.map((c) => c.waitSynced()));

  const seedRequests = clients.flatMap((c) => c.seedRequests);
  assert.equal(seedRequests.length, 1, 'exactly one SeedRequest');
  const epochs = new Set(clients.map((c) => c.welcome?.epoch));
  assert.deepEqual([...epochs], [seedRequests[0]], 'everyone is in the seeded epoch');

  const texts = new Set(clients.map((c) => c.text.toString()));
  assert.equal(texts.size, 1, `all clients converged: ${[...texts].join(' | ')}`);
  const [text] = texts;
  const seeder = clients.find((c) => c.seedRequests.length === 1)!;
  assert.equal(text, seeder.options.seedText, 'the text is exactly the seeder\'s offer');
  for (const seed of offered) {
    const occurrences = text!.split(seed).length - 1;
    assert.equal(occurrences, seed === text ? 1 : 0, `occurrences of ${JSON.stringify(seed)}`);
  }
  // The seeder's Seed is acked once committed (P5, P9).
  await seeder.waitAllAcked();

  // A client joining later gets the document, not a SeedRequest.
  const late = await TestClient.connect({ url: server.url, apiKey, docId: 'race-doc', seedText: 'late offer' });
  t.after(() => late.close());
  await late.waitSynced();
  assert.deepEqual(late.seedRequests, []);
  assert.equal(late.text.toString(), text);
});
