/**
 * RELIABILITY.md R2 (a client offline for a long time while editing, as is its peer) and R4 (a server frozen with
 * SIGSTOP: the socket stays open and silent, only the client's heartbeat can tell) — real `Session` cores over real
 * WebSockets against the real server process.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ServerProcess } from '../../../server/test/helpers/server-process.js';
import { labClient, type LabClient } from '../helpers/clients.js';
import { docFrom, docView } from '../helpers/string-editor.js';
import { LONG, hold, randomInt, randomText, rng, testSeed, until } from '../helpers/util.js';
import { WsLab } from '../helpers/ws-lab.js';

const started: ServerProcess[] = [];

after(async () => {
  for (const srv of started) {
    await srv.kill('SIGKILL');
    await srv.cleanup();
  }
});

async function server(): Promise<{ srv: ServerProcess; apiKey: string }> {
  const srv = await ServerProcess.start();
  started.push(srv);
  const { apiKey } = await srv.createKey({ name: 'reliability-r' });
  return { srv, apiKey };
}

/** An edit with a unique token (80 %) or a small delete (20 %). */
function editOnce(c: LabClient, random: () => number, n: number): void {
  const len = c.editor.value.length;
  if (random() < 0.8 || len < 10) {
    c.editor.edit(randomInt(random, len + 1), 0, `${c.name}.${n}${randomText(random, randomInt(random, 4))} `);
  } else {
    c.editor.edit(randomInt(random, len), 1 + randomInt(random, 5), '');
  }
}

// ---------------------------------------------------------------------------------------------------------------

const R2_OFFLINE_MS = Number(process.env['WAVE_R2_OFFLINE_S'] ?? (LONG ? 60 : 10)) * 1000;
const R2_EDITS = 1_000;
const R2_CONVERGE_MS = 5_000;

test(`[R2] one client offline ${R2_OFFLINE_MS / 1000} s with ${R2_EDITS} edits while another makes ${R2_EDITS}: converged ≤ 5 s after reconnect; offline → online, saved false while offline`, { timeout: R2_OFFLINE_MS + 90_000 }, async () => {
  const { srv, apiKey } = await server();
  const seed = testSeed('R2', 'WAVE_R2_SEED');
  const lab = new WsLab();
  const docId = `r2-${seed}`;
  const a = labClient({ lab, name: 'ra', url: srv.url, apiKey, docId, initial: 'R2 base\n' });
  const b = labClient({ lab, name: 'rb', url: srv.url, apiKey, docId, initial: 'R2 base\n' });
  /** Stopped in `finally` with a and b (a live session keeps the process alive). */
  const observers: LabClient[] = [];
  try {
    await Promise.all([a.started, b.started]);
    await until('both saved', () => a.session.getStatus().saved && b.session.getStatus().saved);

    // The network under a goes away: its socket dies and no new connection gets through.
    const link = lab.link(a.name);
    link.refuse(true);
    link.cut();
    const wentOffline = Date.now();
    await until('a offline', () => a.session.getStatus().state === 'offline');
    const statusesFrom = a.statuses.length;
    const randomA = rng(seed * 2 + 1);
    const randomB = rng(seed * 2 + 2);
    // Both type R2_EDITS edits spread over the outage, in steps of ~50 ms.
    const steps = Math.max(1, Math.floor(R2_OFFLINE_MS / 50));
    let doneA = 0;
    let doneB = 0;
    const offlineSamples: Array<{ state: string; saved: boolean; pending: number }> = [];
    for (let step = 1; step <= steps; step++) {
      const target = Math.round((R2_EDITS * step) / steps);
      for (; doneA < target; doneA++) editOnce(a, randomA, doneA);
      for (; doneB < target; doneB++) editOnce(b, randomB, doneB);
      offlineSamples.push(a.session.getStatus());
      await hold(Math.max(0, wentOffline + (R2_OFFLINE_MS * step) / steps - Date.now())); // pacing over the outage
    }
    const offlineStatus = a.session.getStatus();
    assert.equal(offlineStatus.state, 'offline', 'a is still offline after the outage');
    assert.equal(offlineStatus.saved, false, 'a is not saved while offline');
    assert.equal(offlineStatus.pending, a.editor.localUpdates.length - a.ackedUpdates, 'pending counts the offline edits');
    assert.ok(offlineStatus.pending >= R2_EDITS, `pending ${offlineStatus.pending} ≥ ${R2_EDITS}`);

    // The network is back: the browser's `online` event makes the session retry at once (coedit.ts).
    link.refuse(false);
    a.session.retryNow();
    await until('a online', () => a.session.getStatus().state === 'online', 40_000);
    const reconnected = Date.now();
    await until(
      'a and b converged and saved',
      () => a.editor.value === b.editor.value && a.session.getStatus().saved && b.session.getStatus().saved,
      R2_CONVERGE_MS + 15_000,
    );
    const convergedMs = Date.now() - reconnected;

    const fresh = labClient({ lab, name: 'r2-fresh', url: srv.url, apiKey, docId, initial: 'never seeds\n' });
    observers.push(fresh);
    await fresh.started;
    const typed = docFrom([...a.editor.localUpdates, ...b.editor.localUpdates]);
    const afterCut = a.statuses.slice(statusesFrom);
    const whileOffline = afterCut.filter((s) => s.state === 'offline');
    console.log(
      `R2: offline ${((reconnected - wentOffline) / 1000).toFixed(1)} s, ${doneA} + ${doneB} edits; converged ${convergedMs} ms after ` +
        `reconnect; a's states after the cut: ${[...new Set(afterCut.map((s) => s.state))].join(' → ')}; document ${fresh.editor.value.length} chars`,
    );
    assert.equal(doneA, R2_EDITS);
    assert.equal(doneB, R2_EDITS);
    assert.ok(offlineSamples.every((s) => s.state === 'offline' && !s.saved), 'a reported offline and unsaved during the whole outage');
    assert.ok(whileOffline.length > 0 && whileOffline.every((s) => !s.saved), 'every offline status event says saved: false');
    assert.equal(afterCut.find((s) => s.state !== 'offline')?.state, 'online', 'offline → online (no other state in between)');
    assert.deepEqual(a.session.getStatus(), { state: 'online', saved: true, pending: 0 });
    assert.equal(fresh.editor.value, a.editor.value, 'the stored state equals the editors');
    assert.deepEqual(docView(fresh.editor.ydoc!), docView(typed), 'the stored state holds every edit of both, once');
    assert.ok(convergedMs <= R2_CONVERGE_MS, `converged ${convergedMs} ms after reconnect (bar ≤ ${R2_CONVERGE_MS})`);
  } catch (error) {
    console.log(`R2 seed ${seed} FAILED (replay with WAVE_R2_SEED=${seed})`);
    throw error;
  } finally {
    await Promise.all([a, b, ...observers].map((c) => c.session.stop()));
  }
});

