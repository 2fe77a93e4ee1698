/**
 * RELIABILITY.md L2 across two servers, short form: 20 documents × 3 authors × 10 s, each document's authors
 * spread over both servers, each author typing a token every 400 ms (L1's pace). Bars: p95 ack < 500 ms,
 * 0 disconnects, every document converged (its clients and a fresh load from the store).
 * WAVE_LONG=1 runs the full L2: 200 documents × 3 authors × 30 s.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Cluster } from '../helpers/cluster.js';
import { EditingClient, percentile, seededRandom } from '../helpers/editing-client.js';
import { pollUntil } from '../helpers/poll.js';
import { services, uniqueDocId } from '../helpers/services.js';

const LONG = process.env['WAVE_LONG'] === '1';
const DOCS = LONG ? 200 : 20;
const AUTHORS = 3;
const DURATION_MS = LONG ? 30_000 : 10_000;
const EDIT_INTERVAL_MS = 400;

if (await services('postgres', 'redis')) {
  test(`[L2] ${DOCS} docs × ${AUTHORS} authors × ${DURATION_MS / 1000} s on 2 servers: p95 ack < 500 ms, 0 disconnects, converged`, { timeout: DURATION_MS + 120_000 }, async (t) => {
    const seed = Number(process.env['WAVE_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
    t.diagnostic(`seed ${seed} (repeat with WAVE_SEED=${seed})`);
    const random = seededRandom(seed);
    const cluster = await Cluster.start(2);
    t.after(() => cluster.cleanup());
    const { apiKey } = await cluster.createKey({ name: 'l2' });

    const docs = Array.from({ length: DOCS }, (_, d) => {
      const docId = uniqueDocId(`l2-${d}`);
      // Authors of one document on both servers: every document's edits cross servers.
      const authors = Array.from(
        { length: AUTHORS },
        (_, a) => new EditingClient({ urls: cluster.urls, first: d + a, apiKey, docId, name: `d${d}a${a}`, random, reconnect: false }),
      );
      return { docId, authors };
    });
    const all = docs.flatMap((d) => d.authors);
    t.after(() => Promise.all(all.map((c) => c.close())));
    await Promise.all(all.map((c) => c.waitSynced(20_000)));

    const end = performance.now() + DURATION_MS;
    await Promise.all(
      all.map(async (client, i) => {
        // Start phases spread over one interval, as real typists are not synchronised.
        await new Promise((r) => setTimeout(r, random() * EDIT_INTERVAL_MS));
        for (let n = 0; performance.now() < end; n++) {
          client.insert(`[${i}:${n}]`);
          await new Promise((r) => setTimeout(r, EDIT_INTERVAL_MS));
        }
      }),
    );
    await Promise.all(all.map((c) => c.waitAllAcked(30_000)));

    const acks = all.flatMap((c) => c.edits.map((e) => e.ackedAt! - e.at));
    const p95 = percentile(acks, 95);
    t.diagnostic(`${acks.length} edits; ack p50 ${percentile(acks, 50).toFixed(1)} ms, p95 ${p95.toFixed(1)} ms, p99 ${percentile(acks, 99).toFixed(1)} ms`);
    // Non-trivial: at least half the nominal count (timers run late on a busy machine; the bars still apply).
    assert.ok(acks.length >= DOCS * AUTHORS * (DURATION_MS / EDIT_INTERVAL_MS) * 0.5, `non-trivial run: ${acks.length} edits`);
    assert.ok(p95 < 500, `p95 ack ${p95.toFixed(1)} ms < 500 ms`);
    assert.equal(all.reduce((n, c) => n + c.unexpectedCloses, 0), 0, '0 disconnects');

    for (const { docId, authors } of docs) {
      await pollUntil(() => authors.every((c) => c.text.toString() === authors[0]!.text.toString()), `convergence of ${docId}`, 10_000);
      const text = authors[0]!.text.toString();
      assert.equal((text.match(/\[/g) ?? []).length, authors.reduce((n, c) => n + c.edits.length, 0), `${docId}: every edit once`);
      assert.equal(await cluster.storedText({ account: 'l2', docId }), text, `${docId}: store equals clients`);
    }
  });
}
