/**
 * HTML → lines → HTML, rule by rule (RICHTEXT.md ids in the test names), with parse5 as the HTML parser.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isInlineTag, linesToDelta, renderHtml, renderText, type Line } from '../src/index.ts';
import { repairs } from '../src/repairs.ts';
import { linesOf } from './helpers/html.ts';

const L = (text: string, attrs: Record<string, unknown> = {}, inline?: Record<string, unknown>): Line => ({
  ops: text === '' ? [] : [inline ? { insert: text, attributes: inline } : { insert: text }],
  attrs,
});
/** HTML after one normalisation: what the renderer makes of what the parser read. */
const normal = (html: string) => renderHtml(linesOf(html));

describe('schema and inline formats', () => {
  it('[RT-S1][RT-H4][RT-R2] inline tags and styled spans become formats, rendered in a fixed nesting order', () => {
    const lines = linesOf('<p><b>b</b><i>i</i><u>u</u><s>s</s><sub>2</sub><sup>3</sup><code>c</code><a href="https://x.org/">l</a><span style="font-weight: 700; color: #FF0000; background-color: rgb(0, 0, 255)">c</span></p>');
    assert.deepEqual(lines[0]!.ops, [
      { insert: 'b', attributes: { bold: true } }, { insert: 'i', attributes: { italic: true } },
      { insert: 'u', attributes: { underline: true } }, { insert: 's', attributes: { strike: true } },
      { insert: '2', attributes: { script: 'sub' } }, { insert: '3', attributes: { script: 'super' } },
      { insert: 'c', attributes: { code: true } }, { insert: 'l', attributes: { link: 'https://x.org/' } },
      { insert: 'c', attributes: { bold: true, color: '#ff0000', background: 'rgb(0, 0, 255)' } },
    ]);
    assert.equal(
      renderHtml([L('x', {}, { italic: true, link: 'https://a/', bold: true, color: 'red' })]),
      '<p><a href="https://a/"><strong><em><span style="color: red;">x</span></em></strong></a></p>',
    );
  });

  it('[RT-R2] neighbouring characters share open elements', () => {
    const html = renderHtml([{ ops: [{ insert: 'a', attributes: { bold: true } }, { insert: 'b', attributes: { bold: true, italic: true } }, { insert: 'c' }], attrs: {} }]);
    assert.equal(html, '<p><strong>a<em>b</em></strong>c</p>');
  });

  it('[RT-S3][RT-H6][RT-R5] images and in-block breaks are embeds; a trailing <br> is the placeholder', () => {
    const lines = linesOf('<p>a<br>b<img src="https://x.org/p.png" alt="A" width="30" onerror="x()"><br></p><p><br></p>');
    assert.deepEqual(lines, [
      { ops: [{ insert: 'a' }, { insert: { break: true } }, { insert: 'b' }, { insert: { image: 'https://x.org/p.png' }, attributes: { alt: 'A', width: '30' } }], attrs: {} },
      { ops: [], attrs: {} },
    ]);
    assert.equal(renderHtml(lines), '<p>a<br>b<img src="https://x.org/p.png" alt="A" width="30"></p><p><br></p>');
    assert.equal(renderHtml([{ ops: [{ insert: 'a' }, { insert: { break: true } }], attrs: {} }]), '<p>a<br><br></p>');
  });

  it('[RT-S4] text after the last "\\n" is a last line; [RT-R3] plain text is one line per line', () => {
    assert.equal(renderText([L('a'), { ops: [{ insert: 'b' }, { insert: { break: true } }, { insert: 'c' }, { insert: { image: 'x' } }], attrs: {} }]), 'a\nb\nc');
  });
});

