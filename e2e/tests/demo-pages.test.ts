// The demo pages themselves: links, identity display, visible errors. Co-editing is in coedit.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { startResult, withScene } from '../lib/browser.ts';
import { DRIVERS } from '../lib/drivers.ts';
import type { WaveServer } from '../lib/server.ts';
import { freshDocId } from '../lib/util.ts';
import { serverAndBrowser } from '../lib/suite.ts';
import '../lib/page-globals.ts';

const TIMEOUT_MS = 60_000;
/** Quill, Froala and TinyMCE side by side on one document (README "One document, any editor"). */
const ANY_EDITOR_PAGE = 'any-editor.html';

let server: WaveServer;
let browser: Browser;

serverAndBrowser((s, b) => {
  server = s;
  browser = b;
});

describe('demo pages', () => {
  it('the index links every demo to one fresh document with a user name', { timeout: TIMEOUT_MS }, async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${server.url}/demo/index.html`);
      const hrefs = await page.locator('a[data-page]').evaluateAll((links) => links.map((a) => (a as HTMLAnchorElement).href));
      const pages = [...DRIVERS.map((d) => d.pagePath), ANY_EDITOR_PAGE];
      assert.equal(hrefs.length, pages.length, 'one link per demo');
      const docs = new Set<string>();
      for (const pagePath of pages) {
        const href = hrefs.find((h) => new URL(h).pathname === `/demo/${pagePath}`);
        assert.ok(href, `a link to ${pagePath}`);
        const query = new URL(href).searchParams;
        assert.ok(query.get('user'), `${pagePath} link has a user name`);
        docs.add(query.get('doc') ?? '');
      }
      assert.equal(docs.size, 1, 'all demos open the same document');
      assert.match([...docs][0]!, /^doc-/, 'a generated document id');

      // Following a link starts a session under that name.
      await page.click('a[data-page="text.html"]');
      await page.waitForURL(/text\.html/);
      assert.deepEqual(await startResult(page), { ok: true });
      const user = new URL(page.url()).searchParams.get('user');
      assert.equal(await page.locator('#me').textContent(), user);
      const share = new URL((await page.locator('#share').getAttribute('href'))!);
      assert.equal(share.searchParams.get('doc'), [...docs][0], 'the share link names the document');
      assert.equal(share.searchParams.get('user'), null, 'the share link leaves the name to the second window');
      await page.waitForFunction(() => /online · saved/.test(document.getElementById('status')!.textContent ?? ''));
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });

  it('the any-editor page starts Quill, Froala and TinyMCE on one document with no page error, and links it in the textarea', { timeout: TIMEOUT_MS }, async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      page.on('pageerror', (e) => errors.push(e.message));
      const doc = freshDocId('any-editor-page');
      await page.goto(`${server.url}/demo/${ANY_EDITOR_PAGE}?${new URLSearchParams({ doc, user: 'Ada', text: 'Hello' })}`);
      assert.deepEqual(await startResult(page), { ok: true });
      const sessions = await page.evaluate(() => {
        const all = (window as unknown as { coedits: Record<string, { getState(): string }> }).coedits;
        return Object.fromEntries(Object.entries(all).map(([kind, coedit]) => [kind, coedit.getState()]));
      });
      assert.deepEqual(sessions, { quill: 'online', froala: 'online', tinymce: 'online' });
      await page.waitForFunction(() => window.coedit!.getUsers().length === 3);
      const names = await page.evaluate(() => window.coedit!.getUsers().map((u) => u.user.name).sort());
      assert.deepEqual(names, ['Ada (Froala)', 'Ada (Quill)', 'Ada (TinyMCE)'], 'one user per editor, all on the document');
      const textPage = new URL((await page.locator('#open-text').getAttribute('href'))!, page.url());
      assert.equal(textPage.pathname, '/demo/text.html');
      assert.equal(textPage.searchParams.get('doc'), doc);
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });

  for (const driver of DRIVERS) {
    it(`${driver.name}: user names are shown as text, never as markup`, { timeout: TIMEOUT_MS }, async () => {
      await withScene(browser, server, `${driver.name}-markup`, async (scene) => {
        const name = '<img src=x id=pwned>Eve';
        const eve = await scene.open(name, driver, { doc: freshDocId('markup') });
        assert.equal(await eve.page.locator('#me').textContent(), name);
        await eve.page.waitForFunction(() => (document.getElementById('users')!.textContent ?? '').includes('Eve'));
        assert.equal(await eve.page.locator('#pwned').count(), 0, 'no element was created from the name');
      });
    });

    it(`${driver.name}: a bad apiKey rejects waveStarted and shows the error on the page`, { timeout: TIMEOUT_MS }, async () => {
      await withScene(browser, server, `${driver.name}-bad-key`, async (scene) => {
        const peer = await scene.open('Mallory', driver, {
          doc: freshDocId('bad-key'),
          config: (served) => ({ ...served, apiKey: 'wk_this_key_does_not_exist' }),
          noWait: true,
          // The browser itself may log the refused socket; the page must not add anything else.
          allowErrors: [/WebSocket connection to .* failed/],
        });
        const result = await startResult(peer.page);
        assert.equal(result.ok, false, 'start() rejects');
        assert.equal(!result.ok && result.error.code, 'validation_error', `rejects with validation_error: ${JSON.stringify(result)}`);
        const errors = await peer.page.evaluate(() => window.waveLog!.error.map((e) => e.code));
        assert.ok(errors.includes('validation_error'), `the error event fired: ${JSON.stringify(errors)}`);
        const box = peer.page.locator('#error');
        assert.ok(await box.isVisible(), 'the error box is visible');
        assert.match((await box.textContent()) ?? '', /validation_error/);
      });
    });
  }

  for (const driver of DRIVERS) {
    it(`${driver.name}: the page declares script-src 'self' and runs under it`, { timeout: TIMEOUT_MS }, async () => {
      await withScene(browser, server, `${driver.name}-csp`, async (scene) => {
        const peer = await scene.open('Cora', driver, { doc: freshDocId('csp') });
        const csp = await peer.page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
        // The textarea page also forbids inline styles (presence works under style-src 'self'; the
        // presence tests draw avatars, carets and pointers on it, and any violation is a console error).
        assert.equal(csp, driver.name === 'textarea' ? "script-src 'self'; style-src 'self'" : "script-src 'self'");
        assert.equal(await peer.page.evaluate(() => window.coedit!.getState()), 'online');
        // withScene fails the test on any console error, CSP violations included.
      });
    });
  }
});
