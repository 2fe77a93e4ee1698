// RELIABILITY.md R9 in every editor: a 1 MB paste (and in the rich-text editors a 1 MB bulleted list) reaches the
// peer whole, on a server with the default limits, and a page opened afterwards shows it (R8 in a real editor); a
// paste over the server's frame limit (`--max-frame-bytes`, set low on a second server so that the paste stays
// quick) ends the paster's session with one `document_too_large` error, nothing of it reaches the peer or the
// server, the session does not reconnect (it is stopped), and a reload opens the document again (the refused edit
// is not kept offline to be refused at every load).
//
// The paste is the event the clipboard produces: a `paste` event with the text as clipboard data, which the
// editors read; for the textarea, which takes no synthetic paste, the text is spliced in and an `input` event of
// type `insertFromPaste` follows, as Chromium does (its own `insertText` of 1 MB into a textarea takes ~12 s, with
// or without Wave). R9's "≤ 2 s" and R8's "≤ 3 s" are timings: they are printed (paste → the peer shows it, the
// paster's local change → the peer's remote one, a new page opened → it shows the document), and the bound below
// only catches a lost paste, never a slow one.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startResult, withScene } from '../lib/browser.ts';
import { codemirror, quill, textarea, type EditorDriver } from '../lib/drivers.ts';
import { froala, tinymce } from '../lib/richtext-drivers.ts';
import { startServer, type WaveServer } from '../lib/server.ts';
import { freshDocId, waitUntil } from '../lib/util.ts';
import { serverAndBrowser } from '../lib/suite.ts';
import '../lib/page-globals.ts';

const EDITORS: readonly EditorDriver[] = [textarea, codemirror, quill, froala, tinymce];
const HOST = 'The host loaded this line.';
/** Lines of 500 characters, "\n" included. */
const LINE = 500;
/**
 * List items of 160 characters, "\n" included: 6,250 items, about 25,000 structs in one update (a formatted line is
 * about four), which the server's struct limit must let through. Not shorter items: Quill's own insertion of many
 * lines grows with the square of their number (~20 s for 10,000 items, on the paster and again on the peer).
 */
const ITEM = 160;
/**
 * The second server's frame limit, and a paste whose update is over it in every editor. Over 400,000 characters:
 * Froala inserts a paste that long itself, and leaves a shorter one to the browser's own paste into a hidden element
 * (froala_editor.js, its paste handler), which a dispatched `paste` event does not start.
 */
const SMALL_FRAME_BYTES = 256 * 1024;
const OVER_SMALL_FRAME = 450_000;
const LOST_MS = 90_000;
const TIMEOUT_MS = 300_000;

let server: WaveServer;
let browser: Browser;
let small: WaveServer;

serverAndBrowser((s, b) => {
  server = s;
  browser = b;
});
before(async () => {
  small = await startServer({ extraArgs: ['--max-frame-bytes', String(SMALL_FRAME_BYTES)] });
});
after(async () => {
  await small?.stop();
});

/** `bytes` characters of ASCII text in lines of `LINE`, each line numbered so that a line lost or moved shows. */
function pasteText(bytes: number, tag: string): string {
  const filler = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor ';
  const lines: string[] = [];
  for (let i = 0; lines.length * LINE < bytes; i++) {
    const head = `${tag}${String(i).padStart(5, '0')} `;
    lines.push((head + filler.repeat(Math.ceil(LINE / filler.length))).slice(0, LINE - 1));
  }
  return lines.join('\n');
}

/** In-page: `plain` (and `html`, if given) pasted at the caret of the editor of `kind` (plain JavaScript source). */
const PASTE = `(function (args) {
  var kind = args[0], plain = args[1];
  if (kind === 'textarea') {
    var el = document.getElementById('editor');
    el.setRangeText(plain, el.selectionStart, el.selectionEnd, 'end');
    el.dispatchEvent(new InputEvent('input', { inputType: 'insertFromPaste', bubbles: true }));
    return;
  }
  var data = new DataTransfer();
  data.setData('text/plain', plain);
  if (args[2]) data.setData('text/html', args[2]);
  var target = kind === 'codemirror' ? window.cm.getInputField()
    : kind === 'quill' ? window.quill.root
    : kind === 'froala' ? window.froala.el
    : window.tiny.getBody();
  target.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
})`;

