/**
 * RELIABILITY.md R8: a document of ~1 M characters, built by 1,000 edits (pastes and deletions at random places, so
 * the server holds it with its history and compacts it as it would), then opened by a new client — a real `Session`
 * core over a real WebSocket against the real server process — which syncs it whole and edits it, every edit acked.
 * R8's bars (synced ≤ 3 s, ack p99 ≤ 200 ms) are timings: printed, never asserted (STYLE: speed lives in the bench).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ServerProcess } from '../../../server/test/helpers/server-process.js';
import { TestClient } from '../../../server/test/helpers/test-client.js';
import { labClient } from '../helpers/clients.js';
import { hold, percentile, randomInt, randomText, rng, testSeed, until } from '../helpers/util.js';
import { WsLab } from '../helpers/ws-lab.js';

const started: ServerProcess[] = [];
after(async () => {
  for (const srv of started) {
    await srv.kill('SIGKILL');
    await srv.cleanup();
  }
});

/** Characters the document reaches, the edits that build it, and the edits the new client makes. */
const TARGET_CHARS = 1_000_000;
const BUILD_EDITS = 1_000;
const NEW_CLIENT_EDITS = 100;

test(`[R8] a ~1 M-character document built by ${BUILD_EDITS} edits: a new client syncs it whole, and its ${NEW_CLIENT_EDITS} edits are each acked`, { timeout: 180_000 }, async () => {
  const srv = await ServerProcess.start();
  started.push(srv);
  const { apiKey } = await srv.createKey({ name: 'reliability-r8' });
  const seed = testSeed('R8', 'WAVE_R8_SEED');
  const random = rng(seed);
  const docId = `r8-${seed}`;

  const writer = new TestClient({ url: srv.url, apiKey, docId, seedText: 'R8 base\n' });
  const lab = new WsLab();
  let reader: ReturnType<typeof labClient> | undefined;
  try {
    await writer.waitSynced();
    // Nine pastes in ten, a deletion of up to half a paste in one; 200 a second, half the server's update rate limit.
    const paste = Math.ceil((TARGET_CHARS * 1.1) / BUILD_EDITS);
    let batchStart = Date.now();
    for (let n = 0; n < BUILD_EDITS; n++) {
      const length = writer.text.length;
      if (n % 10 === 9) writer.text.delete(randomInt(random, length - paste), 1 + randomInt(random, paste / 2));
      else writer.insert(randomInt(random, length + 1), randomText(random, paste));
      if (n % 50 === 49) {
        await writer.waitAllAcked(60_000);
        await hold(Math.max(0, batchStart + 250 - Date.now()));
        batchStart = Date.now();
      }
    }
    await writer.waitAllAcked(60_000);
    const whole = writer.text.toString();
    assert.ok(whole.length >= 0.9 * TARGET_CHARS, `the document has ${whole.length} characters`);

    const opened = Date.now();
    reader = labClient({ lab, name: 'r8', url: srv.url, apiKey, docId });
    await reader.started;
    const syncedMs = Date.now() - opened;
    assert.equal(reader.editor.value, whole, 'the new client holds the document whole');

    // The new client types at ~10 edits/s, each edit's ack timed: the time of the first `saved` status after it.
    const acks: number[] = [];
    for (let n = 0; n < NEW_CLIENT_EDITS; n++) {
      const at = Date.now();
      const from = reader.statuses.length;
      reader.editor.edit(randomInt(random, reader.editor.value.length + 1), 0, `r8.${n} `);
      const r = reader;
      const saved = () => r.statuses.slice(from).find((s) => s.saved && s.pending === 0);
      await until(`edit ${n} acked`, () => saved() !== undefined);
      acks.push(saved()!.at - at);
      await hold(Math.max(0, at + 100 - Date.now()));
    }
    console.log(
      `R8: ${whole.length} characters; new client synced in ${syncedMs} ms (bar 3 s); ${acks.length} edits acked, ` +
        `p50 ${percentile(acks, 0.5)} / p99 ${percentile(acks, 0.99)} ms (bar 200 ms)`,
    );
    const r = reader;
    await writer.waitFor(() => writer.text.toString() === r.editor.value, 'the writer has the new client\'s edits');
    assert.deepEqual(reader.errors, [], 'no error');
  } finally {
    await reader?.session.stop();
    await writer.close();
  }
});
