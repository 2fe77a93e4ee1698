// One document, any editor (API.md): textarea, CodeMirror 5 and Quill on one rich document — typing in each shows in
// all, formatting made in Quill survives plain editors typing and deleting around it, an image does not shift plain
// positions, carets land on the same characters across kinds — and a Quill user typing around what Quill cannot show
// (attribute names of ours, tables, breaks) leaves it in the shared text, as a collaborator in Node reads it. Quill
// with Froala and with TinyMCE: formatting and typing cross in both directions.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { withScene, type Peer, type Scene } from '../lib/browser.ts';
import { codemirror, quill, textarea, type EditorDriver } from '../lib/drivers.ts';
import { froala, tinymce, type RichTextDriver } from '../lib/richtext-drivers.ts';
import { openNodeWriter, type DeltaOp } from '../lib/node-writer.ts';
import { command } from '../lib/richtext.ts';
import { drawn, near, selectWord, union, until, wordBox, type PresenceKind } from '../lib/presence.ts';
import type { WaveServer } from '../lib/server.ts';
import { freshDocId } from '../lib/util.ts';
import { serverAndBrowser } from '../lib/suite.ts';
import '../lib/page-globals.ts';

const TIMEOUT_MS = 120_000;
/** A remote caret is drawn within 4 px of the character it marks. */
const PX = 4;
/** A 2 × 2 PNG (a raster `data:` image is a safe image source, RT-X2). */
const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAYAAABytg0kAAAAEklEQVR4nGNgYPj/n4GBgYEBAB3qA/1hT6iNAAAAAElFTkSuQmCC';

type Kind = 'textarea' | 'codemirror' | 'quill';

let server: WaveServer;
let browser: Browser;

serverAndBrowser((s, b) => {
  server = s;
  browser = b;
});

interface QuillApi {
  focus(): void;
  getText(): string;
  getContents(): { ops: DeltaOp[] };
  setSelection(index: number, length: number, source?: string): void;
  formatText(index: number, length: number, name: string, value: unknown, source?: string): void;
  formatLine(index: number, length: number, name: string, value: unknown, source?: string): void;
  insertEmbed(index: number, type: string, value: unknown, source?: string): void;
  root: HTMLElement;
}

/**
 * What a page shows as plain text: the textarea's value, CodeMirror's document, Quill's text. Embeds are not text in
 * any of them (the plain editors show an image as nothing, RT-R3). Quill always ends with a "\n", and so does a
 * document Quill seeded.
 */
async function plain(peer: Peer, kind: Kind): Promise<string> {
  if (kind === 'quill') return peer.page.evaluate(() => (window.quill as unknown as QuillApi).getText());
  return peer.driver.text(peer.page);
}

/** The index of `word` (first occurrence) in the editor's own positions (Quill's count an embed as one). */
async function indexOf(peer: Peer, kind: Kind, word: string): Promise<number> {
  const i = kind === 'quill'
    ? await peer.page.evaluate((w) => (window.quill as unknown as QuillApi).getContents().ops.map((op) => (typeof op.insert === 'string' ? op.insert : '\ufffc')).join('').indexOf(w), word)
    : (await plain(peer, kind)).indexOf(word);
  assert.ok(i >= 0, `${peer.name} shows ${JSON.stringify(word)}`);
  return i;
}

/**
 * Focuses the editor and selects [from, to) in its own positions; with `word`, the positions are `from`/`to` units
 * around its first occurrence, found in the same step in the page (a peer's change can arrive between two steps and
 * move the word).
 */
async function select(peer: Peer, kind: Kind, from: number, to: number, word?: string): Promise<void> {
  await peer.page.evaluate(([k, a0, b0, w]) => {
    const ta = document.getElementById('editor') as HTMLTextAreaElement;
    let a = a0;
    let b = b0;
    if (w !== null) {
      const text = k === 'quill'
        ? (window.quill as unknown as QuillApi).getContents().ops.map((op) => (typeof op.insert === 'string' ? op.insert : '\ufffc')).join('')
        : k === 'codemirror' ? window.cm!.getValue() : ta.value;
      const at = text.indexOf(w);
      if (at < 0) throw new Error(`the editor does not show ${JSON.stringify(w)}`);
      a += at;
      b += at;
    }
    if (k === 'quill') {
      (window.quill as unknown as QuillApi).focus();
      (window.quill as unknown as QuillApi).setSelection(a, b - a, 'user');
    } else if (k === 'codemirror') {
      const cm = window.cm!;
      cm.focus();
      cm.setSelection(cm.posFromIndex(a), cm.posFromIndex(b));
    } else {
      ta.focus();
      ta.setSelectionRange(a, b);
    }
  }, [kind, from, to, word ?? null] as const);
}

/** Types `text` right after (or before) `word`. */
async function typeBy(peer: Peer, kind: Kind, word: string, side: 'after' | 'before', text: string): Promise<void> {
  const at = side === 'after' ? word.length : 0;
  await select(peer, kind, at, at, word);
  await peer.page.keyboard.type(text);
}

/** Deletes `text` (its first occurrence) with Backspace over a selection. */
async function remove(peer: Peer, kind: Kind, text: string): Promise<void> {
  await select(peer, kind, 0, text.length, text);
  await peer.page.keyboard.press('Backspace');
}