describe('whitespace', () => {
  it('[RT-H5] source whitespace collapses, no-break spaces are kept as spaces, zero-width spaces dropped', () => {
    assert.deepEqual(linesOf('<p>\n  a \n  b\u200b  </p>\n<p>x&nbsp;&nbsp;y&nbsp;</p>'), [L('a b'), L('x  y ')]);
  });
  it('[RT-H5] a space next to a zero-width character is kept, as Chromium shows it: not at the line\'s start or end, not collapsed with another', () => {
    // Froala, a bold format turned off after "bold" and a space typed: `<strong>bold</strong>\u200b \u200b\u200b\u200b`.
    assert.deepEqual(linesOf('<p><b>bold</b>\u200b \u200b\u200b</p>'), [{ ops: [{ insert: 'bold', attributes: { bold: true } }, { insert: ' ' }], attrs: {} }]);
    assert.deepEqual(linesOf('<p>\ufeff a</p><p>a \u200b b</p><p>a\u200b<b>\u200b</b> b</p>'), [L(' a'), L('a  b'), L('a b')]);
    // Only beside it: spaces after it at the end of the line, or before it at the start, still collapse away.
    assert.deepEqual(linesOf('<p> \u200bab\u200b  </p><p>x<br>\u200b</p>'), [L('ab'), L('x')]);
  });

  it('[RT-H5] in a <pre> whitespace is kept and a no-break space is a plain space: a paragraph made a code block reads the same', () => {
    const code = { 'code-block': true };
    assert.deepEqual(linesOf('<pre>\u00a0a &nbsp;b  c&nbsp;</pre>'), [L(' a  b  c ', code)]);
    // What an editor's "code block" command makes of a rendered paragraph: its text nodes, in a <pre>.
    const paragraph = renderHtml([L(' x  y ')]);
    const asCode = paragraph.replace(/^<p>/, '<pre>').replace(/<\/p>$/, '</pre>');
    assert.deepEqual(linesOf(asCode), [L(' x  y ', code)]);
  });
  it('[RT-R4] spaces that would collapse are spelled as a contenteditable spells them', () => {
    assert.equal(renderHtml([L(' a  b ')]), '<p>&nbsp;a &nbsp;b&nbsp;</p>');
    assert.equal(normal('<p>&nbsp;a &nbsp;b&nbsp;</p>'), '<p>&nbsp;a &nbsp;b&nbsp;</p>');
  });
});

describe('blocks', () => {
  it('[RT-S2][RT-H3] headings, alignment and paragraph indentation are attributes of the line', () => {
    const lines = linesOf('<h2 style="text-align: center">T</h2><div style="margin-left: 20px">d</div><p style="padding-left: 40px; text-align: left">p</p>');
    assert.deepEqual(lines, [L('T', { header: 2, align: 'center' }), L('d', { 'margin-left': '20px' }), L('p', { 'padding-left': '40px' })]);
    assert.equal(renderHtml(lines), '<h2 style="text-align: center;">T</h2><p style="margin-left: 20px;">d</p><p style="padding-left: 40px;">p</p>');
  });

  it('[RT-P1] conflicting block attributes resolve by precedence', () => {
    assert.equal(renderHtml([L('a', { list: 'bullet', header: 2, 'code-block': true })]), '<ul><li>a</li></ul>');
    assert.equal(renderHtml([L('a', { table: 'r', list: 'bullet', blockquote: true })]), '<table><tbody><tr><td>a</td></tr></tbody></table>');
    assert.equal(renderHtml([L('a', { 'code-block': true, header: 1 })]), '<pre>a</pre>');
    assert.equal(renderHtml([L('a', { indent: 2, 'list-cont': true })]), '<p>a</p>');
  });

  it('[RT-Q1][RT-Q2] adjacent quoted lines are one blockquote; depth nests', () => {
    const lines = linesOf('<blockquote><p>a</p></blockquote><blockquote><h3>b</h3><blockquote>c</blockquote></blockquote>');
    assert.deepEqual(lines, [L('a', { blockquote: true }), L('b', { header: 3, blockquote: true }), L('c', { blockquote: true, 'quote-depth': 2 })]);
    assert.equal(renderHtml(lines), '<blockquote><p>a</p><h3>b</h3><blockquote><p>c</p></blockquote></blockquote>');
  });

  it('[RT-C1] code-block lines are one <pre>; "\\n" splits lines, empty lines survive', () => {
    const lines = linesOf('<pre>a\n\n  b</pre>');
    assert.deepEqual(lines, [L('a', { 'code-block': true }), L('', { 'code-block': true }), L('  b', { 'code-block': true })]);
    assert.equal(renderHtml(lines), '<pre>a\n\n  b</pre>');
    assert.deepEqual(linesOf(renderHtml([L('', { 'code-block': true }), L('x', { 'code-block': true }), L('', { 'code-block': true })])), [L('', { 'code-block': true }), L('x', { 'code-block': true }), L('', { 'code-block': true })]);
  });

  it('[RT-C1] a <br> in a <pre> ends the code line (Enter in Froala\'s and TinyMCE\'s code blocks); a last one is the placeholder', () => {
    const code = (text: string) => L(text, { 'code-block': true });
    assert.deepEqual(linesOf('<pre>a<br>b</pre>'), [code('a'), code('b')]);
    assert.deepEqual(linesOf('<pre>a<br></pre>'), [code('a')]);
    assert.deepEqual(linesOf('<pre>a<br><br></pre>'), [code('a'), code('')]);
    assert.deepEqual(linesOf('<pre>a<br><br>b</pre>'), [code('a'), code(''), code('b')]);
    assert.deepEqual(linesOf('<pre><br></pre>'), [code('')]);
    assert.deepEqual(linesOf('<pre><strong>a</strong><br>b\nc</pre>'), [L('a', { 'code-block': true }, { bold: true }), code('b'), code('c')]);
  });

  it('[RT-C1][RT-P1][RT-R6] a code line holding an embed is shown as its other block formats, and the repair writes that', () => {
    const img = 'https://x.org/a.png';
    const withImage = (attrs: Record<string, unknown>): Line => ({ ops: [{ insert: 'a' }, { insert: { image: img } }, { insert: 'b' }], attrs });
    const withBreak: Line = { ops: [{ insert: 'a' }, { insert: { break: true } }, { insert: 'b' }], attrs: { 'code-block': true } };
    const lines = [L('x', { 'code-block': true }), withImage({ 'code-block': true }), L('y', { 'code-block': true })];
    assert.equal(renderHtml(lines), `<pre>x</pre><p>a<img src="${img}">b</p><pre>y</pre>`);
    assert.equal(renderHtml([withImage({ 'code-block': true, header: 2 })]), `<h2>a<img src="${img}">b</h2>`);
    assert.equal(renderHtml([withBreak]), '<p>a<br>b</p>');
    assert.deepEqual(linesOf(renderHtml(lines)), [L('x', { 'code-block': true }), withImage({}), L('y', { 'code-block': true })]);
    // The repair: one write, the code-block format taken off the line's "\n" (index 2 + 3).
    assert.deepEqual(repairs(linesToDelta(lines)), [{ kind: 'format', index: 5, length: 1, attributes: { 'code-block': null } }]);
  });
});

