/** REST `/api/v2/docs/:docId` against the real server process: secret-only, text/HTML/JSON, PUT, DELETE. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerProcess } from '../helpers/server-process.js';
import { TestClient } from '../helpers/test-client.js';

test('REST: GET text/HTML/JSON, PUT replaces for every client, DELETE; the public apiKey alone is refused', async (t) => {
  const server = await ServerProcess.start();
  t.after(() => server.cleanup());
  const { apiKey, secret } = await server.createKey({ name: 'rest' });
  const url = (docId: string, query = ''): string => `${server.url}/api/v2/docs/${encodeURIComponent(docId)}?apiKey=${apiKey}${query}`;
  const auth = { Authorization: `Bearer ${secret}` };

  const editor = new TestClient({ url: server.url, apiKey, docId: 'notes', seedText: 'a <b> & c' });
  t.after(() => editor.close());
  await editor.waitSynced();
  await editor.waitAllAcked();

  assert.equal((await fetch(url('notes'))).status, 401, 'no secret');
  assert.equal((await fetch(url('notes'), { headers: { Authorization: `Bearer ${apiKey}` } })).status, 401, 'the apiKey is not a secret');
  assert.equal((await fetch(`${server.url}/api/v2/docs/notes`, { headers: auth })).status, 401, 'the secret needs its apiKey');

  const text = await fetch(url('notes'), { headers: auth });
  assert.equal(text.status, 200);
  assert.match(text.headers.get('content-type')!, /^text\/plain/);
  assert.equal(await text.text(), 'a <b> & c');
  const html = await fetch(url('notes', '&format=html'), { headers: auth });
  assert.match(html.headers.get('content-type')!, /^text\/html/);
  assert.equal(await html.text(), '<p>a &lt;b&gt; &amp; c</p>');
  const json = (await (await fetch(url('notes', '&format=json'), { headers: auth })).json()) as Record<string, unknown>;
  assert.equal(json['text'], 'a <b> & c');
  assert.equal(json['docId'], 'notes');
  assert.equal((await fetch(url('missing'), { headers: auth })).status, 404);

  const put = await fetch(url('notes'), { method: 'PUT', headers: { ...auth, 'Content-Type': 'text/plain' }, body: 'replaced by the host' });
  assert.equal(put.status, 204);
  await editor.waitFor(() => editor.text.toString() === 'replaced by the host', 'the PUT reaches connected clients');
  assert.equal(await (await fetch(url('notes'), { headers: auth })).text(), 'replaced by the host');

  // PUT on a document nobody opened seeds it.
  assert.equal((await fetch(url('fresh'), { method: 'PUT', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify({ text: 'from the backend' }) })).status, 204);
  const reader = new TestClient({ url: server.url, apiKey, docId: 'fresh', seedText: 'must not be used' });
  await reader.waitSynced();
  assert.equal(reader.text.toString(), 'from the backend');
  await reader.close();

  assert.equal((await fetch(url('notes'), { method: 'DELETE', headers: auth })).status, 204);
  assert.equal((await editor.waitClosed()).code, 1012, 'connected clients reconnect into a new session');
  assert.equal((await fetch(url('notes'), { headers: auth })).status, 404);
});

test('REST: a document in the Quill Delta convention comes out as formatted, escaped HTML through the shared renderer', async (t) => {
  const server = await ServerProcess.start();
  t.after(() => server.cleanup());
  const { apiKey, secret } = await server.createKey({ name: 'rest-delta' });
  const url = `${server.url}/api/v2/docs/spec?apiKey=${apiKey}`;
  const auth = { Authorization: `Bearer ${secret}` };
  const delta = [
    { insert: 'Title' },
    { insert: '\n', attributes: { header: 1 } },
    { insert: '<img src=x onerror=alert(1)>', attributes: { bold: true } },
    { insert: ' & b' },
    { insert: '\n', attributes: { list: 'bullet' } },
  ];
  const put = await fetch(url, { method: 'PUT', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify({ delta }) });
  assert.equal(put.status, 204);
  const expected = '<h1>Title</h1><ul><li><strong>&lt;img src=x onerror=alert(1)&gt;</strong> &amp; b</li></ul>';
  assert.equal(await (await fetch(`${url}&format=html`, { headers: auth })).text(), expected);
  const json = (await (await fetch(`${url}&format=json`, { headers: auth })).json()) as Record<string, unknown>;
  assert.equal(json['html'], expected);
  assert.deepEqual(json['delta'], delta);
});
