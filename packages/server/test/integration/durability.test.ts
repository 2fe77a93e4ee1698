import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerProcess } from '../helpers/server-process.js';
import { TestClient } from '../helpers/test-client.js';

test('[P9] D1 short: SIGKILL after acks, restart on the same store: every acked edit exactly once', async (t) => {
  let server = await ServerProcess.start();
  const { apiKey } = await server.createKey({ name: 'durable' });
  t.after(() => server.cleanup());

  const writer = await TestClient.connect({ url: server.url, apiKey, docId: 'd1', seedText: 'base\n' });
  await writer.waitSynced();
  const acked: string[] = [];
  // 10 bursts of 20 edits sent in one tick each.
  for (let burst = 0; burst < 10; burst++) {
    for (let i = 0; i < 20; i++) {
      const line = `acked ${burst}-${i}\n`;
      writer.insert(writer.text.length, line);
      acked.push(line);
    }
    await writer.waitAllAcked();
  }
  const ackedText = writer.text.toString();
  // A burst in flight when the server dies: these may or may not be stored, but never twice.
  const unacked: string[] = [];
  for (let i = 0; i < 20; i++) {
    const line = `inflight ${i}\n`;
    writer.insert(writer.text.length, line);
    unacked.push(line);
  }
  const exit = await server.kill('SIGKILL');
  assert.equal(exit.signal, 'SIGKILL');
  await writer.waitClosed();

  server = await server.restart();
  const reader = await TestClient.connect({ url: server.url, apiKey, docId: 'd1', seedText: 'MUST NOT SEED\n' });
  t.after(() => reader.close());
  await reader.waitSynced();
  assert.deepEqual(reader.seedRequests, [], 'the session survived the crash');
  const text = reader.text.toString();
  assert.ok(text.startsWith(ackedText), 'every acked edit, in order');
  assert.equal(text.split('base\n').length - 1, 1);
  for (const line of acked) assert.equal(text.split(line).length - 1, 1, `exactly once: ${line.trim()}`);
  // What follows the acked text is a prefix of the in-flight burst (each line at most once).
  assert.ok(unacked.join('').startsWith(text.slice(ackedText.length)), 'only in-flight edits after the acked ones');
  assert.doesNotMatch(text, /MUST NOT SEED/);
});