describe('isInlineTag', () => {
  it('formatting, links and unknown inline tags lie inside a line; blocks, structure and dropped elements do not', () => {
    for (const tag of ['em', 'strong', 'a', 'span', 'mark', 'abbr']) {
      assert.equal(isInlineTag(tag), true, tag);
      assert.equal(linesOf(`<p>a<${tag}>b</${tag}>c</p>`).length, 1, `<${tag}> keeps its line whole`);
    }
    for (const tag of ['p', 'div', 'h2', 'li', 'ul', 'table', 'blockquote', 'pre', 'script', 'hr', 'iframe']) assert.equal(isInlineTag(tag), false, tag);
  });
});

describe('lists', () => {
  it('[RT-L1] nested lists are flat lines with indent, and render nested again', () => {
    const html = '<ul><li>a<ul><li>b<ol><li>c</li></ol></li></ul></li><li>d</li></ul>';
    const lines = linesOf(html);
    assert.deepEqual(lines, [L('a', { list: 'bullet' }), L('b', { list: 'bullet', indent: 1 }), L('c', { list: 'ordered', indent: 2 }), L('d', { list: 'bullet' })]);
    assert.equal(renderHtml(lines), html);
  });

  it('[RT-L1] adjacent lists of one kind merge; a change of kind starts a new list', () => {
    assert.equal(normal('<ul><li>a</li></ul><ul><li>b</li></ul><ol><li>c</li></ol>'), '<ul><li>a</li><li>b</li></ul><ol><li>c</li></ol>');
    assert.equal(renderHtml([L('a', { list: 'checked' }), L('b', { list: 'unchecked' }), L('c', { list: 'bullet' })]), '<ul><li data-checked="true">a</li><li data-checked="false">b</li></ul><ul><li>c</li></ul>');
    assert.deepEqual(linesOf('<ul><li data-checked="true">a</li></ul>'), [L('a', { list: 'checked' })]);
  });

  it('[RT-L2] an item more than one level deeper than the line before is shown one level deeper', () => {
    assert.equal(renderHtml([L('a', { list: 'bullet', indent: 3 }), L('b', { list: 'bullet', indent: 4 })]), '<ul><li>a<ul><li>b</li></ul></li></ul>');
  });

  it('[RT-L3][RT-L5] a continuation paragraph belongs to its item; several lines of an item are paragraphs', () => {
    const html = '<ul><li>one<ul><li>nested</li></ul>tail</li><li><p>p1</p><p>p2</p></li></ul>';
    const lines = linesOf(html);
    assert.deepEqual(lines, [
      L('one', { list: 'bullet' }), L('nested', { list: 'bullet', indent: 1 }), L('tail', { list: 'bullet', 'list-cont': true }),
      L('p1', { list: 'bullet' }), L('p2', { list: 'bullet', 'list-cont': true }),
    ]);
    assert.equal(renderHtml(lines), html);
    assert.equal(renderHtml([L('x', { list: 'bullet', 'list-cont': true })]), '<ul><li>x</li></ul>', 'no item to continue: an item');
  });

  it('[RT-L4] an item that begins with a nested list has an empty first line; both spellings read the same', () => {
    const html = '<ul><li>one</li><li><ul><li>nested</li></ul>tail</li><li>two three four</li></ul>';
    const lines = linesOf(html);
    assert.deepEqual(lines.slice(1, 3), [L('', { list: 'bullet' }), L('nested', { list: 'bullet', indent: 1 })]);
    assert.equal(renderHtml(lines), html);
    const tiny = renderHtml(lines, { lineBeforeLeadingList: true, placeholder: { 'data-mce-bogus': '1' } });
    assert.equal(tiny, '<ul><li>one</li><li><br data-mce-bogus="1"><ul><li>nested</li></ul>tail</li><li>two three four</li></ul>');
    assert.deepEqual(linesOf(tiny), lines);
  });

  it('[RT-L6] headings, quotes and code blocks inside a list item are paragraphs', () => {
    assert.deepEqual(linesOf('<ul><li><h2>h</h2><blockquote>q</blockquote><pre>c</pre></li></ul>'), [
      L('h', { list: 'bullet' }), L('q', { list: 'bullet', 'list-cont': true }), L('c', { list: 'bullet', 'list-cont': true }),
    ]);
  });

  it('[RT-L1] a list inside a blockquote stays inside it', () => {
    const html = '<blockquote><ul><li>a</li></ul><p>b</p></blockquote>';
    assert.equal(normal(html), html);
  });
});