/** Waits until every page shows `want` (plain text, Quill's final "\n" included). */
async function allShow(peers: ReadonlyArray<[Peer, Kind]>, want: string): Promise<void> {
  for (const [peer, kind] of peers) await until(`${peer.name} (${kind}) to show ${JSON.stringify(want)}`, () => plain(peer, kind), (t) => t === want);
}

/** Quill's Delta of the page, for formatting checks. */
function contents(peer: Peer): Promise<DeltaOp[]> {
  return peer.page.evaluate(() => (window.quill as unknown as QuillApi).getContents().ops);
}

async function openThree(scene: Scene, label: string, text: string): Promise<{ ann: Peer; bob: Peer; cy: Peer; all: Array<[Peer, Kind]> }> {
  const doc = freshDocId(label);
  // Quill starts the document: it is rich from its first character (Quill's Delta, with its final "\n").
  const ann = await scene.open('Ann', quill, { doc, text });
  const bob = await scene.open('Bob', textarea, { doc });
  const cy = await scene.open('Cy', codemirror, { doc });
  return { ann, bob, cy, all: [[ann, 'quill'], [bob, 'textarea'], [cy, 'codemirror']] };
}

describe('textarea + CodeMirror + Quill on one document', () => {
  it('typing in each shows in all', { timeout: TIMEOUT_MS }, async () => {
    await withScene(browser, server, 'any-typing', async (scene) => {
      const { ann, bob, cy, all } = await openThree(scene, 'any-typing', 'alpha beta gamma');
      await allShow(all, 'alpha beta gamma\n');
      await typeBy(ann, 'quill', 'alpha', 'after', ' quill1');
      await allShow(all, 'alpha quill1 beta gamma\n');
      await typeBy(bob, 'textarea', 'beta', 'after', ' text1');
      await allShow(all, 'alpha quill1 beta text1 gamma\n');
      await typeBy(cy, 'codemirror', 'gamma', 'after', ' cm1\nnext');
      await allShow(all, 'alpha quill1 beta text1 gamma cm1\nnext\n');
      await typeBy(ann, 'quill', 'next', 'after', ' quill2');
      await allShow(all, 'alpha quill1 beta text1 gamma cm1\nnext quill2\n');
    });
  });

  it('a bold word written in Quill stays bold while textarea and CodeMirror users type around it and delete other words', { timeout: TIMEOUT_MS }, async () => {
    await withScene(browser, server, 'any-bold', async (scene) => {
      const { ann, bob, cy, all } = await openThree(scene, 'any-bold', 'one two three four five');
      await allShow(all, 'one two three four five\n');
      const at = await indexOf(ann, 'quill', 'three');
      await ann.page.evaluate((i) => (window.quill as unknown as QuillApi).formatText(i, 5, 'bold', true, 'user'), at);
      // The bold has reached the plain editors' documents (read through the demo's `window.coedit`, not public API):
      // text typed at a format's edge while the format is on its way may go inside it (the README's known limits).
      await until(
        'the bold in every document',
        () => Promise.all([bob, cy].map((p) => p.page.evaluate(() => JSON.stringify((window.coedit as unknown as { session: { doc: { getText(name: string): { toDelta(): unknown } } } }).session.doc.getText('text').toDelta())))),
        (deltas) => deltas.every((d) => d.includes('"bold":true')),
      );
      // Before "three" the text takes the unformatted space before it; after, the bold "e" it follows.
      await typeBy(bob, 'textarea', 'three', 'before', 'AA ');
      await typeBy(cy, 'codemirror', 'three', 'after', 'BB');
      await allShow(all, 'one two AA threeBB four five\n');
      await remove(bob, 'textarea', 'one ');
      await remove(cy, 'codemirror', ' five');
      await allShow(all, 'two AA threeBB four\n');
      assert.deepEqual(await contents(ann), [{ insert: 'two AA ' }, { insert: 'threeBB', attributes: { bold: true } }, { insert: ' four\n' }]);
    });
  });

  it('an image in Quill does not shift textarea and CodeMirror positions', { timeout: TIMEOUT_MS }, async () => {
    await withScene(browser, server, 'any-image', async (scene) => {
      const { ann, bob, cy, all } = await openThree(scene, 'any-image', 'abc def ghi');
      await allShow(all, 'abc def ghi\n');
      await ann.page.evaluate((src) => (window.quill as unknown as QuillApi).insertEmbed(4, 'image', src, 'user'), PNG);
      await until('the image in Quill', () => contents(ann), (ops) => ops.some((op) => typeof op.insert === 'object'));
      // The image shows as nothing in the plain editors: their text is unchanged, and typing lands where it is typed.
      await typeBy(bob, 'textarea', 'def', 'after', 'T');
      await typeBy(cy, 'codemirror', 'ghi', 'before', 'C');
      await remove(bob, 'textarea', 'abc');
      await allShow(all, ' defT Cghi\n');
      assert.deepEqual(await contents(ann), [{ insert: ' ' }, { insert: { image: PNG } }, { insert: 'defT Cghi\n' }]);
    });
  });

  it('a caret placed in one kind shows on the same characters in the others, past an image', { timeout: TIMEOUT_MS }, async () => {
    await withScene(browser, server, 'any-presence', async (scene) => {
      const { ann, bob, cy, all } = await openThree(scene, 'any-presence', 'r1z lorem\nr2z alpha bravo charlie delta echo');
      await allShow(all, 'r1z lorem\nr2z alpha bravo charlie delta echo\n');
      // An image before every word below: Quill's indices (and the Y.Text's) run one ahead of the plain editors'.
      await ann.page.evaluate((src) => (window.quill as unknown as QuillApi).insertEmbed(4, 'image', src, 'user'), PNG);
      await until('the image in Quill', () => contents(ann), (ops) => ops.some((op) => typeof op.insert === 'object'));
      const rounds: Array<[Peer, Kind, string]> = [[ann, 'quill', 'bravo'], [bob, 'textarea', 'charlie'], [cy, 'codemirror', 'delta']];
      for (const [selector, kind, word] of rounds) {
        const at = await indexOf(selector, kind, word);
        await select(selector, kind, at, at + word.length);
        for (const [viewer, viewerKind] of all) {
          if (viewer !== selector) await caretOnWord(viewer.page, viewerKind, selector.name, word);
        }
      }
    });
  });
});

