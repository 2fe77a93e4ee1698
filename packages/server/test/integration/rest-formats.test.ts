/**
 * REST `PUT` in each format (text, HTML, Delta) and `GET` in each (text, html, delta, json), against the real server
 * process: every document is the flat rich text, so what one format writes reads back in all of them; a PUT
 * replaces the content for connected clients as forceSync does; hostile HTML is sanitised on the way in and escaped
 * on the way out (RELIABILITY.md S18); a body that does not describe a document is refused 400 with a code and the
 * field named, and the document is left as it was.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { META_MAP, META_REPLACED_KEY } from 'wave-protocol';
import { ServerProcess } from '../helpers/server-process.js';
import { TestClient } from '../helpers/test-client.js';

describe('REST formats (real server process)', () => {
  let server: ServerProcess;
  let apiKey: string;
  let auth: Record<string, string>;
  const clients: TestClient[] = [];
  const url = (docId: string, format?: string): string =>
    `${server.url}/api/v2/docs/${encodeURIComponent(docId)}?apiKey=${apiKey}${format ? `&format=${format}` : ''}`;
  const put = (docId: string, type: string, body: string): Promise<Response> =>
    fetch(url(docId), { method: 'PUT', headers: { ...auth, 'Content-Type': type }, body });
  const get = async (docId: string, format: string): Promise<string> => {
    const res = await fetch(url(docId, format), { headers: auth });
    assert.equal(res.status, 200, `GET format=${format}: ${await res.clone().text()}`);
    return res.text();
  };
  const views = async (docId: string) => ({
    text: await get(docId, 'text'),
    html: await get(docId, 'html'),
    delta: JSON.parse(await get(docId, 'delta')) as { ops: unknown[] },
    json: JSON.parse(await get(docId, 'json')) as Record<string, unknown>,
  });

  before(async () => {
    server = await ServerProcess.start();
    let secret: string;
    ({ apiKey, secret } = await server.createKey({ name: 'rest-formats' }));
    auth = { Authorization: `Bearer ${secret}` };
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await server.cleanup();
  });

  it('PUT html → GET delta, html and text; a connected client gets it and its replace marker changes', async () => {
    const docId = 'html-in';
    const editor = new TestClient({ url: server.url, apiKey, docId, seedText: 'old content\n' });
    clients.push(editor);
    await editor.waitSynced();
    await editor.waitAllAcked();
    const marker = editor.doc.getMap(META_MAP).get(META_REPLACED_KEY);

    const html =
      '<h1>Title</h1><p>Some <strong>bold</strong> and <a href="https://x.test/?a=1&amp;b=2">link</a> text</p>' +
      '<ul><li>one</li><li>two<ul><li>deep</li></ul></li></ul><p><img src="https://x.test/i.png" alt="fine"></p>';
    assert.equal((await put(docId, 'text/html; charset=utf-8', html)).status, 204);

    const { text, html: out, delta, json } = await views(docId);
    assert.deepEqual(delta.ops, [
      { insert: 'Title' },
      { insert: '\n', attributes: { header: 1 } },
      { insert: 'Some ' },
      { insert: 'bold', attributes: { bold: true } },
      { insert: ' and ' },
      { insert: 'link', attributes: { link: 'https://x.test/?a=1&b=2' } },
      { insert: ' text\none' },
      { insert: '\n', attributes: { list: 'bullet' } },
      { insert: 'two' },
      { insert: '\n', attributes: { list: 'bullet' } },
      { insert: 'deep' },
      { insert: '\n', attributes: { list: 'bullet', indent: 1 } },
      { insert: { image: 'https://x.test/i.png' }, attributes: { alt: 'fine' } },
      { insert: '\n' },
    ]);
    assert.equal(out, html, 'the shared renderer gives back the same HTML');
    assert.equal(text, 'Title\nSome bold and link text\none\ntwo\ndeep\n\n');
    assert.deepEqual([json['text'], json['html'], json['delta']], [text, out, delta.ops]);

    await editor.waitFor(() => editor.text.toString().startsWith('Title\nSome bold'), 'the PUT reaches the connected client');
    assert.equal(editor.text.toString(), 'Title\nSome bold and link text\none\ntwo\ndeep\n\n');
    const replaced = editor.doc.getMap(META_MAP).get(META_REPLACED_KEY);
    assert.ok(typeof replaced === 'string' && replaced !== marker, 'the replace marker changed (peers clear their undo stacks)');
  });

  it('PUT delta → GET html; GET delta → PUT into another document gives the same views', async () => {
    const delta = {
      delta: [
        { insert: 'Quote', attributes: { italic: true } },
        { insert: '\n', attributes: { blockquote: true } },
        { insert: 'first' },
        { insert: '\n', attributes: { list: 'ordered' } },
        { insert: 'x = 1;\n', attributes: { 'code-block': true } },
        { insert: 'line' },
        { insert: { break: true } },
        { insert: 'break', attributes: { underline: true } },
      ],
    };
    assert.equal((await put('delta-in', 'application/json', JSON.stringify(delta))).status, 204);
    const first = await views('delta-in');
    assert.equal(
      first.html,
      '<blockquote><p><em>Quote</em></p></blockquote><ol><li>first</li></ol><pre>x = 1;</pre><p>line<br><u>break</u></p>',
    );
    assert.equal(first.text, 'Quote\nfirst\nx = 1;\nline\nbreak\n', 'a break is a line break; the missing final "\\n" was added');

    // What GET ?format=delta answers is a body PUT accepts.
    assert.equal((await put('delta-copy', 'application/json', JSON.stringify(first.delta))).status, 204);
    const copy = await views('delta-copy');
    assert.deepEqual([copy.delta, copy.html, copy.text], [first.delta, first.html, first.text]);
  });

  it('PUT text, as text/plain and as JSON, reads back unchanged and renders as escaped paragraphs', async () => {
    assert.equal((await put('text-in', 'text/plain', 'a <b> & c\nsecond\n')).status, 204);
    const plain = await views('text-in');
    assert.equal(plain.text, 'a <b> & c\nsecond\n');
    assert.equal(plain.html, '<p>a &lt;b&gt; &amp; c</p><p>second</p>');
    assert.deepEqual(plain.delta.ops, [{ insert: 'a <b> & c\nsecond\n' }]);
    assert.equal((await put('text-in', 'application/json', JSON.stringify({ text: 'json text' }))).status, 204);
    assert.equal(await get('text-in', 'text'), 'json text');
  });

  it('[S18] hostile HTML: typed markup stays text, live markup is dropped, every value escaped', async () => {
    const hostile =
      '<p>&lt;img src=x onerror=alert(1)&gt; a &amp; b</p>' +
      '<p onclick="alert(2)" style="text-align: center;&quot;&gt;&lt;script&gt;">' +
      '<img src="javascript:alert(3)" onerror="alert(4)"><img src="https://x.test/i.png" alt="&quot;&gt;&lt;script&gt;alert(5)&lt;/script&gt;">' +
      '<a href=" javascript:alert(6)">bad link</a> <a href="https://x.test/?q=&quot;x&quot;">good link</a></p>' +
      '<script>alert(7)</script><iframe src="https://evil.test"></iframe><svg onload="alert(8)"><text>svg</text></svg>' +
      '<p><span style="color: red; background-image: url(javascript:alert(9))">styled</span></p>';
    assert.equal((await put('hostile', 'text/html', hostile)).status, 204);
    const { html, text, json } = await views('hostile');
    // Every "<" the HTML holds opens a tag the renderer wrote (text and attribute values have it escaped).
    const tags = html.match(/<[^>]*>/g) ?? [];
    const names = new Set(tags.map((tag) => /^<\/?([a-z0-9]+)/.exec(tag)?.[1]));
    assert.deepEqual([...names].sort(), ['a', 'img', 'p', 'span'], html);
    for (const tag of tags) assert.ok(!/\son\w+=|javascript:|url\(/i.test(tag), `live markup in ${tag}`);
    assert.ok(html.startsWith('<p>&lt;img src=x onerror=alert(1)&gt; a &amp; b</p>'), html);
    assert.ok(html.includes('<img src="https://x.test/i.png" alt="&quot;&gt;&lt;script&gt;alert(5)&lt;/script&gt;">'), html);
    assert.ok(html.includes('bad link') && html.includes('<a href="https://x.test/?q=&quot;x&quot;">good link</a>'), html);
    assert.ok(text.startsWith('<img src=x onerror=alert(1)> a & b\n'), text);
    assert.equal(json['html'], html);
  });

  it('refuses a Delta that does not describe a document: 400 invalid_delta naming the field; the document is unchanged', async () => {
    const docId = 'bad-delta';
    assert.equal((await put(docId, 'text/plain', 'kept\n')).status, 204);
    const cases: Array<[unknown, RegExp]> = [
      [{ delta: 'text' }, /^delta: expected an array of insert ops/],
      [{ delta: [{ insert: 'a' }, 7] }, /^delta\[1\]: expected an op/],
      [{ delta: [{ retain: 3 }] }, /^delta\[0\]\.retain: a document is insert ops only/],
      [{ delta: [{ insert: 'a', delete: 1 }] }, /^delta\[0\]\.delete: a document is insert ops only/],
      [{ delta: [{ insert: 5 }] }, /^delta\[0\]\.insert: expected a string, \{ "image": URL \} or \{ "break": true \}/],
      [{ delta: [{ insert: { video: 'https://x.test/v' } }] }, /^delta\[0\]\.insert: expected \{ "image": URL \}/],
      [{ delta: [{ insert: { image: 'javascript:alert(1)' } }] }, /^delta\[0\]\.insert\.image: expected a relative or http\(s\) URL/],
      [{ delta: [{ insert: 'a', attributes: ['bold'] }] }, /^delta\[0\]\.attributes: expected an object/],
      [{ delta: [{ insert: 'a', formats: {} }] }, /^delta\[0\]\.formats: unknown key/],
      [{ ops: [{ insert: 'a' }, null] }, /^body\.ops\[1\]: expected an op/],
      [{ delta: { ops: [{ insert: 'ok' }, { insert: [] }] } }, /^delta\.ops\[1\]\.insert: expected a string/],
    ];
    for (const [body, message] of cases) {
      const res = await put(docId, 'application/json', JSON.stringify(body));
      const answer = (await res.json()) as { error: string; code: string };
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(answer.code, 'invalid_delta', JSON.stringify(body));
      assert.match(answer.error, message);
    }
    const mixed = await put(docId, 'application/json', JSON.stringify({ text: 'a', delta: [] }));
    assert.deepEqual([mixed.status, ((await mixed.json()) as { code: string }).code], [400, 'invalid_body']);
    const notJson = await put(docId, 'application/json', '{ not json');
    assert.deepEqual([notJson.status, ((await notJson.json()) as { code: string }).code], [400, 'invalid_body']);
    const other = await put(docId, 'application/xml', '<p/>');
    assert.deepEqual([other.status, ((await other.json()) as { code: string }).code], [415, 'unsupported_media_type']);
    assert.equal(await get(docId, 'text'), 'kept\n');
  });

  it('sanitises Delta attributes instead of trusting them: unknown keys, unsafe links and values are dropped', async () => {
    const delta = [
      { insert: 'x', attributes: { bold: true, onclick: 'alert(1)', link: 'javascript:alert(2)', color: 'red;background:url(x)' } },
      { insert: '\n', attributes: { header: 9, list: 'bogus', align: 'center', 'code-block': '<script>' } },
    ];
    assert.equal((await put('sanitised', 'application/json', JSON.stringify({ delta }))).status, 204);
    const { delta: out, html } = await views('sanitised');
    assert.deepEqual(out.ops, [{ insert: 'x', attributes: { bold: true } }, { insert: '\n', attributes: { align: 'center' } }]);
    assert.equal(html, '<p style="text-align: center;"><strong>x</strong></p>');

    // Runs split finely by the caller, or by attributes the sanitiser dropped, are stored merged.
    const split = [{ insert: 'a' }, { insert: 'b', attributes: { onclick: 'x' } }, { insert: 'c', attributes: { bold: true } }, { insert: 'd', attributes: { bold: true } }];
    assert.equal((await put('sanitised', 'application/json', JSON.stringify({ ops: split }))).status, 204);
    assert.deepEqual(JSON.parse(await get('sanitised', 'delta')), { ops: [{ insert: 'ab' }, { insert: 'cd', attributes: { bold: true } }, { insert: '\n' }] });
  });

  it('refuses HTML nested deeper than a browser builds: 400 html_too_deep, no 500', async () => {
    const deep = `${'<div>'.repeat(600)}bottom${'</div>'.repeat(600)}`;
    const res = await put('deep', 'text/html', deep);
    const answer = (await res.json()) as { error: string; code: string };
    assert.deepEqual([res.status, answer.code], [400, 'html_too_deep']);
    assert.match(answer.error, /nested deeper than 512 levels/);
    const fine = `${'<div>'.repeat(200)}bottom${'</div>'.repeat(200)}`;
    assert.equal((await put('deep', 'text/html', fine)).status, 204);
    assert.equal(await get('deep', 'html'), '<p>bottom</p>');
  });

  it('answers an unknown format 400 invalid_format', async () => {
    const res = await fetch(url('text-in', 'xml'), { headers: auth });
    assert.deepEqual([res.status, ((await res.json()) as { code: string }).code], [400, 'invalid_format']);
  });
});
