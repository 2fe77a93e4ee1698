// RELIABILITY.md S5 in every editor: a hostile name, e-mail, colour and avatar URL are shown as text (or dropped):
// no dialog, no request they caused, no element Wave did not make. The identity shown is the one the server stamped
// (S4 is tested against the server in packages/server/test/integration/awareness.test.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { withScene } from '../lib/browser.ts';
import { codemirror, quill, textarea, type EditorDriver } from '../lib/drivers.ts';
import { froala, tinymce } from '../lib/richtext-drivers.ts';
import type { WaveServer } from '../lib/server.ts';
import { freshDocId } from '../lib/util.ts';
import { avatars, drawn, selectWord, until, wordBox, type PresenceKind } from '../lib/presence.ts';
import { serverAndBrowser } from '../lib/suite.ts';
import '../lib/page-globals.ts';

const TIMEOUT_MS = 120_000;
const HOSTILE = {
  name: '<img src=x onerror=alert(1)>',
  email: '"><svg onload=alert(2)>@evil.test',
  color: 'red;background:url(http://evil.test/c.png)',
  avatar: 'javascript:alert(3)',
};

const EDITORS: ReadonlyArray<{ kind: PresenceKind; driver: EditorDriver }> = [
  { kind: 'textarea', driver: textarea },
  { kind: 'quill', driver: quill },
  { kind: 'codemirror', driver: codemirror },
  { kind: 'froala', driver: froala },
  { kind: 'tinymce', driver: tinymce },
];

let server: WaveServer;
let browser: Browser;

serverAndBrowser((s, b) => {
  server = s;
  browser = b;
});

/** Counts dialogs and requests a hostile identity could cause (any other origin, or the relative `x` of the name). */
function watch(page: Page): { dialogs: string[]; requests: string[] } {
  const seen = { dialogs: [] as string[], requests: [] as string[] };
  page.on('dialog', (dialog) => {
    seen.dialogs.push(dialog.message());
    void dialog.dismiss().catch(() => {});
  });
  page.on('request', (request) => {
    const url = request.url();
    if (url.startsWith('data:')) return;
    if (!url.startsWith(server.url) || /\/x(?:[?#]|$)/.test(url) || url.includes('evil.test')) seen.requests.push(url);
  });
  return seen;
}

/** Elements under Wave's overlay without a `wave-` class (SVG paths excepted): what injected markup would add. */
const strangers = (page: Page) =>
  page.evaluate(() =>
    Array.from(document.querySelectorAll('.wave-presence *'))
      .filter((el) => el.localName !== 'path' && !Array.from(el.classList).some((c) => c.startsWith('wave-')))
      .map((el) => el.outerHTML.slice(0, 120)),
  );

for (const { kind, driver } of EDITORS) {
  describe(`presence security: ${kind}`, () => {
    it('[S5] hostile name, e-mail, colour and avatar render as text: 0 dialogs, 0 unexpected requests', { timeout: TIMEOUT_MS }, async () => {
      await withScene(browser, server, `presence-s5-${kind}`, async (scene) => {
        const doc = freshDocId(`presence-s5-${kind}`);
        const victim = await scene.open('Victim', driver, { doc, text: 'alpha bravo charlie\nsecond line' });
        const seenByVictim = watch(victim.page);
        const mallory = await scene.open(HOSTILE.name, driver, { doc, text: 'x', query: { email: HOSTILE.email, color: HOSTILE.color, avatar: HOSTILE.avatar, labels: '1' } });
        const seenByMallory = watch(mallory.page);

        await selectWord(mallory.page, kind, 'bravo');
        const box = (await wordBox(mallory.page, kind, 'charlie'))!;
        await mallory.page.mouse.move(box.left + 2, box.top + 2);
        await mallory.page.mouse.move(box.left + 6, box.top + 4);
        await mallory.page.mouse.down();
        await mallory.page.mouse.up();

        const shown = await until("Mallory's caret and pointer for the victim", () => drawn(victim.page, HOSTILE.name), (d) => d.caret !== null && d.pointer !== null);
        assert.ok(shown.labelVisible);
        for (const page of [victim.page, mallory.page]) {
          const bar = (await avatars(page))!;
          const names = bar.names.map((n) => n.replace(/ \(you\)$/, ''));
          assert.deepEqual(names.sort(), [HOSTILE.name, 'Victim'].sort(), 'the name is text');
          const initials = bar.initials;
          assert.deepEqual([...initials].sort(), ['IO', 'V'], `initials from the letters of the name: ${JSON.stringify(initials)}`);
          assert.ok(!bar.colors.includes('rgb(255, 0, 0)'), 'the CSS-injecting colour was not used');
          assert.equal(await page.evaluate(() => document.querySelectorAll('.wave-presence img').length), 0, 'javascript: avatar dropped');
          assert.deepEqual(await strangers(page), [], 'no markup from user data');
          const emails = await page.evaluate(() => Array.from(document.querySelectorAll('.wave-avatar-email')).map((e) => e.textContent));
          assert.deepEqual(emails, [HOSTILE.email], 'the e-mail is text');
        }
        assert.equal(
          await victim.page.evaluate(() => document.querySelector('.wave-caret-label')?.textContent),
          HOSTILE.name,
          'caret label is text',
        );
        assert.equal(
          await victim.page.evaluate(() => document.querySelector('.wave-pointer-label')?.textContent),
          HOSTILE.name,
          'pointer label is text',
        );
        assert.deepEqual(seenByVictim.dialogs, [], 'no dialog for the victim');
        assert.deepEqual(seenByMallory.dialogs, [], 'no dialog for Mallory');
        assert.deepEqual(seenByVictim.requests, [], 'no unexpected request for the victim');
        assert.deepEqual(seenByMallory.requests, [], 'no unexpected request for Mallory');
      });
    });
  });
}