// ---------------------------------------------------------------------------------------------------------------

/** R4 bars: a dead socket detected ≤ 45 s (the client's heartbeat declares it dead after 35 s of silence). */
const R4_DETECT_MS = 45_000;
const R4_RESYNC_MS = 5_000;

test('[R4] server frozen with SIGSTOP (socket open, silent): dead socket detected ≤ 45 s; after SIGCONT resync ≤ 5 s', { timeout: 120_000 }, async () => {
  const { srv, apiKey } = await server();
  const lab = new WsLab();
  const a = labClient({ lab, name: 'r4a', url: srv.url, apiKey, docId: 'r4-doc', initial: 'R4 base\n' });
  const b = labClient({ lab, name: 'r4b', url: srv.url, apiKey, docId: 'r4-doc', initial: 'R4 base\n' });
  let frozen = false;
  try {
    await Promise.all([a.started, b.started]);
    a.editor.edit(0, 0, 'before ');
    await until('a saved, b has it', () => a.session.getStatus().saved && b.editor.value.startsWith('before '));

    // kill() resolves on exit, which a stopped process never does: not awaited.
    void srv.kill('SIGSTOP');
    frozen = true;
    const stoppedAt = Date.now();
    a.editor.edit(a.editor.value.length, 0, 'typed-while-frozen ');
    b.editor.edit(0, 0, 'b-while-frozen ');
    await until('both sessions declare the socket dead', () => [a, b].every((c) => c.session.getStatus().state === 'offline'), R4_DETECT_MS + 10_000);
    const detected = [a, b].map((c) => c.statuses.find((s) => s.at >= stoppedAt && s.state === 'offline')!.at - stoppedAt);
    assert.equal(a.session.getStatus().saved, false, 'the edit made while frozen is not saved');

    void srv.kill('SIGCONT');
    frozen = false;
    const resumedAt = Date.now();
    await until(
      'both online, saved and converged',
      () =>
        [a, b].every((c) => c.session.getStatus().state === 'online' && c.session.getStatus().saved) &&
        a.editor.value === b.editor.value &&
        a.editor.value.includes('typed-while-frozen') &&
        a.editor.value.includes('b-while-frozen'),
      R4_RESYNC_MS + 15_000,
    );
    const resyncMs = Date.now() - resumedAt;
    const errors = [a, b].flatMap((c) => c.errors.map((e) => `${c.name}: ${e.code}`));
    console.log(`R4: dead socket detected after ${detected.join(' / ')} ms; resync ${resyncMs} ms after SIGCONT; errors: ${errors.join(', ')}`);
    assert.ok(detected.every((ms) => ms <= R4_DETECT_MS), `detected after ${detected.join(' / ')} ms (bar ≤ ${R4_DETECT_MS})`);
    assert.ok(resyncMs <= R4_RESYNC_MS, `resync ${resyncMs} ms after SIGCONT (bar ≤ ${R4_RESYNC_MS})`);
    assert.equal(a.editor.value, 'b-while-frozen before R4 base\ntyped-while-frozen ');
  } finally {
    if (frozen) void srv.kill('SIGCONT');
    await Promise.all([a.session.stop(), b.session.stop()]);
  }
});

// A browser's `WebSocket.close` throws for any code but 1000 and 3000–4999 (1001 included): when the browser reports
// no network, the session must close with a code it may send, or the error is uncaught and the socket never dropped.
// The lab's sockets throw as a browser's does (helpers/util.ts `assertBrowserCloseCode`).
test("the browser's offline event drops the socket at once, with a close code a browser may send, and the session comes back", { timeout: 60_000 }, async () => {
  const { srv, apiKey } = await server();
  const lab = new WsLab();
  const a = labClient({ lab, name: 'net-a', url: srv.url, apiKey, docId: 'network-lost', initial: 'base\n' });
  try {
    await a.started;
    await until('saved', () => a.session.getStatus().saved);
    a.session.networkLost();
    assert.equal(a.session.getStatus().state, 'offline');
    a.editor.edit(0, 0, 'offline ');
    await until('back online and saved', () => a.session.getStatus().state === 'online' && a.session.getStatus().saved, 30_000);
  } finally {
    await a.session.stop();
  }
});
