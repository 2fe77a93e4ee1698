// Images in the HTML editors while a collaborator edits around them. Froala's image plugin holds on to the `<img>`
// it inserted (its `load` handler selects it, its edit mode handles the next keys on it): a collaborator's change
// beside the image keeps that very node, and a change that removes it leaves Froala's image edit mode, so the
// user's next keys go to the text and nothing throws in the page.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { withScene } from '../lib/browser.ts';
import { froala, tinymce } from '../lib/richtext-drivers.ts';
import { openNodeWriter } from '../lib/node-writer.ts';
import { IMAGE_URL } from '../lib/richtext.ts';
import type { WaveServer } from '../lib/server.ts';
import { serverAndBrowser } from '../lib/suite.ts';
import { freshDocId, waitUntil } from '../lib/util.ts';
import '../lib/page-globals.ts';

const TIMEOUT_MS = 120_000;

let server: WaveServer;
let browser: Browser;

serverAndBrowser((s, b) => {
  server = s;
  browser = b;
});

interface ImagePage {
  __img?: Element;
}

/** In-page: keeps the editor's first `<img>` as `window.__img`; whether it is the one now in the editor. */
function keepImage(page: Page, kind: 'froala' | 'tinymce'): Promise<void> {
  return page.evaluate((k) => {
    const root = k === 'froala' ? window.froala!.el : window.tiny!.getBody();
    const img = root.querySelector('img');
    if (!img) throw new Error('no image in the editor');
    (window as ImagePage).__img = img;
  }, kind);
}

function sameImage(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const img = (window as ImagePage).__img;
    return !!img && img.isConnected;
  });
}

describe('an image while a collaborator edits around it', () => {
  for (const driver of [froala, tinymce]) {
    it(`${driver.name} keeps its <img> node when a collaborator deletes the text before it and types after it`, { timeout: TIMEOUT_MS }, async () => {
      await withScene(browser, server, `${driver.name}-image-kept`, async (scene) => {
        const doc = freshDocId(`${driver.name}-image-kept`);
        const writer = await openNodeWriter(server, doc, [{ insert: 'alpha ' }, { insert: { image: IMAGE_URL } }, { insert: ' beta\n' }]);
        try {
          const bob = await scene.open('Bob', driver, { doc });
          await waitUntil(async () => (await driver.html(bob.page)).includes('<img'), { message: `${driver.name} shows the image` });
          await keepImage(bob.page, driver.kind);
          writer.ytext.delete(0, 'alpha '.length);
          await waitUntil(async () => !(await driver.text(bob.page)).includes('alpha'), { message: `${driver.name} shows the deletion` });
          writer.ytext.insert(writer.ytext.length - 1, ' gamma');
          await waitUntil(async () => (await driver.text(bob.page)).includes('beta gamma'), { message: `${driver.name} shows the typing` });
          assert.ok(await sameImage(bob.page), 'the <img> shown before is the one still in the editor');
        } finally {
          await writer.stop();
        }
      });
    });
  }

  it("Froala leaves its image edit mode when a collaborator's change removes the image; Enter and typing then go to the text", { timeout: TIMEOUT_MS }, async () => {
    await withScene(browser, server, 'froala-image-removed', async (scene) => {
      const doc = freshDocId('froala-image-removed');
      const writer = await openNodeWriter(server, doc, [{ insert: 'first line\n' }]);
      try {
        const bob = await scene.open('Bob', froala, { doc });
        await waitUntil(async () => (await froala.text(bob.page)).includes('first line'), { message: 'Froala shows the document' });
        await froala.focusEnd(bob.page);
        // Froala inserts the image once it has loaded, then selects it: its image edit mode.
        await bob.page.evaluate((src) => (window.froala as unknown as { image: { insert(...a: unknown[]): void } }).image.insert(src, false, null, null, null), IMAGE_URL);
        const editing = () => bob.page.evaluate(() => {
          const img = (window.froala as unknown as { image: { get(): ArrayLike<Element> | null } }).image.get();
          return !!img && img.length > 0;
        });
        await waitUntil(editing, { message: "Froala's image edit mode after the insert" });
        await writer.until('the image in the shared text', (delta) => delta.some((op) => typeof op.insert === 'object'));
        // The collaborator deletes the image (one embed).
        const at = writer.ytext.toDelta().reduce((acc: { i: number; found: number }, op: { insert: unknown }) => {
          if (acc.found < 0 && typeof op.insert === 'object') acc.found = acc.i;
          acc.i += typeof op.insert === 'string' ? op.insert.length : 1;
          return acc;
        }, { i: 0, found: -1 }).found;
        writer.ytext.delete(at, 1);
        await waitUntil(async () => !(await froala.html(bob.page)).includes('<img'), { message: 'Froala shows the image gone' });
        assert.equal(await editing(), false, "Froala's image edit mode is left with the image");
        await bob.page.keyboard.press('Enter');
        await froala.type(bob.page, 'after');
        await writer.until("Bob's Enter and typing in the shared text", (delta) => delta.map((op) => (typeof op.insert === 'string' ? op.insert : '')).join('').includes('\nafter'));
      } finally {
        await writer.stop();
      }
    });
  });
});