describe('tables', () => {
  it('[RT-T1][RT-T2] cells are lines marked with their row id; a multi-line cell shares a cell id', () => {
    const lines = linesOf('<table><tbody><tr><td>a</td><th colspan="2" style="width: 50%; color: red">b</th></tr><tr><td><p>c</p><p>d</p></td><td>e</td><td></td></tr></tbody></table>');
    assert.deepEqual(lines, [
      L('a', { table: 'r1' }), L('b', { table: 'r1', th: true, colspan: 2, 'cell-style': 'width: 50%;' }),
      L('c', { table: 'r2', cell: 'c3' }), L('d', { table: 'r2', cell: 'c3' }), L('e', { table: 'r2' }), L('', { table: 'r2' }),
    ]);
    assert.equal(
      renderHtml(lines),
      '<table><tbody><tr><td>a</td><th colspan="2" style="width: 50%;">b</th></tr><tr><td><p>c</p><p>d</p></td><td>e</td><td><br></td></tr></tbody></table>',
    );
  });

  it('[RT-T4] a short row is padded with empty cells (colspan and rowspan counted)', () => {
    assert.equal(
      renderHtml([L('a', { table: 'r1' }), L('b', { table: 'r1' }), L('c', { table: 'r2' })]),
      '<table><tbody><tr><td>a</td><td>b</td></tr><tr><td>c</td><td><br></td></tr></tbody></table>',
    );
    assert.equal(
      renderHtml([L('a', { table: 'r1', rowspan: 2 }), L('b', { table: 'r1' }), L('c', { table: 'r2' })]),
      '<table><tbody><tr><td rowspan="2">a</td><td>b</td></tr><tr><td>c</td></tr></tbody></table>',
    );
  });

  it('[RT-T3][RT-T5] table style from the first cell line; thead rows are rows; colgroup dropped', () => {
    const lines = linesOf('<table style="width: 100%; position: fixed"><colgroup><col></colgroup><thead><tr><th>h</th></tr></thead><tbody><tr><td>x</td></tr></tbody></table>');
    assert.deepEqual(lines, [L('h', { table: 'r1', th: true, 'table-style': 'width: 100%;' }), L('x', { table: 'r2', 'table-style': 'width: 100%;' })]);
    assert.equal(renderHtml(lines), '<table style="width: 100%;"><tbody><tr><th>h</th></tr><tr><td>x</td></tr></tbody></table>');
  });

  it('[RT-T6][RT-T7] lists and quotes in a cell are paragraphs; a nested table is unwrapped', () => {
    const lines = linesOf('<table><tr><td><ul><li>a</li></ul><table><tr><td>b</td></tr></table></td></tr></table>');
    const cell = lines[0]!.attrs['cell'];
    assert.ok(typeof cell === 'string');
    assert.deepEqual(lines, [L('a', { table: 'r1', cell }), L('b', { table: 'r1', cell })]);
  });

  it('[RT-T8] content in a table outside cells is lifted out', () => {
    const lines = linesOf('<p>x</p><table><tr><td>a</td></tr></table>');
    assert.deepEqual(lines, [L('x'), L('a', { table: 'r1' })]);
  });
});

