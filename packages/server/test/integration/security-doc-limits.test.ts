/** Limits per document: users (`--max-users`) and document size (`--max-document-bytes`), by exact code. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerProcess } from '../helpers/server-process.js';
import { TestClient } from '../helpers/test-client.js';

test('--max-users: the next connection gets session_full (4409); --max-document-bytes: document_too_large (4413) before applying', async (t) => {
  const server = await ServerProcess.start({ extraArgs: ['--max-users', '2', '--max-document-bytes', '4096'] });
  t.after(() => server.cleanup());
  const { apiKey } = await server.createKey({ name: 'limits' });
  const a = new TestClient({ url: server.url, apiKey, docId: 'd', seedText: 'small' });
  t.after(() => a.close());
  await a.waitSynced();
  await a.waitAllAcked();
  const b = new TestClient({ url: server.url, apiKey, docId: 'd' });
  t.after(() => b.close());
  await b.waitSynced();
  const third = new TestClient({ url: server.url, apiKey, docId: 'd' });
  assert.equal((await third.waitClosed()).code, 4409);
  assert.deepEqual(third.errors.map((e) => e.code), ['session_full']);

  const framesBefore = b.frames.length;
  const sent = a.insert(0, 'x'.repeat(5000));
  const closed = await a.waitClosed();
  assert.equal(closed.code, 4413);
  assert.deepEqual(a.errors.map((e) => [e.code, e.fatal]), [['document_too_large', true]]);
  assert.ok(a.lastAck < sent, 'not acked');
  assert.equal(b.frames.slice(framesBefore).filter((f) => f.bytes[0] === 0).length, 0, 'not relayed');
  const fresh = new TestClient({ url: server.url, apiKey, docId: 'd' });
  await fresh.waitSynced();
  assert.equal(fresh.text.toString(), 'small', 'not applied or stored');
  await fresh.close();
});
