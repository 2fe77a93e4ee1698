/**
 * REST views of rich-text documents (the `Y.XmlFragment('html')` of Froala and TinyMCE), RELIABILITY.md S18:
 * every text node and attribute value is escaped, only schema markup is written, `format=text` keeps every line,
 * and a tree of any depth the server accepted renders.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as Y from 'yjs';
import { ServerProcess } from '../helpers/server-process.js';
import { startInProcess } from '../helpers/in-process.js';
import { TestClient } from '../helpers/test-client.js';
import { nestedElementsUpdate } from '../helpers/hostile-updates.js';

/** A paragraph as the rich-text adapter writes it: a `p` holding one `Y.XmlText` run. */
function paragraph(delta: Array<{ insert: string | object; attributes?: Record<string, unknown> }>, attrs: Record<string, string> = {}): Y.XmlElement {
  const p = new Y.XmlElement('p');
  for (const [key, value] of Object.entries(attrs)) p.setAttribute(key, value);
  const run = new Y.XmlText();
  run.applyDelta(delta);
  p.insert(0, [run]);
  return p;
}

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
  editor.doc.getXmlFragment('html').insert(0, [paragraph([{ insert: '<img src=x onerror=alert(1)>' }]), paragraph([{ insert: 'a & b' }])]);
  await editor.waitAllAcked();

  const { text, html, json } = await views(server.url, apiKey, secret, 'typed');
  assert.equal(html, '<p>&#60;img src=x onerror=alert(1)&#62;</p><p>a &#38; b</p>');
  assert.equal(json['html'], html);
  assert.equal(text, '<img src=x onerror=alert(1)>\na & b\n');
  assert.equal(json['text'], text);
});

test('[S18] markup a hostile client writes into the tree is never served live: no script, handler or script URL; attribute values escaped', async (t) => {
  const server = await ServerProcess.start();
  t.after(() => server.cleanup());
  const { apiKey, secret } = await server.createKey({ name: 'hostile' });
  const editor = new TestClient({ url: server.url, apiKey, docId: 'hostile', seedText: '' });
  t.after(() => editor.close());
  await editor.waitSynced();
  const script = new Y.XmlElement('script');
  script.insert(0, [new Y.XmlText('alert(6)')]);
  const scriptP = new Y.XmlElement('p onclick="alert(7)"');
  scriptP.insert(0, [new Y.XmlText('odd name')]);
  editor.doc.getXmlFragment('html').insert(0, [
    paragraph(
      [
        { insert: 'bad link', attributes: { a: { href: ' javascript:alert(3)' } } },
        { insert: 'good link', attributes: { a: { href: 'https://x.test/?a="b"&c' }, strong: {} } },
        { insert: { img: { src: 'javascript:alert(4)', onerror: 'alert(5)', alt: '"><script>alert(8)</script>' } } },
        { insert: { img: { src: 'https://x.test/i.png', alt: 'fine' } } },
        { insert: { br: {} } },
        { insert: 'end', attributes: { 'script onload=alert(9)': {} } },
      ],
      { onclick: 'alert(2)', style: 'text-align: center;"><script>' },
    ),
    script,
    scriptP,
  ]);
  await editor.waitAllAcked();

  const { text, html, json } = await views(server.url, apiKey, secret, 'hostile');
  assert.equal(json['html'], html);
  for (const live of ['<script', 'onclick', 'onerror', 'onload', 'javascript:']) assert.ok(!html.includes(live), `${live} in ${html}`);
  assert.ok(html.startsWith('<p style="text-align: center;&#34;&#62;&#60;script&#62;">'), html);
  assert.ok(html.includes('<a>bad link</a>'), html);
  assert.ok(html.includes('<a href="https://x.test/?a=&#34;b&#34;&#38;c"><strong>good link</strong></a>'), html);
  assert.ok(html.includes('<img alt="&#34;&#62;&#60;script&#62;alert(8)&#60;/script&#62;">'), html);
  assert.ok(html.includes('<img src="https://x.test/i.png" alt="fine"><br>end</p>'), html);
  assert.ok(html.endsWith('alert(6)odd name'), 'elements outside the schema are unwrapped, their text kept (escaped)');
  assert.equal(text, 'bad linkgood link\nend\nalert(6)odd name');
});

test('[S18] REST renders a tree of any depth the server accepted (15,000 nested elements): no 500', async (t) => {
  // The type-depth limit raised out of the way: the rendering, not the check, is under test.
  const server = await startInProcess({ limits: { maxTypeDepth: 1_000_000 } });
  t.after(() => server.cleanup());
  const created = await server.sqlite.createKey({ name: 'deep' }, { seal: (k, s) => server.secretBox.seal(k, s) });
  const { apiKey } = created.record;
  const editor = new TestClient({ url: server.url, apiKey, docId: 'deep', seedText: '' });
  t.after(() => editor.close());
  await editor.waitSynced();
  Y.applyUpdate(editor.doc, nestedElementsUpdate(editor.doc, 15_000, 'bottom'));
  await editor.waitAllAcked();
  const { text, html, json } = await views(server.url, apiKey, created.secret, 'deep');
  assert.equal(html, `${'<blockquote>'.repeat(15_000)}bottom${'</blockquote>'.repeat(15_000)}`);
  assert.equal(text, `bottom${'\n'.repeat(15_000)}`);
  assert.equal(json['html'], html);
});