describe('sanitising', () => {
  it('[RT-X2] unsafe URLs are dropped; an image without a safe source becomes its alt text', () => {
    const lines = linesOf('<p><a href=" JaVaScRiPt:alert(1)">js</a><a href="data:text/html;base64,AA">d</a><img src="data:image/svg+xml;base64,AA" alt="svg"><img src="javascript:x"><a href="/rel">r</a></p>');
    assert.deepEqual(lines, [{ ops: [{ insert: 'jsdsvg' }, { insert: 'r', attributes: { link: '/rel' } }], attrs: {} }]);
  });

  it('[RT-X1] values a peer wrote straight into the Y.Text are checked again on the way out', () => {
    const html = renderHtml([
      { ops: [{ insert: 'x', attributes: { link: 'javascript:alert(1)', color: 'red;background:url(x)', bold: 'yes' } }, { insert: { image: 'javascript:1' } }, { insert: { video: 'x' } }], attrs: { header: 9, align: 'evil', 'cell-style': 'x' } },
      { ops: [{ insert: '<script>"&' }], attrs: { table: 'r"><script>', 'cell-style': 'width: expression(1)' } },
    ]);
    assert.equal(html, '<p>x</p><table><tbody><tr><td>&lt;script&gt;"&amp;</td></tr></tbody></table>');
  });

  it('[RT-X3][RT-X4] only allowed styles; active elements dropped with their content', () => {
    assert.deepEqual(linesOf('<p style="background-image: url(javascript:alert(1))">s</p><div style="width: expression(alert(1))">e</div><script>x</script><style>p{}</style><iframe srcdoc="x"></iframe><svg><text>t</text></svg><noscript><p>n</p></noscript><p>ok</p>'), [L('s'), L('e'), L('ok')]);
  });

  it('[RT-H2] Froala and TinyMCE markers are skipped; content hidden in a marker is still sanitised', () => {
    const lines = linesOf('<p><span class="fr-marker" data-id="0">\u200b</span>a<span data-mce-type="bookmark">\u200b</span>b</p><p data-f-id="pbf">Powered by Froala</p><p><span data-mce-bogus="1"><img src="x" onerror="alert(1)"></span>m</p><div data-mce-bogus="all">ui</div>');
    assert.deepEqual(lines, [L('ab'), { ops: [{ insert: { image: 'x' } }, { insert: 'm' }], attrs: {} }]);
  });
});

