/**
 * REST views of the flat rich text as a client wrote it over the socket (not through a PUT), RELIABILITY.md S18:
 * typed markup and ampersands come out escaped, and whatever a hostile client writes into the `Y.Text` directly
 * (script URLs, handlers as attribute names, markup in attribute values, unknown embeds) is never served live and
 * always renders (no 500).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerProcess } from '../helpers/server-process.js';
import { TestClient } from '../helpers/test-client.js';

async function views(base: string, apiKey: string, secret: string, docId: string): Promise<{ text: string; html: string; json: Record<string, unknown> }> {
  const get = async (format: string): Promise<Response> => {
    const res = await fetch(`${base}/api/v2/docs/${docId}?apiKey=${apiKey}&format=${format}`, { headers: { Authorization: `Bearer ${secret}` } });
    assert.equal(res.status, 200, `format=${format}`);
    return res;
  };
  return {
    text: await (await get('text')).text(),
    html: await (await get('html')).text(),
    json: (await (await get('json')).json()) as Record<string, unknown>,
  };
}

test('[S18] typed markup and ampersands come out escaped in format=html and json, and format=text keeps every line', async (t) => {
  const server = await ServerProcess.start();
  t.after(() => server.cleanup());
  const { apiKey, secret } = await server.createKey({ name: 'escape' });
  const editor = new TestClient({ url: server.url, apiKey, docId: 'typed', seedText: '' });
  t.after(() => editor.close());
  await editor.waitSynced();
  editor.text.applyDelta([{ insert: '<img src=x onerror=alert(1)>\na & b' }, { insert: '\n', attributes: { header: 2 } }]);
  await editor.waitAllAcked();

  const { text, html, json } = await views(server.url, apiKey, secret, 'typed');
  assert.equal(html, '<p>&lt;img src=x onerror=alert(1)&gt;</p><h2>a &amp; b</h2>');
  assert.equal(json['html'], html);
  assert.equal(text, '<img src=x onerror=alert(1)>\na & b\n');
  assert.equal(json['text'], text);
});

test('[S18] what a hostile client writes into the text is never served live: no script, handler or script URL; values escaped', async (t) => {
  const server = await ServerProcess.start();
  t.after(() => server.cleanup());
  const { apiKey, secret } = await server.createKey({ name: 'hostile' });
  const editor = new TestClient({ url: server.url, apiKey, docId: 'hostile', seedText: '' });
  t.after(() => editor.close());
  await editor.waitSynced();
  editor.text.applyDelta([
    { insert: 'bad link', attributes: { link: ' javascript:alert(3)' } },
    { insert: 'good link', attributes: { link: 'https://x.test/?a="b"&c', bold: true } },
    { insert: { image: 'javascript:alert(4)' }, attributes: { onerror: 'alert(5)' } },
    { insert: { image: 'https://x.test/i.png' }, attributes: { alt: '"><script>alert(8)</script>' } },
    { insert: { script: 'alert(6)' } },
    { insert: 'end', attributes: { 'script onload=alert(9)': true, color: 'red"><script>' } },
    { insert: '\n', attributes: { align: 'center;"><script>', header: '<h1 onclick=alert(2)>', 'code-block': '"><script>' } },
  ]);
  await editor.waitAllAcked();

  const { text, html, json } = await views(server.url, apiKey, secret, 'hostile');
  assert.equal(json['html'], html);
  assert.equal(html, '<p>bad link<a href="https://x.test/?a=&quot;b&quot;&amp;c"><strong>good link</strong></a><img src="https://x.test/i.png" alt="&quot;&gt;&lt;script&gt;alert(8)&lt;/script&gt;">end</p>');
  assert.equal(text, 'bad linkgood linkend\n');
});
