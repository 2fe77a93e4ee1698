import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerProcess } from '../helpers/server-process.js';
import { TestClient } from '../helpers/test-client.js';

test('[S2] two accounts editing docId "x" never see each other\'s content', async (t) => {
  const server = await ServerProcess.start();
  t.after(() => server.cleanup());
  const keyA = await server.createKey({ name: 'site-a', account: 'account-a' });
  const keyB = await server.createKey({ name: 'site-b', account: 'account-b' });
  const keyA2 = await server.createKey({ name: 'site-a-second-key', account: 'account-a' });

  const a1 = await TestClient.connect({ url: server.url, apiKey: keyA.apiKey, docId: 'x', seedText: 'alpha content' });
  const b1 = await TestClient.connect({ url: server.url, apiKey: keyB.apiKey, docId: 'x', seedText: 'beta content' });
  t.after(() => Promise.all([a1.close(), b1.close()]));
  await Promise.all([a1.waitSynced(), b1.waitSynced()]);
  assert.equal(a1.seedRequests.length, 1, 'account A seeds its own x');
  assert.equal(b1.seedRequests.length, 1, 'account B seeds its own x');
  a1.insert(a1.text.length, ' +A edit');
  b1.insert(b1.text.length, ' +B edit');
  await Promise.all([a1.waitAllAcked(), b1.waitAllAcked()]);

  const a2 = await TestClient.connect({ url: server.url, apiKey: keyA2.apiKey, docId: 'x' });
  const b2 = await TestClient.connect({ url: server.url, apiKey: keyB.apiKey, docId: 'x' });
  t.after(() => Promise.all([a2.close(), b2.close()]));
  await Promise.all([a2.waitSynced(), b2.waitSynced()]);
  assert.equal(a2.text.toString(), 'alpha content +A edit', 'another key of account A shares its documents');
  assert.equal(b2.text.toString(), 'beta content +B edit');
  // The first clients only ever saw their own account's document.
  assert.equal(a1.text.toString(), 'alpha content +A edit');
  assert.equal(b1.text.toString(), 'beta content +B edit');
  for (const frame of [...a1.frames, ...a2.frames]) assert.ok(!Buffer.from(frame.bytes).toString('latin1').includes('beta'));
  for (const frame of [...b1.frames, ...b2.frames]) assert.ok(!Buffer.from(frame.bytes).toString('latin1').includes('alpha'));
});
