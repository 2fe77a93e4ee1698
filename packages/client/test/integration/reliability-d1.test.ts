/**
 * RELIABILITY.md D1: SIGKILL the server mid-burst (3 clients × 200 ops/s), restart it on the same store: every acked
 * edit present, none twice, converged ≤ 10 s. Real server process (SQLite, WAL, synchronous=FULL), real sockets,
 * `Session` cores bound to string editors. Each op inserts a unique token at a random place, so "present once" is a
 * count in the final text; "acked" is what the client's own `status.saved` said before the kill.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerProcess } from '../../../server/test/helpers/server-process.js';
import { labClient, type LabClient } from '../helpers/clients.js';
import { docFrom, docView } from '../helpers/string-editor.js';
import { freePort, hold, randomInt, rng, testSeed, until } from '../helpers/util.js';
import { WsLab } from '../helpers/ws-lab.js';

const CLIENTS = 3;
/** 200 ops/s per client. */
const OP_INTERVAL_MS = 5;
/** The burst runs this long before the kill, and on (offline) this long after it. */
const BEFORE_KILL_MS = 1_500;
const AFTER_KILL_MS = 500;
const CONVERGE_MS = 10_000;

interface Burst {
  client: LabClient;
  /** Tokens in the order typed, and for each the count of local updates right after it. */
  tokens: Array<{ token: string; updates: number }>;
}

test(`[D1] SIGKILL mid-burst (${CLIENTS} clients × 200 ops/s), restart on the same store: every acked edit once, converged ≤ 10 s`, { timeout: 120_000 }, async () => {
  const port = await freePort();
  let srv = await ServerProcess.start({ extraArgs: ['--port', String(port)] });
  const { apiKey } = await srv.createKey({ name: 'd1' });
  const seed = testSeed('D1', 'WAVE_D1_SEED');
  const random = rng(seed);
  const lab = new WsLab();
  const docId = 'd1-doc';
  const bursts: Burst[] = Array.from({ length: CLIENTS }, (_, i) => ({
    client: labClient({ lab, name: `d1u${i}`, url: srv.url, apiKey, docId, initial: 'D1 base\n', random: rng(seed + i + 1) }),
    tokens: [],
  }));
  const clients = bursts.map((b) => b.client);
  let fresh: LabClient | undefined;
  let typing = true;
  try {
    await Promise.all(clients.map((c) => c.started));
    await until('all saved after the seed', () => clients.every((c) => c.session.getStatus().saved));
    let serial = 0;
    const typists = bursts.map(async (b, i) => {
      while (typing) {
        const token = `d1.${i}.${serial++}`;
        const value = b.client.editor.value;
        // At a word boundary, so that tokens stay whole words.
        const spaces = [0, ...[...value.matchAll(/ /g)].map((m) => m.index! + 1)];
        b.client.editor.edit(spaces[randomInt(random, spaces.length)]!, 0, `${token} `);
        b.tokens.push({ token, updates: b.client.editor.localUpdates.length });
        await hold(OP_INTERVAL_MS);
      }
    });
    await hold(BEFORE_KILL_MS);
    const exit = await srv.kill('SIGKILL');
    assert.equal(exit.signal, 'SIGKILL');
    // What each client knew was acked at the moment of the kill (the ack count cannot grow while the server is dead).
    const ackedAtKill = clients.map((c) => c.ackedUpdates);
    await hold(AFTER_KILL_MS);
    typing = false;
    await Promise.all(typists);

    srv = await srv.restart();
    const restarted = Date.now();
    for (const c of clients) c.session.retryNow();
    await until(
      'every client online, saved and equal',
      () => clients.every((c) => c.session.getStatus().state === 'online' && c.session.getStatus().saved) &&
        new Set(clients.map((c) => c.editor.value)).size === 1,
      CONVERGE_MS + 20_000,
    );
    const convergedMs = Date.now() - restarted;

    fresh = labClient({ lab: new WsLab(), name: 'd1-fresh', url: srv.url, apiKey, docId, initial: 'NEVER SEEDS\n' });
    await fresh.started;
    const stored = fresh.editor.value;
    const words = stored.split(/\s+/);
    const count = new Map<string, number>();
    for (const w of words) count.set(w, (count.get(w) ?? 0) + 1);
    const acked = bursts.flatMap((b, i) => b.tokens.filter((t) => t.updates <= ackedAtKill[i]!).map((t) => t.token));
    const all = bursts.flatMap((b) => b.tokens.map((t) => t.token));
    const missingAcked = acked.filter((t) => count.get(t) !== 1);
    const twice = all.filter((t) => (count.get(t) ?? 0) > 1);
    console.log(
      `D1 seed ${seed}: ${all.length} edits (${Math.round(all.length / CLIENTS / ((BEFORE_KILL_MS + AFTER_KILL_MS) / 1000))} ops/s per client; ${acked.length} acked before the kill); converged ${convergedMs} ms after ` +
        `the restart; stored ${words.length} words`,
    );
    assert.deepEqual(missingAcked, [], 'every edit acked before the kill is stored exactly once');
    assert.deepEqual(twice, [], 'no edit stored twice');
    assert.ok(acked.length > CLIENTS * 50, `the burst had many acked edits before the kill (${acked.length})`);
    assert.doesNotMatch(stored, /NEVER SEEDS/, 'the session survived the crash: no re-seed');
    assert.deepEqual([count.get('D1'), count.get('base')], [1, 1], 'the seed once (tokens may land between its words)');
    // Every edit anyone made — acked or in flight at the kill or typed offline — reached the store once.
    assert.deepEqual(docView(fresh.editor.ydoc!), docView(docFrom(clients.flatMap((c) => c.editor.localUpdates))), 'the store holds every edit made, once');
    assert.ok(convergedMs <= CONVERGE_MS, `converged ${convergedMs} ms after the restart (bar ≤ ${CONVERGE_MS} ms)`);
  } finally {
    typing = false;
    await Promise.all([...clients, ...(fresh ? [fresh] : [])].map((c) => c.session.stop()));
    await srv.kill('SIGTERM');
    await srv.cleanup();
  }
});