async function paste(page: Page, driver: EditorDriver, plain: string, html?: string): Promise<void> {
  await driver.focusEnd(page);
  await page.evaluate(`${PASTE}(${JSON.stringify([driver.name, plain, html ?? null])})`);
}

/**
 * A bulleted list of `bytes` characters in items of `ITEM` characters, as the clipboard holds it: HTML and its
 * plain text. Each item is a formatted line, which the document holds as several structs (the line's text, its
 * `"\n"` and the format around it), where a paste of plain paragraphs is one.
 */
function pasteList(bytes: number, tag: string): { plain: string; html: string } {
  const items: string[] = [];
  for (let i = 0; items.length * ITEM < bytes; i++) items.push(`${tag}${String(i).padStart(6, '0')} ${'item text '.repeat(ITEM / 10)}`.slice(0, ITEM - 1));
  return { plain: items.join('\n'), html: `<ul>${items.map((item) => `<li>${item}</li>`).join('')}</ul>` };
}

/** In-page: the time (ms since the epoch) of the session's first `content_changed` of `source` from now on. */
async function watchChange(page: Page, source: 'local' | 'remote'): Promise<() => Promise<number | null>> {
  await page.evaluate((src) => {
    const w = window as any;
    w.__r9Change = null;
    w.coedit.on('content_changed', (e: { source: string }) => {
      if (e.source === src && w.__r9Change === null) w.__r9Change = performance.timeOrigin + performance.now();
    });
  }, source);
  return () => page.evaluate(() => (window as any).__r9Change as number | null);
}

/** How many list items the content of the rich-text editor of `driver` shows. */
function listItems(page: Page, driver: EditorDriver): Promise<number> {
  return page.evaluate(`(${(kind: string) => {
    const w = window as any;
    const root: Element = kind === 'quill' ? w.quill.root : kind === 'froala' ? w.froala.el : w.tiny.getBody();
    return root.querySelectorAll('li').length;
  }})(${JSON.stringify(driver.name)})`);
}

/** The editor's text without whitespace, which editors render differently for pasted lines. */
const letters = (text: string): string => text.replace(/\s+/g, '');

/**
 * Ann pastes `clip` into a document Bob has open: Bob shows it whole (then `check` runs on his page), Ann shows the
 * same and saves it, and a page opened then shows it too. Prints the time from the paste until Bob shows it, from
 * Ann's local change to Bob's remote one, and from opening the new page until it shows the document.
 */
async function pasteReachesPeer(driver: EditorDriver, what: string, clip: { plain: string; html?: string }, check?: (bobPage: Page) => Promise<void>): Promise<void> {
  const name = `large-paste-${driver.name}-${what.replace(/\W+/g, '-')}`;
  await withScene(browser, server, name, async (scene) => {
    const doc = freshDocId(name);
    const ann = await scene.open('Ann', driver, { doc, text: HOST });
    const bob = await scene.open('Bob', driver, { doc });
    await waitUntil(async () => (await driver.text(bob.page)) === HOST, { message: 'Bob shows the host text' });
    const annChange = await watchChange(ann.page, 'local');
    const bobChange = await watchChange(bob.page, 'remote');

    const started = Date.now();
    await paste(ann.page, driver, clip.plain, clip.html);
    const want = letters(HOST + clip.plain);
    await waitUntil(async () => letters(await driver.text(bob.page)) === want, {
      timeoutMs: LOST_MS,
      intervalMs: 200,
      message: async () =>
        `Bob shows ${what} whole; Bob has ${letters(await driver.text(bob.page)).length} of ${want.length} characters; ` +
        `Ann's errors: ${JSON.stringify(await ann.page.evaluate(() => window.waveLog!.error))}`,
    });
    const shown = Date.now() - started;
    const [local, remote] = [await annChange(), await bobChange()];
    console.log(`${driver.name}: ${what} shown by the peer ${shown} ms after the paste; the paster's change → the peer's ${local && remote ? Math.round(remote - local) : '?'} ms`);
    assert.equal(letters(await driver.text(ann.page)), want, 'Ann shows what Bob shows');
    await check?.(bob.page);
    await waitUntil(() => ann.page.evaluate(() => window.waveLog!.status.at(-1)?.saved === true), { timeoutMs: LOST_MS, message: 'Ann saved' });
    // A page opened now (R8: a new client of a ~1 M-character document) shows what the server stored.
    const opened = Date.now();
    const cid = await scene.open('Cid', driver, { doc });
    await waitUntil(async () => letters(await driver.text(cid.page)) === want, { timeoutMs: LOST_MS, intervalMs: 100, message: 'a page opened after the paste shows it' });
    console.log(`${driver.name}: a page opened after ${what} shows it ${Date.now() - opened} ms after opening`);
  });
}