/** A page's plain text without the final "\n" a Quill-seeded document (and Quill itself) ends with. */
async function shown(peer: Peer, kind: Kind): Promise<string> {
  return (await plain(peer, kind)).replace(/\n$/, '');
}

const KINDS: ReadonlyArray<[Kind, EditorDriver]> = [['textarea', textarea], ['codemirror', codemirror], ['quill', quill]];

describe('whichever kind starts first', () => {
  for (const [firstKind, firstDriver] of KINDS) {
    it(`${firstKind} seeds the text the others read; forceSync and content_changed work from every kind`, { timeout: TIMEOUT_MS }, async () => {
      await withScene(browser, server, `any-seed-${firstKind}`, async (scene) => {
        const doc = freshDocId(`any-seed-${firstKind}`);
        const first = await scene.open('First', firstDriver, { doc, text: 'seeded line\nsecond line' });
        const others = await Promise.all(KINDS.filter(([k]) => k !== firstKind).map(async ([kind, driver]) => [await scene.open(kind, driver, { doc, text: 'not the seed' }), kind] as [Peer, Kind]));
        const all: Array<[Peer, Kind]> = [[first, firstKind], ...others];
        for (const [peer, kind] of all) await until(`${peer.name} (${kind}) to show the seed`, () => shown(peer, kind), (t) => t === 'seeded line\nsecond line');
        for (const [peer] of all) assert.equal(await peer.page.evaluate(() => window.coedit!.getState()), 'online');

        // forceSync in each kind's own format, in turn; every page shows it and reports a remote content change.
        for (const [peer, kind] of all) {
          const text = `restored by ${kind}`;
          const before = await Promise.all(all.map(([p]) => p.page.evaluate(() => window.waveLog!.content_changed.filter((e) => e.source === 'remote').length)));
          await peer.page.evaluate(([k, t]) => window.coedit!.forceSync(k === 'quill' ? { ops: [{ insert: t, attributes: { bold: true } }, { insert: '\n' }] } : t), [kind, text] as const);
          for (const [other, otherKind] of all) await until(`${other.name} (${otherKind}) to show ${kind}'s forceSync`, () => shown(other, otherKind), (t) => t === text);
          for (const [i, [other]] of all.entries()) {
            if (other === peer) continue;
            const remote = await other.page.evaluate(() => window.waveLog!.content_changed.filter((e) => e.source === 'remote').length);
            assert.ok(remote > before[i]!, `${other.name}: content_changed {source: 'remote'} after ${kind}'s forceSync`);
          }
          if (kind === 'quill') {
            const [quillPeer] = all.find(([, k]) => k === 'quill')!;
            assert.deepEqual(await contents(quillPeer), [{ insert: text, attributes: { bold: true } }, { insert: '\n' }], "Quill's forceSync keeps its formatting");
          }
        }
      });
    });
  }
});

/** Waits until `page` draws `name`'s caret at the end of `word` and its selection over `word`. */
async function caretOnWord(page: Page, kind: PresenceKind, name: string, word: string): Promise<void> {
  await until(
    `${name}'s caret and selection on "${word}" in the ${kind} page`,
    async () => ({ word: await wordBox(page, kind, word), drawn: await drawn(page, name) }),
    ({ word: w, drawn: d }) => {
      if (!w || !d.caret) return false;
      const sel = union(d.selection);
      const caretX = (d.caret.left + d.caret.right) / 2;
      return near(caretX, w.right, PX) && near(d.caret.top, w.top, PX) && near(d.caret.bottom, w.bottom, PX) &&
        sel !== null && near(sel.left, w.left, PX) && near(sel.right, w.right, PX);
    },
  );
}

/** A line of the shared text: its characters (a break embed as ⏎, any other embed as □) and its "\n"'s attributes. */
function lines(delta: readonly DeltaOp[]): Array<{ text: string; attrs: Record<string, unknown> }> {
  const out: Array<{ text: string; attrs: Record<string, unknown> }> = [];
  let text = '';
  for (const op of delta) {
    if (typeof op.insert !== 'string') {
      text += (op.insert as Record<string, unknown>).break === true ? '⏎' : '□';
      continue;
    }
    const parts = op.insert.split('\n');
    for (let i = 0; i < parts.length - 1; i++) {
      out.push({ text: text + parts[i], attrs: { ...(op.attributes ?? {}) } });
      text = '';
    }
    text += parts[parts.length - 1];
  }
  if (text) out.push({ text, attrs: {} });
  return out;
}

