/**
 * [P4][P5] across servers: the first clients of a document land on two servers at the same instant. The seed lease
 * lives in the store, so exactly one of them seeds; the clients waiting on the other server learn of the seed
 * through the fan-out and get the seeded content, once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Cluster } from '../helpers/cluster.js';
import { services, uniqueDocId } from '../helpers/services.js';
import { TestClient } from '../helpers/test-client.js';

if (await services('postgres', 'redis')) {
  test('[P4][P5] 10 clients on 2 servers start at once on an empty document: one seed, content once, everywhere', { timeout: 60_000 }, async (t) => {
    const cluster = await Cluster.start(2);
    t.after(() => cluster.cleanup());
    const { apiKey } = await cluster.createKey({ name: 'race2' });
    const docId = uniqueDocId('race');

    const offered = Array.from({ length: 10 }, (_, i) => `offered seed #${i}: ${'abcdefghij'.slice(0, i + 1)}\n`);
    // Open every socket first, then send all Hellos in the same tick: the joins race on both servers.
    const clients = offered.map(
      (seedText, i) => new TestClient({ url: cluster.urls[i % 2]!, apiKey, docId, seedText, hello: false }),
    );
    t.after(() => Promise.all(clients.map((c) => c.close())));
    await Promise.all(clients.map((c) => c.opened));
    for (const client of clients) client.sendHello();
    // The waiting side hears of the seed through Redis at once; 5 s is far below the 10 s lease expiry, so a
    // pass cannot come from a lease handed over after a timeout.
    await Promise.all(clients.map((c) => c.waitSynced(5_000)));

    const seedRequests = clients.flatMap((c) => c.seedRequests);
    assert.equal(seedRequests.length, 1, 'exactly one SeedRequest across both servers');
    assert.deepEqual(new Set(clients.map((c) => c.welcome?.epoch)), new Set([seedRequests[0]]), 'everyone is in the seeded epoch');

    const seeder = clients.find((c) => c.seedRequests.length === 1)!;
    const texts = new Set(clients.map((c) => c.text.toString()));
    assert.deepEqual([...texts], [seeder.options.seedText], 'every client has exactly the seeder\'s offer');
    await seeder.waitAllAcked();
    assert.equal(await cluster.storedText({ account: 'race2', docId }), seeder.options.seedText, 'stored once');

    // An edit on either server reaches the clients of the other one.
    const writer = clients.find((c) => c !== seeder && c.options.url !== seeder.options.url)!;
    writer.insert(0, 'edited on the other server\n');
    await writer.waitAllAcked();
    const expected = writer.text.toString();
    await Promise.all(clients.map((c) => c.waitFor(() => c.text.toString() === expected, 'the edit')));
  });
}
