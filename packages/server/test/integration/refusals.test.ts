import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MessageType } from 'wave-protocol';
import { ServerProcess } from '../helpers/server-process.js';
import { TestClient } from '../helpers/test-client.js';

test('[P1] refused connections receive no document byte', async (t) => {
  const server = await ServerProcess.start();
  t.after(() => server.cleanup());
  const { apiKey } = await server.createKey({ name: 'site', origins: ['http://allowed.example'] });
  // Some content in the document, so that a leak would show.
  const owner = await TestClient.connect({ url: server.url, apiKey, docId: 'secret-doc', seedText: 'confidential', origin: 'http://allowed.example' });
  t.after(() => owner.close());
  await owner.waitSynced();
  await owner.waitAllAcked();

  await t.test('an unknown apiKey gets only Error{validation_error}, then close 4401', async () => {
    for (const wrong of ['wk_doesnotexist000000000000', '']) {
      const client = new TestClient({ url: server.url, apiKey: wrong, docId: 'secret-doc' });
      const closed = await client.waitClosed();
      assert.equal(closed.code, 4401);
      assert.equal(client.frames.length, 1, `one frame only, got ${client.frames.length}`);
      const only = client.frames[0]!.message;
      assert.equal(only?.type, MessageType.Error);
      assert.equal(only.type === MessageType.Error && only.error.code, 'validation_error');
      assert.equal(only.type === MessageType.Error && only.error.fatal, true);
      for (const frame of client.frames) {
        assert.ok(![MessageType.Sync, MessageType.Awareness, MessageType.Welcome, MessageType.SeedRequest].includes(frame.bytes[0] as 0), 'no document byte');
      }
      assert.equal(client.text.toString(), '');
    }
  });

  await t.test('a foreign Origin gets only a fatal validation_error naming it (S11), no document byte', async () => {
    const client = new TestClient({ url: server.url, apiKey, docId: 'secret-doc', origin: 'http://evil.example' });
    const closed = await client.waitClosed(5_000);
    assert.equal(closed.code, 4401);
    assert.deepEqual(client.frames.map((f) => f.message?.type), [MessageType.Error]);
    assert.deepEqual(client.errors.map((e) => [e.code, e.fatal]), [['validation_error', true]]);
    assert.match(client.errors[0]!.detail, /"http:\/\/evil\.example" is not allowed .* --origin "http:\/\/evil\.example"/);
    assert.equal(client.text.toString(), '');
  });

  await t.test('the allowed Origin and a request without Origin are served', async () => {
    for (const origin of ['http://allowed.example', undefined]) {
      const client = await TestClient.connect({ url: server.url, apiKey, docId: 'secret-doc', ...(origin ? { origin } : {}) });
      await client.waitSynced();
      assert.equal(client.text.toString(), 'confidential');
      await client.close();
    }
  });
});