describe('[R9] a large paste', () => {
  for (const driver of EDITORS) {
    it(`${driver.name}: a 1 MB paste reaches the peer whole`, { timeout: TIMEOUT_MS }, async () => {
      await pasteReachesPeer(driver, 'a 1 MB paste', { plain: pasteText(1_000_000, 'P') });
    });

    if (driver === froala || driver === quill || driver === tinymce) {
      it(`${driver.name}: a 1 MB paste of a bulleted list reaches the peer whole`, { timeout: TIMEOUT_MS }, async () => {
        await pasteReachesPeer(driver, 'a 1 MB bulleted list', pasteList(1_000_000, 'L'), async (page) => {
          assert.equal(await listItems(page, driver), Math.ceil(1_000_000 / ITEM), 'Bob shows each item as a list item');
        });
      });
    }

    it(`${driver.name}: a paste over the frame limit: one document_too_large, nothing relayed or stored, no reconnect, a reload opens the document`, { timeout: TIMEOUT_MS }, async () => {
      await withScene(browser, small, `over-limit-paste-${driver.name}`, async (scene) => {
        const doc = freshDocId(`over-limit-paste-${driver.name}`);
        const ann = await scene.open('Ann', driver, { doc, text: HOST, allowErrors: [/document_too_large/, /1009/] });
        const bob = await scene.open('Bob', driver, { doc });
        await waitUntil(async () => (await driver.text(bob.page)) === HOST, { message: 'Bob shows the host text' });

        await paste(ann.page, driver, pasteText(OVER_SMALL_FRAME, 'Q'));
        const error = await waitUntil(
          () => ann.page.evaluate(() => window.waveLog!.error.find((e) => e.code === 'document_too_large') ?? null),
          { timeoutMs: LOST_MS, message: 'Ann gets document_too_large' },
        );
        assert.ok(error);
        assert.equal(error.fatal, true, 'fatal: sending the same edit again would be refused again');
        assert.match(error.detail ?? '', /size limit/, 'the detail says why');
        assert.deepEqual(await ann.page.evaluate(() => window.waveLog!.error.map((e) => e.code)), ['document_too_large'], 'one error event');
        assert.equal(await ann.page.evaluate(() => window.coedit!.getState()), 'stopped', 'the session is stopped: it does not reconnect');

        // A page opened now syncs with what the server holds; Bob, connected all along, would have been sent
        // anything the server took of the refused paste before Cid's sync.
        const cid = await scene.open('Cid', driver, { doc });
        await waitUntil(async () => (await driver.text(cid.page)) === HOST, { message: 'a fresh page shows the host text only' });
        assert.equal(await driver.text(bob.page), HOST, 'Bob got nothing of the refused paste');

        // The refused edit is not kept offline: sent again at the next load, it would be refused again.
        await ann.page.reload();
        const restarted = await startResult(ann.page);
        assert.ok(restarted.ok, `Ann's page starts again after a reload: ${JSON.stringify(restarted)}`);
        await waitUntil(async () => (await driver.text(ann.page)) === HOST, { message: 'Ann shows the shared document after the reload' });
        assert.deepEqual(await ann.page.evaluate(() => window.waveLog!.error.map((e) => e.code)), [], 'no error after the reload');
      });
    });
  }
});