/** A document as Froala and TinyMCE write it: our own attribute names, a table with a header cell and a colspan, a break. */
const HTML_EDITORS_DOC: DeltaOp[] = [
  { insert: 'Intro para' }, { insert: '\n' },
  { insert: 'item one' }, { insert: '\n', attributes: { list: 'bullet' } },
  { insert: 'second para' }, { insert: '\n', attributes: { list: 'bullet', 'list-cont': true } },
  { insert: 'deep quote' }, { insert: '\n', attributes: { blockquote: true, 'quote-depth': 2 } },
  { insert: 'moved aside' }, { insert: '\n', attributes: { 'margin-left': '40px' } },
  { insert: 'head' }, { insert: '\n', attributes: { table: 'r1', th: true, colspan: 2, 'table-style': 'width: 100%' } },
  { insert: 'left' }, { insert: '\n', attributes: { table: 'r2', 'cell-style': 'width: 30%' } },
  { insert: 'right' }, { insert: '\n', attributes: { table: 'r2', cell: 'c9' } },
  { insert: 'more right' }, { insert: '\n', attributes: { table: 'r2', cell: 'c9' } },
  { insert: 'before' }, { insert: { break: true } }, { insert: 'after break' }, { insert: '\n' },
  { insert: 'Outro' }, { insert: '\n' },
];

describe('Quill on a document written by the HTML editors', () => {
  it('typing before, after and inside lines Quill cannot show fully leaves their attributes and embeds in the shared text', { timeout: TIMEOUT_MS }, async () => {
    await withScene(browser, server, 'any-quill-keeps', async (scene) => {
      const doc = freshDocId('any-quill-keeps');
      const writer = await openNodeWriter(server, doc, HTML_EDITORS_DOC);
      try {
        const ann = await scene.open('Ann', quill, { doc });
        await until('Ann to show the document', () => plain(ann, 'quill'), (t) => t.includes('Outro'));
        const typed: Array<[string, 'after' | 'before', string]> = [
          ['Intro', 'after', ' q1'], ['item', 'after', ' q2'], ['second', 'after', ' q3'], ['deep', 'after', ' q4'],
          ['moved', 'after', ' q5'], ['head', 'after', ' q6'], ['left', 'before', 'q7 '], ['right', 'after', ' q8'],
          ['more', 'after', ' q9'], ['after', 'before', 'q10 '], ['break', 'after', ' q11'], ['Outro', 'after', ' q12'],
        ];
        for (const [word, side, text] of typed) await typeBy(ann, 'quill', word, side, text);
        const want = lines(HTML_EDITORS_DOC).map((line) => ({ ...line }));
        for (const [word, side, text] of typed) {
          const line = want.find((l) => new RegExp(`(^|[^a-z])${word}([^a-z]|$)`).test(l.text))!;
          line.text = line.text.replace(new RegExp(`(^|[^a-z])${word}(?=[^a-z]|$)`), (m) => (side === 'after' ? m + text : m.slice(0, m.length - word.length) + text + word));
        }
        const got = await writer.until('every word Ann typed in the shared text', (delta) => typed.every(([, , t]) => JSON.stringify(delta).includes(t.trim())));
        assert.deepEqual(lines(got), want);
      } finally {
        await writer.stop();
      }
    });
  });
});

/** Every item of the shared vocabulary (README "One document, any editor"), as the HTML editors write it. */
const VOCABULARY: DeltaOp[] = [
  { insert: 'Heading' }, { insert: '\n', attributes: { header: 1 } },
  { insert: 'b', attributes: { bold: true } }, { insert: ' ' }, { insert: 'i', attributes: { italic: true } }, { insert: ' ' },
  { insert: 'u', attributes: { underline: true } }, { insert: ' ' }, { insert: 's', attributes: { strike: true } }, { insert: ' ' },
  { insert: 'site', attributes: { link: 'https://example.com/' } }, { insert: { break: true } }, { insert: 'after' }, { insert: '\n' },
  { insert: 'item' }, { insert: '\n', attributes: { list: 'bullet' } },
  { insert: 'nested' }, { insert: '\n', attributes: { list: 'bullet', indent: 1 } },
  { insert: 'more of nested' }, { insert: '\n', attributes: { list: 'bullet', indent: 1, 'list-cont': true } },
  { insert: 'quoted' }, { insert: '\n', attributes: { blockquote: true } },
  { insert: 'let x = 1;' }, { insert: '\n', attributes: { 'code-block': true } },
  { insert: 'pic' }, { insert: { image: PNG } }, { insert: '\n', attributes: { 'margin-left': '40px' } },
  { insert: 'th1' }, { insert: '\n', attributes: { table: 'r1', th: true, colspan: 2 } },
  { insert: 'td1' }, { insert: '\n', attributes: { table: 'r2' } }, { insert: 'td2' }, { insert: '\n', attributes: { table: 'r2' } },
];

