/**
 * RELIABILITY.md D2: the server dies right after sending an ack — the worst moment for durability: the client has
 * been told "saved", so the update must be readable after a restart. Each round's server is the built server run by
 * `EXIT_AFTER_ACK_SERVER` (packages/server/test/helpers/exit-after-ack-server.ts), whose `onAckSent` hook exits the
 * process right after its first ack went to the socket. Each round: the client edits while the server is down; the
 * server starts on the same store and port; the client reconnects (`retryNow()`, the browser's `online` hint) and its
 * step2 carries the edit; the server commits, acks and exits. At the end a normal server starts on the same store
 * and a fresh client must read every acked edit, each exactly once.
 *
 * Rounds: 100 with WAVE_LONG=1 (RELIABILITY.md); in CI as many as fit in D2_BUDGET_MS (a restart of the server
 * process costs ~0.4–1 s here; the number run is printed). `WAVE_D2_ROUNDS` overrides.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EXIT_AFTER_ACK_CODE, EXIT_AFTER_ACK_SERVER, ServerProcess } from '../../../server/test/helpers/server-process.js';
import { labClient } from '../helpers/clients.js';
import { LONG, freePort, hold, until } from '../helpers/util.js';
import { WsLab } from '../helpers/ws-lab.js';

const ROUNDS = Number(process.env['WAVE_D2_ROUNDS'] ?? 100);
/** CI: stop starting rounds after this long (the long form runs all 100). */
const D2_BUDGET_MS = LONG ? 600_000 : 45_000;
/** One round: a server start (cold Node + SQLite ≲ 1 s, more on a loaded box), a reconnect and a commit. */
const ROUND_TIMEOUT_MS = 20_000;

test(`[D2] the server exits right after sending an ack, up to ${ROUNDS} times: every acked update is readable after restart`, { timeout: D2_BUDGET_MS + 120_000 }, async () => {
  const port = await freePort();
  const lab = new WsLab();
  let srv = await ServerProcess.start({ extraArgs: ['--port', String(port)] });
  const { apiKey } = await srv.createKey({ name: 'd2' });
  const docId = 'd2-doc';
  const a = labClient({ lab, name: 'd2a', url: srv.url, apiKey, docId, initial: 'D2 base\n' });
  const acked: string[] = [];
  const unacked: string[] = [];
  const began = Date.now();
  let fresh: ReturnType<typeof labClient> | undefined;
  try {
    await a.started;
    await until('the seed acked', () => a.session.getStatus().saved);
    await srv.kill('SIGKILL');
    await until('a offline', () => a.session.getStatus().state === 'offline');
    const link = lab.link(a.name);
    for (let round = 0; round < ROUNDS; round++) {
      if (!LONG && Date.now() - began > D2_BUDGET_MS) break;
      const token = `d2r${round}`;
      a.editor.edit(a.editor.value.length, 0, `${token} `);
      const updates = a.editor.localUpdates.length;
      assert.equal(a.session.getStatus().saved, false, `${token}: an edit made offline is not saved`);
      // The client stays off the network until the harness has seen the new server listen: otherwise the whole
      // connect-commit-ack-exit cycle could beat the harness reading "listening on", and the start would look failed.
      link.refuse(true);
      srv = await srv.restart({ entry: EXIT_AFTER_ACK_SERVER });
      const attemptsBefore = lab.attempts.length;
      link.refuse(false);
      const roundEnd = Date.now() + ROUND_TIMEOUT_MS;
      const box: { exited?: { code: number | null; signal: NodeJS.Signals | null } } = {};
      const exit = srv.exit.then((e) => (box.exited = e));
      while (!box.exited && Date.now() < roundEnd) {
        // The browser's `online` hint; repeated because it does nothing while a refused attempt is still closing.
        a.session.retryNow();
        await Promise.race([exit, hold(50)]);
      }
      const exited = box.exited;
      assert.ok(exited, `round ${round}: the server did not exit within ${ROUND_TIMEOUT_MS} ms\n${srv.stderr}`);
      assert.equal(exited.code, EXIT_AFTER_ACK_CODE, `round ${round}: the server exited by its ack hook (code ${exited.code}, signal ${exited.signal})\n${srv.stderr}`);
      // The socket that got the ack has closed on the client: every frame before the close (the ack, if it made it
      // out of the dying process) has been handled by the session.
      await until(
        `round ${round}: the client's connection to the exited server closed`,
        () => lab.attempts.slice(attemptsBefore).some((x) => x.client === a.name && x.opened && x.end !== undefined),
        ROUND_TIMEOUT_MS,
      );
      if (a.ackedUpdates >= updates) acked.push(token);
      else unacked.push(token);
    }
    const rounds = acked.length + unacked.length;
    // A normal server on the same store: what was acked must be there, once.
    srv = await srv.restart({ entry: undefined });
    a.session.retryNow();
    fresh = labClient({ lab, name: 'd2-fresh', url: srv.url, apiKey, docId, initial: 'never seeds\n' });
    await fresh.started;
    const words = fresh.editor.value.split(/\s+/);
    const missing = acked.filter((t) => !words.includes(t));
    const twice = [...acked, ...unacked].filter((t) => words.filter((w) => w === t).length > 1);
    console.log(
      `D2: ${rounds} rounds in ${((Date.now() - began) / 1000).toFixed(1)} s; ${acked.length} acks seen by the client before ` +
        `the server died; ${acked.length - missing.length}/${acked.length} acked updates readable after restart` +
        (unacked.length ? `; ack lost with the process in rounds ${unacked.join(' ')}` : ''),
    );
    assert.deepEqual(missing, [], 'every acked update is readable after restart');
    assert.deepEqual(twice, [], 'no update stored twice');
    // CI: a sanity floor only (a loaded box starts the server in 2–3 s); the bar's 100 rounds are the long form's.
    assert.ok(rounds >= (LONG ? ROUNDS : Math.min(ROUNDS, 5)), `enough rounds ran (${rounds})`);
    assert.ok(acked.length >= rounds * 0.9, `the client saw the ack before the server died in most rounds (${acked.length}/${rounds})`);
    // Once the server is back for good, the client delivers what was not acked, and converges.
    await until('a online and saved', () => a.session.getStatus().state === 'online' && a.session.getStatus().saved, 20_000);
    const reader = fresh;
    await until('a and the fresh client equal', () => reader.editor.value === a.editor.value);
    for (const t of [...acked, ...unacked]) assert.equal(a.editor.value.split(/\s+/).filter((w) => w === t).length, 1, `${t} once`);
  } finally {
    await Promise.all([a.session.stop(), fresh?.session.stop()]);
    await srv.kill('SIGTERM');
    await srv.cleanup();
  }
});