/** Real shapes from the editors (samples from the e2e tests and the editors' own output). */
const SAMPLES = [
  '<p>hello <strong>world</strong> and <em>more</em></p>',
  '<ul><li>first</li><li>second</li><li>third</li></ul>',
  '<ul><li>first<ul><li>hello world</li></ul></li></ul>',
  '<ul><li>one</li><li><ul><li>nested</li></ul>tail</li><li>two three four</li></ul>',
  '<h2>heading line</h2><ol><li>ordered one</li></ol><blockquote><p>quoted line</p></blockquote>',
  '<table style="width: 100%;"><tbody><tr><td style="width: 50%;">a</td><td style="width: 50%;"><br></td></tr><tr><td style="width: 50%;"><br></td><td style="width: 50%;"><br></td></tr></tbody></table>',
  '<p><img src="https://example.com/photo1.jpg" style="width: 300px;" class="fr-fic fr-dib" alt="p"></p>',
  '<p><a href="https://example.com/">link</a> text&nbsp;</p><p><br></p>',
  '<h2>Restored</h2><p>old <strong>version</strong><img src="x"></p>',
  '<p style="text-align: right;">r</p><pre>code\n  indented</pre>',
  // TinyMCE's serialisation: line breaks between block tags, underline as a styled span.
  '<ul>\n<li>a</li>\n<li>b\n<ul>\n<li>c</li>\n</ul>\n</li>\n</ul>\n<p><span style="text-decoration: underline;">u</span></p>',
];

describe('round trips', () => {
  for (const html of SAMPLES) {
    it(`[RT-R1] stable after one normalisation: ${html.slice(0, 60)}`, () => {
      const once = normal(html);
      assert.equal(normal(once), once);
      assert.deepEqual(linesOf(once), linesOf(html));
    });
  }
});

/** The hostile markup of the e2e test (RELIABILITY S6): past Froala/TinyMCE advisories and the usual XSS vectors. */
const HOSTILE = [
  `<img src="x" onerror="top.__pwned=(top.__pwned||0)+1;alert('img')">`,
  `<p>before<script>top.__pwned=(top.__pwned||0)+1;alert('script')</script>after</p>`,
  `<p><a href="javascript:top.__pwned=(top.__pwned||0)+1;alert('href')">js link</a></p>`,
  `<p><a href=" JaVaScRiPt:alert('spaced')">spaced link</a></p>`,
  `<iframe srcdoc="<script>top.__pwned=(top.__pwned||0)+1;alert('srcdoc')</script>"></iframe>`,
  `<iframe src="javascript:top.alert('iframe-src')"></iframe>`,
  `<svg onload="top.__pwned=(top.__pwned||0)+1;alert('svg')"><circle r="5"></circle></svg>`,
  `<p style="background-image: url(javascript:alert('css'))">styled</p>`,
  `<div style="width: expression(alert('expr'))">expression</div>`,
  `<object data="javascript:alert('object')"></object><embed src="javascript:alert('embed')">`,
  `<details open ontoggle="top.__pwned=(top.__pwned||0)+1;alert('toggle')">details</details>`,
  `<math><mi xlink:href="javascript:alert('math')">math</mi></math>`,
  `<noscript><p title="</noscript><img src=x onerror=alert('noscript')>"></p></noscript>`,
  `<form action="javascript:alert('form')"><button formaction="javascript:alert('button')">button</button></form>`,
  `<p><img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9ImFsZXJ0KDEpIi8+" alt="svgdata"></p>`,
  `<p><a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">data link</a></p>`,
  `<p><span data-mce-bogus="1"><img src=x onerror="alert('bogus')"></span>marker</p>`,
  `<p><span class="fr-marker" data-id="0"><img src=x onerror="alert('marker')"></span>froala marker</p>`,
  `<p>END-OF-HOSTILE</p>`,
];

describe('[RT-X1][RT-X2][RT-X4] hostile HTML (RELIABILITY S6)', () => {
  it('nothing active survives parse and render; the harmless text does', () => {
    const out = normal(`<p>replaced</p>${HOSTILE.join('')}`);
    assert.doesNotMatch(out, /onerror|onload|ontoggle|javascript:|<script|<iframe|<object|<embed|<svg|srcdoc|expression\(|url\(|<form|<button|data:text|data:image\/svg/i, out);
    for (const text of ['replaced', 'beforeafter', 'js link', 'spaced link', 'styled', 'expression', 'details', 'button', 'svgdata', 'data link', 'marker', 'froala marker', 'END-OF-HOSTILE']) {
      assert.ok(out.includes(text), `${text} kept: ${out}`);
    }
    assert.equal(normal(out), out);
  });
});