describe('what each editor shows of the shared vocabulary', () => {
  it('Quill shows the formats, the break, the image and the table; textarea and CodeMirror show the plain text', { timeout: TIMEOUT_MS }, async () => {
    await withScene(browser, server, 'any-vocabulary', async (scene) => {
      const doc = freshDocId('any-vocabulary');
      const writer = await openNodeWriter(server, doc, VOCABULARY);
      try {
        const ann = await scene.open('Ann', quill, { doc });
        const bob = await scene.open('Bob', textarea, { doc });
        const cy = await scene.open('Cy', codemirror, { doc });
        const plainText = 'Heading\nb i u s site\nafter\nitem\nnested\nmore of nested\nquoted\nlet x = 1;\npic\nth1\ntd1\ntd2\n';
        await allShow([[bob, 'textarea'], [cy, 'codemirror']], plainText);
        const html = await until('Quill to show the document', () => ann.page.evaluate(() => (window.quill as unknown as QuillApi).root.innerHTML), (h) => h.includes('td2'));
        const expected: Array<[string, RegExp]> = [
          ['heading', /<h1>Heading<\/h1>/], ['bold', /<strong>b<\/strong>/], ['italic', /<em>i<\/em>/], ['underline', /<u>u<\/u>/],
          ['strike', /<s>s<\/s>/], ['link', /<a href="https:\/\/example\.com\/"[^>]*>site<\/a>/], ['break', /site<\/a><br class="wave-break">after/],
          ['list', /<li data-list="bullet">(<span class="ql-ui"[^>]*><\/span>)?item<\/li>/],
          ['indent', /<li data-list="bullet" class="ql-indent-1">(<span class="ql-ui"[^>]*><\/span>)?nested<\/li>/],
          ['blockquote', /<blockquote>quoted<\/blockquote>/], ['code block', /ql-code-block[^>]*>let x = 1;/], ['image', /pic<img src="data:image\/png/],
          ['table', /<table>[\s\S]*<td[^>]*>th1<\/td>[\s\S]*<\/tr><tr[^>]*><td[^>]*>td1<\/td><td[^>]*>td2<\/td>/],
        ];
        const missing = expected.filter(([, re]) => !re.test(html)).map(([name]) => name);
        assert.deepEqual(missing, [], `Quill shows each format; its HTML: ${html}`);
        // Shown by the HTML editors only: kept, not shown in Quill.
        assert.ok(!/colspan|margin-left/.test(html), 'Quill does not show colspan or paragraph styles');
        const delta = await writer.until('the document unchanged by the three editors', (d) => d.length > 0);
        assert.deepEqual(lines(delta), lines(VOCABULARY), 'opening the document wrote nothing');
      } finally {
        await writer.stop();
      }
    });
  });
});

for (const rich of [froala, tinymce] as RichTextDriver[]) {
  describe(`what ${rich.name} shows of the shared vocabulary`, () => {
    it(`${rich.name} shows every item, the ones Quill cannot show included`, { timeout: TIMEOUT_MS }, async () => {
      await withScene(browser, server, `any-vocabulary-${rich.name}`, async (scene) => {
        const doc = freshDocId(`any-vocabulary-${rich.name}`);
        const writer = await openNodeWriter(server, doc, VOCABULARY);
        try {
          const bob = await scene.open('Bob', rich, { doc });
          const html = await until(`${rich.name} to show the document`, () => rich.html(bob.page), (h) => h.includes('td2'));
          const expected: Array<[string, RegExp]> = [
            ['heading', /<h1[^>]*>Heading<\/h1>/], ['bold', /<(strong|b)>b<\/(strong|b)>/], ['italic', /<(em|i)>i<\/(em|i)>/],
            ['underline', /<u>u<\/u>/], ['strike', /<(s|strike|del)>s<\/(s|strike|del)>/], ['link', /<a href="https:\/\/example\.com\/"[^>]*>site<\/a>/],
            ['break', /site<\/a><br>after/], ['nested list', /<li>item\s*<ul>\s*<li>/], ['list item second paragraph', /<li>\s*<p>nested<\/p>\s*<p>more of nested<\/p>/],
            ['blockquote', /<blockquote[^>]*>[\s\S]*quoted/], ['code block', /<pre[^>]*>[\s\S]*let x = 1;/], ['image', /<img[^>]*src="data:image\/png/],
            ['paragraph style', /margin-left: ?40px/], ['table header cell with colspan', /<th[^>]*colspan="2"[^>]*>[\s\S]*th1/],
            ['table cells', /<td[^>]*>[\s\S]*td1[\s\S]*<\/td>[\s\S]*<td[^>]*>[\s\S]*td2/],
          ];
          const missing = expected.filter(([, re]) => !re.test(html)).map(([name]) => name);
          assert.deepEqual(missing, [], `${rich.name} shows each item; its HTML: ${html}`);
        } finally {
          await writer.stop();
        }
      });
    });
  });
}

/** Quill and a rich-text editor of the HTML binding on one document, each writing formatting the other must show. */
for (const rich of [froala, tinymce] as RichTextDriver[]) {
  describe(`Quill ↔ ${rich.name}`, () => {
    it(`formatting, typing and carets cross between Quill and ${rich.name} in both directions`, { timeout: TIMEOUT_MS }, async () => {
      await withScene(browser, server, `any-quill-${rich.name}`, async (scene) => {
        const doc = freshDocId(`any-quill-${rich.name}`);
        const ann = await scene.open('Ann', quill, { doc, text: 'Title\nsome words here\nitem' });
        await ann.page.evaluate(() => {
          (window.quill as unknown as QuillApi).formatLine(0, 1, 'header', 1, 'user');
          (window.quill as unknown as QuillApi).formatText(11, 5, 'bold', true, 'user');
          (window.quill as unknown as QuillApi).formatLine(22, 1, 'list', 'bullet', 'user');
        });
        const bob = await scene.open('Bob', rich, { doc });
        await until(`${rich.name} to show Quill's heading, bold word and list`, () => rich.html(bob.page), (html) =>
          /<h1[^>]*>Title<\/h1>/.test(html) && /<(strong|b)>words<\/(strong|b)>/.test(html) && /<ul[^>]*>\s*<li[^>]*>item<\/li>\s*<\/ul>/.test(html));
        await bob.driver.focusEnd(bob.page);
        await bob.driver.type(bob.page, ' fromrich');
        await until(`Quill to show ${rich.name}'s typing in the list item`, () => contents(ann), (ops) =>
          JSON.stringify(ops).includes('item fromrich') && ops.some((op) => op.insert === '\n' && op.attributes?.list === 'bullet'));
        await typeBy(ann, 'quill', 'some', 'after', ' fromquill');
        await until(`${rich.name} to show Quill's typing, the bold word still bold`, () => rich.html(bob.page), (html) =>
          html.includes('some fromquill') && /<(strong|b)>words<\/(strong|b)>/.test(html));
        // Presence both ways: a selection in one editor is drawn over the same word in the other.
        const at = await indexOf(ann, 'quill', 'here');
        await select(ann, 'quill', at, at + 'here'.length);
        await caretOnWord(bob.page, rich.kind, 'Ann', 'here');
        await selectWord(bob.page, rich.kind, 'Title');
        await caretOnWord(ann.page, 'quill', 'Bob', 'Title');
      });
    });
  });
}

describe('Quill, Froala and TinyMCE on one document', () => {
  it('a table written in TinyMCE survives Quill typing around and inside it and is still a table in Froala; Froala and TinyMCE see each other\'s typing and carets', { timeout: TIMEOUT_MS }, async () => {
    await withScene(browser, server, 'any-three-table', async (scene) => {
      const doc = freshDocId('any-three-table');
      const cid = await scene.open('Cid', tinymce, { doc });
      await command(cid.page, 'setHtml', { html: '<p>before</p><table><tbody><tr><td>c1</td><td>c2</td></tr><tr><td>c3</td><td>c4</td></tr></tbody></table><p>after</p>' });
      const ann = await scene.open('Ann', quill, { doc });
      const bob = await scene.open('Bob', froala, { doc });
      await until('Quill to show the table and the paragraphs', () => plain(ann, 'quill'), (t) => t === 'before\nc1\nc2\nc3\nc4\nafter\n');
      await typeBy(ann, 'quill', 'before', 'after', ' more');
      await typeBy(ann, 'quill', 'c1', 'after', 'X');
      await typeBy(ann, 'quill', 'after', 'after', ' end');
      const table = (html: string) => html.replace(/\s*\n\s*/g, '');
      const shows = (html: string) => {
        const h = table(html);
        return h.includes('before more') && h.includes('after end') && /<table[^>]*>.*<td[^>]*>c1X<\/td><td[^>]*>c2<\/td><\/tr><tr[^>]*><td[^>]*>c3<\/td><td[^>]*>c4<\/td>.*<\/table>/.test(h);
      };
      const froalaHtml = await until("Froala to show Quill's typing and TinyMCE's table, two rows of two cells", () => froala.html(bob.page), shows);
      assert.equal(table(froalaHtml).split('<table').length, 2, `one table in Froala: ${froalaHtml}`);
      await until("TinyMCE to show Quill's typing in its table", () => tinymce.html(cid.page), shows);
      // Froala and TinyMCE: typing in a cell crosses, and so do carets.
      await froala.focusEnd(bob.page);
      await selectWord(bob.page, 'froala', 'c4');
      await bob.page.keyboard.press('End');
      await froala.type(bob.page, 'F');
      await until("TinyMCE to show Froala's typing in the last cell", () => tinymce.html(cid.page), (h) => /<td[^>]*>c4F<\/td>/.test(table(h)));
      await selectWord(bob.page, 'froala', 'before');
      await caretOnWord(cid.page, 'tinymce', 'Bob', 'before');
      await selectWord(cid.page, 'tinymce', 'after');
      await caretOnWord(bob.page, 'froala', 'Cid', 'after');
      await caretOnWord(ann.page, 'quill', 'Cid', 'after');
    });
  });
});

/** A Delta's text with each embed as U+FFFC: one character per position, as the editor and the shared text count. */
function flat(ops: readonly DeltaOp[]): string {
  return ops.map((op) => (typeof op.insert === 'string' ? op.insert : '\ufffc')).join('');
}

/** Quill's text and embeds equal the shared text's, position for position. */
async function quillMatches(peer: Peer, ytext: { toDelta(): unknown }, what: string): Promise<void> {
  assert.equal(flat(await contents(peer)), flat(ytext.toDelta() as DeltaOp[]), `${what}: Quill's text and embeds, position for position, are the shared text's`);
}

function sortedJson(o: Record<string, unknown>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b))));
}

