import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { ServerProcess } from '../helpers/server-process.js';
import { TestClient } from '../helpers/test-client.js';

test('[P3][P8] --session-grace 1: the session outlives its last client by the grace period only', async (t) => {
  const server = await ServerProcess.start({ sessionGrace: 1 });
  t.after(() => server.cleanup());
  const { apiKey } = await server.createKey({ name: 'grace' });
  const connect = (seedText: string) => TestClient.connect({ url: server.url, apiKey, docId: 'g', seedText });

  const first = await connect('old content');
  await first.waitSynced();
  const epoch = first.welcome!.epoch;
  assert.deepEqual(first.seedRequests, [epoch]);
  first.insert(first.text.length, ' + edit');
  await first.waitAllAcked();
  await first.close();

  // Within the grace period: the old session and its content.
  const second = await connect('should not be used');
  await second.waitSynced();
  assert.deepEqual(second.seedRequests, []);
  assert.equal(second.welcome!.epoch, epoch);
  assert.equal(second.text.toString(), 'old content + edit');
  await second.close();

  // The grace period is a duration, not an event: wait it out (1 s) with a margin.
  await sleep(1_600);

  const third = await connect('new content');
  await third.waitSynced();
  assert.equal(third.welcome!.epoch, epoch + 1, 'a new epoch');
  assert.deepEqual(third.seedRequests, [epoch + 1], 'asked to seed the new epoch');
  assert.equal(third.text.toString(), 'new content', 'the old content is gone');
  await third.close();
});
