import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MessageType } from 'wave-protocol';
import { ServerProcess } from '../helpers/server-process.js';
import { TestClient } from '../helpers/test-client.js';

test('a key revoked with the CLI while the server runs refuses the next connection', async (t) => {
  const server = await ServerProcess.start();
  t.after(() => server.cleanup());
  const { apiKey } = await server.createKey({ name: 'soon-revoked' });

  const before = await TestClient.connect({ url: server.url, apiKey, docId: 'r', seedText: 'hello' });
  await before.waitSynced();
  await before.close();

  await server.revokeKey(apiKey);
  const { stdout } = await server.cli(['keys', 'list', '--json']);
  const listed = (JSON.parse(stdout) as Array<{ apiKey: string; revokedAt: number | null }>).find((k) => k.apiKey === apiKey);
  assert.equal(typeof listed?.revokedAt, 'number');

  const after = new TestClient({ url: server.url, apiKey, docId: 'r' });
  const closed = await after.waitClosed();
  assert.equal(closed.code, 4401);
  assert.equal(after.frames.length, 1);
  const error = after.frames[0]!.message;
  assert.equal(error?.type, MessageType.Error);
  assert.equal(error.type === MessageType.Error && error.error.code, 'validation_error');
  assert.match(error.type === MessageType.Error ? error.error.detail : '', /revoked/);
  assert.ok(server.running, 'no restart happened');
});