/** The block formats Quill's document gives the line that holds `word` (its "\n"'s attributes). */
async function quillLineFormats(peer: Peer, word: string): Promise<Record<string, unknown>> {
  return peer.page.evaluate((w) => {
    const ops = (window.quill as unknown as QuillApi).getContents().ops;
    const text = ops.map((op) => (typeof op.insert === 'string' ? op.insert : '\ufffc')).join('');
    let at = text.indexOf('\n', text.indexOf(w));
    for (const op of ops) {
      const n = typeof op.insert === 'string' ? op.insert.length : 1;
      if (at < n) return (op.attributes ?? {}) as Record<string, unknown>;
      at -= n;
    }
    return {};
  }, word);
}

describe('Quill on a line whose shared attributes name two of its block formats', () => {
  // Concurrent block changes merge per key ([RT-S2]): one person's heading and another's list leave a line with both,
  // which Quill, one block format per line, cannot hold. Quill shows the one the renderer shows ([RT-P1]: a list
  // over a code block over a heading; a quote under any of them), whatever order the keys arrived in, and shows the
  // other as soon as the first goes.
  it('Quill shows the list over the heading, and each once the other is removed, whichever side removes it', { timeout: TIMEOUT_MS }, async () => {
    await withScene(browser, server, 'any-quill-two-blocks', async (scene) => {
      const doc = freshDocId('any-quill-two-blocks');
      const writer = await openNodeWriter(server, doc, [{ insert: 'alpha\nbeta\ngamma\n' }]);
      try {
        const ann = await scene.open('Ann', quill, { doc });
        await until('Ann to show the document', () => plain(ann, 'quill'), (t) => t.includes('gamma'));
        const y = writer.ytext;
        const nl = (word: string) => y.toString().indexOf('\n', y.toString().indexOf(word));
        const shows = (word: string, want: Record<string, unknown>) =>
          until(`Quill's line ${word} to be ${JSON.stringify(want)}`, () => quillLineFormats(ann, word), (f) => sortedJson(f) === sortedJson(want));
        // The list first, then the heading (the heading is the last key Quill is given).
        y.format(nl('alpha'), 1, { list: 'ordered' });
        y.format(nl('alpha'), 1, { header: 2 });
        await shows('alpha', { list: 'ordered' });
        y.format(nl('alpha'), 1, { header: null });
        await shows('alpha', { list: 'ordered' });
        // The heading first, then the list with an indent; the list goes, the heading shows.
        y.format(nl('beta'), 1, { header: 2 });
        y.format(nl('beta'), 1, { list: 'bullet', indent: 1 });
        await shows('beta', { indent: 1, list: 'bullet' });
        y.format(nl('beta'), 1, { list: null });
        await shows('beta', { header: 2, indent: 1 });
        // Both in one insert; then Ann, in Quill, removes the list she sees: the heading shows.
        y.insert(nl('gamma') + 1, 'delta\n', {});
        y.format(nl('delta'), 1, { header: 3, list: 'bullet', blockquote: true });
        await shows('delta', { list: 'bullet' });
        await ann.page.evaluate((i) => (window.quill as unknown as QuillApi).formatLine(i, 0, 'list', false, 'user'), nl('delta'));
        await writer.until('the list removed in the shared text', (delta) => sortedJson(delta[delta.length - 1]?.attributes ?? {}) === sortedJson({ header: 3, blockquote: true }));
        await shows('delta', { header: 3 });
        await ann.page.evaluate((i) => (window.quill as unknown as QuillApi).formatLine(i, 0, 'header', false, 'user'), nl('delta'));
        await shows('delta', { blockquote: true });
      } finally {
        await writer.stop();
      }
    });
  });
});

