/**
 * RELIABILITY.md D5 in CI form: 2 servers on one Postgres and one Redis, 10 protocol clients split across them,
 * a few hundred edits each; one server is SIGKILLed mid-run and its clients reconnect to the other.
 * Bars: cross-server propagation p99 < 250 ms; converged (every client and a doc freshly loaded from the store);
 * 0 lost acked edits. WAVE_LONG=1 runs the full 500 edits per client. WAVE_SEED=N repeats a run.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Cluster } from '../helpers/cluster.js';
import type { ServerProcess } from '../helpers/server-process.js';
import { EditingClient, percentile, seededRandom } from '../helpers/editing-client.js';
import { pollUntil } from '../helpers/poll.js';
import { services, uniqueDocId } from '../helpers/services.js';

const LONG = process.env['WAVE_LONG'] === '1';
const CLIENTS = 10;
const EDITS = LONG ? 500 : 250;
/** Mean pause between two edits of one client: ~25 edits/s each, 250 edits/s in all. */
const EDIT_INTERVAL_MS = 40;
/** Share of all edits made before server 0 is killed. */
const KILL_AT = 0.4;
const TOKEN = /\[c\d+:\d+\]/g;

if (await services('postgres', 'redis')) {
  test('[D5] 2 servers, 10 clients, one server SIGKILLed mid-run: p99 cross-server < 250 ms, converged, 0 lost acked edits', { timeout: 180_000 }, async (t) => {
    const seed = Number(process.env['WAVE_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
    t.diagnostic(`seed ${seed} (repeat with WAVE_SEED=${seed})`);
    const random = seededRandom(seed);

    const cluster = await Cluster.start(2);
    t.after(() => cluster.cleanup());
    const { apiKey } = await cluster.createKey({ name: 'd5' });
    const docId = uniqueDocId('d5');

    const clients = Array.from(
      { length: CLIENTS },
      (_, i) => new EditingClient({ urls: cluster.urls, first: i % 2, apiKey, docId, name: `c${i}`, random }),
    );
    t.after(() => Promise.all(clients.map((c) => c.close())));
    await Promise.all(clients.map((c) => c.waitSynced()));

    // Propagation: from an edit sent on one server to its arrival at a client on the other, both before the kill
    // (afterwards every client is on the same server, and edits caught in the crash arrive by resync instead).
    const sent = new Map<string, { at: number; server: number }>();
    const samples: number[] = [];
    const local: number[] = [];
    let killedAt = Infinity;
    for (const client of clients) {
      client.onRemoteInsert = (inserted) => {
        const now = performance.now();
        if (now >= killedAt) return;
        for (const [token] of inserted.matchAll(TOKEN)) {
          const origin = sent.get(token);
          if (origin) (origin.server !== client.serverIndex ? samples : local).push(now - origin.at);
        }
      };
    }

    let made = 0;
    let kill: ReturnType<ServerProcess['kill']> | undefined;
    const run = async (client: EditingClient, index: number): Promise<void> => {
      const mine: string[] = [];
      for (let n = 0; n < EDITS; n++) {
        await new Promise((r) => setTimeout(r, EDIT_INTERVAL_MS * (0.5 + random())));
        if (mine.length > 3 && random() < 0.15) {
          const victim = mine.splice(Math.floor(random() * mine.length), 1)[0]!;
          client.delete(victim);
        } else {
          const token = `[c${index}:${n}]`;
          if (client.synced) sent.set(token, { at: performance.now(), server: client.serverIndex });
          client.insert(token);
          mine.push(token);
        }
        if (++made === Math.floor(KILL_AT * CLIENTS * EDITS)) {
          killedAt = performance.now();
          kill = cluster.servers[0]!.kill('SIGKILL');
        }
      }
    };
    await Promise.all(clients.map(run));
    assert.ok(kill, 'server 0 was killed');
    assert.equal((await kill).signal, 'SIGKILL');

    // Every client of the killed server moved to the other one; every edit is acked there.
    for (const [i, client] of clients.entries()) {
      if (i % 2 === 0) assert.ok(client.unexpectedCloses >= 1, `c${i} lost its server`);
      assert.equal(client.serverIndex, 1, `c${i} ends on the surviving server`);
    }
    await Promise.all(clients.map((c) => c.waitAllAcked(30_000)));
    await pollUntil(() => clients.every((c) => c.text.toString() === clients[0]!.text.toString()), 'every client to converge', 10_000);
    const text = clients[0]!.text.toString();
    const stored = await cluster.storedText({ account: 'd5', docId });
    assert.equal(stored, text, 'a doc freshly loaded from the store equals the clients');

    // 0 lost acked edits: acked inserts present exactly once unless an acked delete removed them.
    const counts = new Map<string, number>();
    for (const [token] of stored.matchAll(TOKEN)) counts.set(token, (counts.get(token) ?? 0) + 1);
    let inserts = 0;
    for (const client of clients) {
      const deleted = new Set(client.edits.filter((e) => e.kind === 'delete' && e.ackedAt !== undefined).map((e) => e.token));
      for (const edit of client.edits) {
        if (edit.kind !== 'insert' || edit.ackedAt === undefined) continue;
        inserts++;
        assert.equal(counts.get(edit.token) ?? 0, deleted.has(edit.token) ? 0 : 1, `acked edit ${edit.token}`);
      }
    }
    assert.ok(inserts > CLIENTS * EDITS * 0.7, `non-trivial run: ${inserts} acked inserts`);
    assert.ok(counts.size > CLIENTS * EDITS * 0.5, `non-trivial document: ${counts.size} tokens`);

    const p50 = percentile(samples, 50);
    const p99 = percentile(samples, 99);
    t.diagnostic(`cross-server propagation: ${samples.length} samples, p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${percentile(samples, 100).toFixed(1)} ms`);
    t.diagnostic(`same-server relay (for comparison): p50 ${percentile(local, 50).toFixed(1)} ms, p99 ${percentile(local, 99).toFixed(1)} ms`);
    const acks = clients.flatMap((c) => c.edits.filter((e) => e.ackedAt !== undefined && e.at < killedAt).map((e) => e.ackedAt! - e.at));
    t.diagnostic(`ack latency before the kill: p50 ${percentile(acks, 50).toFixed(1)} ms, p99 ${percentile(acks, 99).toFixed(1)} ms`);
    assert.ok(samples.length > 500, `enough cross-server samples: ${samples.length}`);
    assert.ok(p99 < 250, `cross-server p99 ${p99.toFixed(1)} ms < 250 ms`);
  });
}
