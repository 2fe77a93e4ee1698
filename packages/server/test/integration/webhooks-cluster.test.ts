/**
 * Webhooks from two real servers on one Postgres and one Redis: each event is delivered by one of them (the
 * store's lease), and the pending delivery of a server killed mid-attempt is taken over by the other after the
 * lease expires, with the same webhook-id.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Cluster } from '../helpers/cluster.js';
import { adminQuery, services, uniqueDocId } from '../helpers/services.js';
import { TestClient } from '../helpers/test-client.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

if (await services('postgres', 'redis')) {
  test('two servers: each event delivered once; a killed server\'s leased event is delivered by the other', async (t) => {
    // --webhook-timeout 2: a lease lasts 2 x 2 + 5 = 9 s.
    const cluster = await Cluster.start(2, { extraArgs: ['--webhook-debounce', '0.3', '--webhook-max-wait', '5', '--webhook-timeout', '2'] });
    const receiver = await WebhookReceiver.start();
    t.after(async () => {
      await receiver.close();
      await cluster.cleanup();
    });
    const { apiKey } = await cluster.createKey({ name: 'hooks' });
    const added = await cluster.servers[0]!.cli(['webhooks', 'add', '--key', apiKey, '--url', receiver.url, '--events', 'doc.changed', '--json']);
    receiver.secret = (JSON.parse(added.stdout) as { secret: string }).secret;

    // 1. Twenty documents edited through both servers.
    const expected = new Map<string, string>();
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const docId = uniqueDocId(`wh${i}`);
        const client = await TestClient.connect({ url: cluster.urls[i % 2]!, apiKey, docId, seedText: `doc ${i}\n` });
        await client.waitSynced();
        client.insert(client.text.length, `edited on server ${i % 2}\n`);
        await client.waitAllAcked();
        expected.set(docId, client.text.toString());
        await client.close();
      }),
    );
    const latest = (docId: string) => receiver.delivered.filter((d) => d.body.data.docId === docId).at(-1);
    await receiver.waitFor(() => [...expected].every(([docId, text]) => latest(docId)?.body.data['text'] === text) || undefined, 'every document delivered');
    const perId = new Map<string, number>();
    for (const r of receiver.requests) perId.set(r.id, (perId.get(r.id) ?? 0) + 1);
    assert.deepEqual([...perId.values()].filter((n) => n > 1), [], 'no event delivered twice');
    assert.ok(receiver.requests.every((r) => r.verified));

    // 2. The receiver holds the next request open; the server that sent it dies; the other one takes over.
    receiver.hang = true;
    const docId = uniqueDocId('handover');
    const writer = await TestClient.connect({ url: cluster.urls[0]!, apiKey, docId, seedText: 'handed over\n' });
    await writer.waitSynced();
    await writer.waitAllAcked();
    const hung = await receiver.waitFor((r) => r.requests.find((d) => d.body.data.docId === docId), 'the attempt that hangs');
    const store = cluster.openStore();
    try {
      assert.equal((await store.findEvent(hung.id))?.state, 'pending');
    } finally {
      await store.close();
    }
    const [row] = await adminQuery<{ lease_holder: string | null }>(`SELECT lease_holder FROM "${cluster.schema}".webhook_outbox WHERE id = $1`, [hung.id]);
    const holder = row?.lease_holder ?? null;
    const victim = cluster.servers.findIndex((s) => holder !== null && s.stdout.includes(`(server ${holder})`));
    assert.ok(victim >= 0, `the lease holder ${holder} is one of the servers`);
    await writer.close();
    await cluster.servers[victim]!.kill('SIGKILL');
    receiver.hang = false;
    const delivered = await receiver.waitFor((r) => r.delivered.find((d) => d.id === hung.id), 'the taken-over delivery');
    assert.equal(delivered.body.data['text'], 'handed over\n');
  });
}