describe('Quill on a line that is a code block for a while', () => {
  // Quill's code block holds plain text only ([RT-C1]): Quill drops the inline formats of a line made a code block,
  // and those written there by a peer. The shared text keeps them, and once the line is no code block Quill shows
  // them again, as the HTML editors do.
  it('the bold word of a line and the italic one a peer wrote while it was a code block show in Quill once it is a paragraph again', { timeout: TIMEOUT_MS }, async () => {
    await withScene(browser, server, 'any-quill-code-marks', async (scene) => {
      const doc = freshDocId('any-quill-code-marks');
      const writer = await openNodeWriter(server, doc, [{ insert: 'alpha ' }, { insert: 'bold', attributes: { bold: true } }, { insert: ' gamma\nnext\n' }]);
      try {
        const ann = await scene.open('Ann', quill, { doc });
        await until('Ann to show the document', () => plain(ann, 'quill'), (t) => t.includes('next'));
        const y = writer.ytext;
        const nl = y.toString().indexOf('\n');
        const marks = async () => (await contents(ann)).filter((op) => typeof op.insert === 'string' && op.attributes && (op.attributes.bold || op.attributes.italic)).map((op) => `${op.insert as string}:${Object.keys(op.attributes!).sort().join(',')}`);
        y.format(nl, 1, { 'code-block': true });
        await until("Quill to show the line as a code block", () => quillLineFormats(ann, 'alpha'), (f) => f['code-block'] !== undefined);
        y.format(y.toString().indexOf('gamma'), 'gamma'.length, { italic: true });
        await writer.until('the italic word in the shared text', (delta) => delta.some((op) => op.insert === 'gamma' && op.attributes?.italic === true));
        y.format(nl, 1, { 'code-block': null });
        await until('Quill to show the bold and the italic word again', marks, (m) => m.join(' ') === 'bold:bold gamma:italic');
        assert.deepEqual(await quillLineFormats(ann, 'alpha'), {}, 'a paragraph again');
      } finally {
        await writer.stop();
      }
    });
  });

  // A code block holds text only; only concurrent edits put an embed into a code line (an image inserted while a peer
  // makes its line a code block). Every editor shows such a line as no code block ([RT-C1]); Quill, whose code
  // block would drop the image from its own document, keeps it and its positions equal to the shared text's.
  it('an image that lands in a code line, by an insert, a format or a merge, stays in Quill and Quill types after it', { timeout: TIMEOUT_MS }, async () => {
    await withScene(browser, server, 'any-quill-code-image', async (scene) => {
      const doc = freshDocId('any-quill-code-image');
      const writer = await openNodeWriter(server, doc, [
        { insert: 'alpha beta' }, { insert: '\n', attributes: { 'code-block': true } },
        { insert: 'pic ' }, { insert: { image: PNG } }, { insert: ' gamma\n' },
        { insert: 'delta' }, { insert: '\n', attributes: { 'code-block': true } },
        { insert: 'omega\n' },
      ]);
      try {
        const ann = await scene.open('Ann', quill, { doc });
        await until('Ann to show the document', () => plain(ann, 'quill'), (t) => t.includes('omega'));
        const y = writer.ytext;
        const text = () => flat(y.toDelta() as DeltaOp[]);
        const images = async () => (await contents(ann)).filter((op) => typeof op.insert === 'object' && 'image' in op.insert).length;
        const sameAsShared = (what: string) => quillMatches(ann, y, what);
        // An image inserted into the code line.
        y.insertEmbed(y.toString().indexOf('beta'), { image: PNG });
        await until('Quill to show the code line with the image as a paragraph', () => quillLineFormats(ann, 'alpha'), (f) => f['code-block'] === undefined);
        assert.equal(await images(), 2, 'Quill shows both images');
        await sameAsShared('after the insert');
        await typeBy(ann, 'quill', 'beta', 'after', 'X');
        await writer.until("Ann's typing right after beta", () => text().includes('\ufffcbetaX\n'));
        // The line with the other image made a code block.
        const picEnd = () => text().indexOf('\n', text().indexOf('pic'));
        y.format(picEnd(), 1, { 'code-block': true });
        await typeBy(ann, 'quill', 'gamma', 'after', 'Y');
        await writer.until("Ann's typing right after gamma", () => text().includes(' gammaY\n'));
        assert.equal(await images(), 2, 'Quill still shows both images');
        assert.equal((await quillLineFormats(ann, 'gamma'))['code-block'], undefined, 'the line with the image is no code block in Quill');
        // The line with the image merged into the code line after it: the merged line holds the image.
        y.delete(picEnd(), 1);
        await until('Quill to show gammaYdelta on one line', () => plain(ann, 'quill'), (t) => t.includes('gammaYdelta'));
        assert.equal(await images(), 2, 'Quill still shows both images after the merge');
        await sameAsShared('after the merge');
        assert.ok(text().includes('gammaYdelta'));
        // The image out of the first line: it is a code block again in Quill.
        y.delete(text().indexOf('\ufffc'), 1);
        await until('Quill to show the first line as a code block again', () => quillLineFormats(ann, 'alpha'), (f) => f['code-block'] !== undefined);
        await sameAsShared('after the image went');
        await typeBy(ann, 'quill', 'delta', 'after', 'Z');
        await writer.until("Ann's typing right after delta", () => text().includes('gammaYdeltaZ\n'));
      } finally {
        await writer.stop();
      }
    });
  });

  // Quill's own code block command drops the image of the line, as Quill does without Wave; Quill says so in its
  // change, and the shared text follows: Quill's positions stay the shared text's.
  it('a Quill user making a line with an image a code block: the image goes from Quill and from the shared text alike', { timeout: TIMEOUT_MS }, async () => {
    await withScene(browser, server, 'any-quill-code-own', async (scene) => {
      const doc = freshDocId('any-quill-code-own');
      const writer = await openNodeWriter(server, doc, [{ insert: 'pic ' }, { insert: { image: PNG } }, { insert: ' alpha\nomega\n' }]);
      try {
        const ann = await scene.open('Ann', quill, { doc });
        await until('Ann to show the document', () => plain(ann, 'quill'), (t) => t.includes('omega'));
        const y = writer.ytext;
        const text = () => flat(y.toDelta() as DeltaOp[]);
        await ann.page.evaluate(() => (window.quill as unknown as QuillApi).formatLine(2, 0, 'code-block', true, 'user'));
        await typeBy(ann, 'quill', 'alpha', 'after', 'X');
        await writer.until("Ann's typing right after alpha", () => text().includes('pic  alphaX\n'));
        await quillMatches(ann, y, 'after the code block');
      } finally {
        await writer.stop();
      }
    });
  });

  it('Backspace in Quill at the start of a code line after a line with an image keeps the image, in Quill and in the shared text', { timeout: TIMEOUT_MS }, async () => {
    await withScene(browser, server, 'any-quill-code-merge', async (scene) => {
      const doc = freshDocId('any-quill-code-merge');
      const writer = await openNodeWriter(server, doc, [
        { insert: 'pic ' }, { insert: { image: PNG } }, { insert: ' alpha\n' },
        { insert: 'code' }, { insert: '\n', attributes: { 'code-block': true } },
        { insert: 'omega\n' },
      ]);
      try {
        const ann = await scene.open('Ann', quill, { doc });
        await until('Ann to show the document', () => plain(ann, 'quill'), (t) => t.includes('omega'));
        const y = writer.ytext;
        const text = () => flat(y.toDelta() as DeltaOp[]);
        await typeBy(ann, 'quill', 'code', 'before', '');
        await ann.page.keyboard.press('Backspace');
        await writer.until('the lines merged', () => text().includes('alphacode'));
        await typeBy(ann, 'quill', 'code', 'after', 'X');
        await writer.until("Ann's typing right after code", () => text().includes('alphacodeX\n'));
        assert.ok(text().includes('\ufffc'), `the image is in the shared text: ${JSON.stringify(y.toDelta())}`);
        await quillMatches(ann, y, 'after the merge');
      } finally {
        await writer.stop();
      }
    });
  });
});
