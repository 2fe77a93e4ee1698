// The textarea adapter's promises, in Chromium: the caret and selection stay on the same characters across remote
// edits, and an IME composition is not broken by a remote edit that arrives in the middle of it (RELIABILITY R11).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { withScene } from '../lib/browser.ts';
import { textarea } from '../lib/drivers.ts';
import type { WaveServer } from '../lib/server.ts';
import { freshDocId, waitUntil } from '../lib/util.ts';
import { serverAndBrowser } from '../lib/suite.ts';
import '../lib/page-globals.ts';

let server: WaveServer;
let browser: Browser;

serverAndBrowser((s, b) => {
  server = s;
  browser = b;
});

const value = (page: Page) => textarea.text(page);
const selection = (page: Page) =>
  page.evaluate(() => {
    const el = document.getElementById('editor') as HTMLTextAreaElement;
    return [el.selectionStart, el.selectionEnd];
  });

/** Types `text` at `index` in the other page through real keys. */
async function typeAt(page: Page, index: number, text: string): Promise<void> {
  await page.locator('#editor').focus();
  await page.evaluate((i) => (document.getElementById('editor') as HTMLTextAreaElement).setSelectionRange(i, i), index);
  await page.keyboard.type(text);
}

it('keeps the local selection on the same characters while a peer types before and inside it', async () => {
  await withScene(browser, server, 'textarea-selection', async (scene) => {
    const doc = freshDocId('sel');
    const ann = await scene.open('Ann', textarea, { doc, text: 'alpha beta gamma' });
    const bob = await scene.open('Bob', textarea, { doc });
    await waitUntil(async () => (await value(bob.page)) === 'alpha beta gamma', { message: () => 'bob synced' });

    // Ann selects "beta" (6..10).
    await ann.page.locator('#editor').focus();
    await ann.page.evaluate(() => (document.getElementById('editor') as HTMLTextAreaElement).setSelectionRange(6, 10));
    await typeAt(bob.page, 0, 'XY ');
    await waitUntil(async () => (await value(ann.page)) === 'XY alpha beta gamma', { message: () => 'remote insert arrived' });
    assert.deepEqual(await selection(ann.page), [9, 13], 'selection moved right with the text');
    assert.equal((await value(ann.page)).slice(9, 13), 'beta');

    await typeAt(bob.page, 16, '!'); // after "gamma"'s g? no: index 16 is inside "gamma", after Ann's selection
    await waitUntil(async () => (await value(ann.page)).includes('!'), { message: () => 'second remote insert arrived' });
    assert.deepEqual(await selection(ann.page), [9, 13], 'an insert after the selection leaves it alone');
  });
});

it('[R11] an IME composition survives a remote edit and converges once it ends', async () => {
  await withScene(browser, server, 'textarea-ime', async (scene) => {
    const doc = freshDocId('ime');
    const ann = await scene.open('Ann', textarea, { doc, text: 'hello world' });
    const bob = await scene.open('Bob', textarea, { doc });
    await waitUntil(async () => (await value(bob.page)) === 'hello world', { message: () => 'bob synced' });

    await ann.page.locator('#editor').focus();
    await ann.page.evaluate(() => (document.getElementById('editor') as HTMLTextAreaElement).setSelectionRange(5, 5));
    const cdp = await ann.context.newCDPSession(ann.page);
    await cdp.send('Input.imeSetComposition', { text: 'に', selectionStart: 1, selectionEnd: 1 });
    await cdp.send('Input.imeSetComposition', { text: 'にほ', selectionStart: 2, selectionEnd: 2 });

    // Bob edits while Ann's composition is open: at the start, before Ann's caret.
    await typeAt(bob.page, 0, 'Say: ');
    await waitUntil(async () => (await bob.page.evaluate(() => window.waveLog!.status.at(-1)?.saved)) === true, {
      message: () => 'bob saved his edit (it reached the server)',
    });

    // The composition is still open and still holds what Ann composed.
    const during = await value(ann.page);
    assert.ok(during.includes('helloにほ'), `composition text intact during the remote edit: ${JSON.stringify(during)}`);
    await cdp.send('Input.imeSetComposition', { text: 'にほん', selectionStart: 3, selectionEnd: 3 });
    await cdp.send('Input.insertText', { text: '日本' });

    await waitUntil(async () => (await value(ann.page)) === (await value(bob.page)) && (await value(bob.page)).includes('日本'), {
      message: async () => `converged: ann=${JSON.stringify(await value(ann.page))} bob=${JSON.stringify(await value(bob.page))}`,
    });
    assert.equal(await value(ann.page), 'Say: hello日本 world');
    const [start, end] = await selection(ann.page);
    assert.equal(start, end);
    assert.equal(start, 'Say: hello日本'.length, 'caret right after the committed text');
  });
});
