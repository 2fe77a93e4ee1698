// Presence in every editor, with three browser contexts: avatars (count, order, colours), remote carets
// and selections that stay on their characters while others type above them, pointers that land on the same content
// point in pages scrolled differently, and every option and show/hide method. Screenshots of each editor with three
// users go to e2e/artifacts/presence/.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { withScene, type Peer } from '../lib/browser.ts';
import { codemirror, quill, textarea, type EditorDriver } from '../lib/drivers.ts';
import { froala, tinymce } from '../lib/richtext-drivers.ts';
import { REPO_ROOT, type WaveServer } from '../lib/server.ts';
import { freshDocId } from '../lib/util.ts';
import { avatars, drawn, near, scrollToWord, selectWord, union, until, wordBox, type PresenceKind } from '../lib/presence.ts';
import { serverAndBrowser } from '../lib/suite.ts';
import '../lib/page-globals.ts';

const TIMEOUT_MS = 240_000;
const ARTIFACTS = join(REPO_ROOT, 'e2e', 'artifacts', 'presence');
/** A remote caret is drawn within 4 px of the character it marks. */
const PX = 4;

/** Forty short lines; `charlie` (line 3) is the selected word, `r20z` is where the pointer goes. */
const TEXT = Array.from({ length: 40 }, (_, i) => (i === 2 ? 'r3z alpha bravo charlie delta echo' : `r${i + 1}z lorem ipsum dolor sit amet`)).join('\n');

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
  mkdirSync(ARTIFACTS, { recursive: true });
});

async function text(peer: Peer): Promise<string> {
  return peer.driver.text(peer.page);
}

/** Waits until `page` draws `name`'s caret at the end of `word` and its selection over `word`. */
async function caretOnWord(page: Page, kind: PresenceKind, name: string, word: string): Promise<void> {
  await until(
    `${name}'s caret and selection on "${word}"`,
    async () => ({ word: await wordBox(page, kind, word), drawn: await drawn(page, name) }),
    ({ word: w, drawn: d }) => {
      if (!w || !d.caret) return false;
      const sel = union(d.selection);
      const caretX = (d.caret.left + d.caret.right) / 2;
      return near(caretX, w.right, PX) && near(d.caret.top, w.top, PX) && near(d.caret.bottom, w.bottom, PX) &&
        sel !== null && near(sel.left, w.left, PX) && near(sel.right, w.right, PX) && near(sel.top, w.top, PX) && near(sel.bottom, w.bottom, PX);
    },
  );
}

for (const { kind, driver } of EDITORS) {
  describe(`presence: ${kind}`, () => {
    it('avatars, carets, selections, pointers, options and show/hide with three users', { timeout: TIMEOUT_MS }, async () => {
      await withScene(browser, server, `presence-${kind}`, async (scene) => {
        const doc = freshDocId(`presence-${kind}`);
        const ada = await scene.open('Ada Lovelace', driver, { doc, text: TEXT, query: { email: 'ada@example.com' } });
        const bob = await scene.open('Bob', driver, { doc, text: TEXT, query: { color: '#e6550d' } });
        // Cy: labels always on, avatars vertical on the left, solid pointer, a named colour.
        const cy = await scene.open('Cy Young', driver, { doc, text: TEXT, query: { labels: '1', avatars: 'left,vertical', shape: 'pointerSolid', color: 'rebeccapurple' } });
        const peers = [ada, bob, cy];

        // ---- avatars: every user, in join order, in each page ----
        for (const peer of peers) {
          const info = await until(`${peer.name}: three avatars`, () => avatars(peer.page), (a) => a?.names.length === 3);
          assert.deepEqual(info!.names, ['Ada Lovelace', 'Bob', 'Cy Young'].map((n) => (n === peer.name ? `${n} (you)` : n)));
          assert.deepEqual(info!.initials, ['AL', 'B', 'CY']);
          assert.equal(info!.colors[1], 'rgb(230, 85, 13)', "Bob's own colour");
          assert.equal(info!.colors[2], 'rgb(102, 51, 153)', "Cy's own colour, a named one");
          assert.ok(info!.visible);
        }
        // The tooltip: name and e-mail, on hover.
        const adaAvatar = bob.page.locator('.wave-avatar').first();
        await adaAvatar.hover();
        const tip = bob.page.locator('.wave-avatar-tip').first();
        await tip.waitFor({ state: 'visible', timeout: 10_000 });
        assert.equal(await tip.innerText(), 'Ada Lovelace\nada@example.com');
        await bob.page.mouse.move(1, 1);
        const cyBar = (await avatars(cy.page))!;
        assert.match(cyBar.className, /wave-avatars--vertical/);
        assert.match(cyBar.className, /wave-avatars--left/);
        const adaBar = (await avatars(ada.page))!;
        assert.ok(adaBar.box.right - adaBar.box.left > adaBar.box.bottom - adaBar.box.top, 'horizontal by default');

        // ---- carets and selections: Ada selects "charlie"; Bob and Cy type lines above it ----
        await selectWord(ada.page, kind, 'charlie');
        await caretOnWord(bob.page, kind, 'Ada Lovelace', 'charlie');
        await caretOnWord(cy.page, kind, 'Ada Lovelace', 'charlie');
        await bob.driver.focusStart(bob.page);
        await bob.driver.type(bob.page, 'Bob writes above\n');
        // Cy starts once Bob's line has reached her: this test is about presence; two users splitting one
        // paragraph at once has its own test (richtext.test.ts, "at the start of the same paragraph").
        await until("Bob's line in Cy's page", () => text(cy), (t) => t.startsWith('Bob writes above\n'));
        await cy.driver.focusStart(cy.page);
        await cy.driver.type(cy.page, 'Cy too\n');
        const expected = await until('the two new lines everywhere', () => Promise.all(peers.map(text)), (t) => t.every((x) => x.includes('Bob writes above') && x.includes('Cy too') && x === t[0]));
        assert.ok(expected[0]!.indexOf('charlie') > expected[0]!.indexOf('Cy too'));
        await caretOnWord(bob.page, kind, 'Ada Lovelace', 'charlie');
        await caretOnWord(cy.page, kind, 'Ada Lovelace', 'charlie');
        // A narrower window re-lays the text out: the caret follows its character.
        await bob.page.setViewportSize({ width: 760, height: 700 });
        await caretOnWord(bob.page, kind, 'Ada Lovelace', 'charlie');
        await bob.page.setViewportSize({ width: 1000, height: 720 });
        await caretOnWord(bob.page, kind, 'Ada Lovelace', 'charlie');
        // Bob's and Cy's carets are drawn in Ada's page too, after what they typed.
        await until("Bob's and Cy's carets in Ada's page", async () => [await drawn(ada.page, 'Bob'), await drawn(ada.page, 'Cy Young')], (d) => d.every((x) => x.caret !== null));

        // ---- labels: on for ~2 s after a move, always with cursorAlwaysOn ----
        await until("Ada's label hidden in Bob's page once she stopped moving", () => drawn(bob.page, 'Ada Lovelace'), (d) => d.caret !== null && !d.labelVisible);
        assert.ok((await drawn(cy.page, 'Ada Lovelace')).labelVisible, 'cursorAlwaysOn keeps the label');
        // Hover shows it.
        const adaCaret = (await drawn(bob.page, 'Ada Lovelace')).caret!;
        await bob.page.mouse.move((adaCaret.left + adaCaret.right) / 2, (adaCaret.top + adaCaret.bottom) / 2);
        await until('label on hover', () => drawn(bob.page, 'Ada Lovelace'), (d) => d.labelVisible);

        // ---- pointers: Ada and Bob scrolled differently, Ada points at "r20z" ----
        await scrollToWord(ada.page, kind, 'r20z', 0.3);
        await scrollToWord(bob.page, kind, 'r20z', 0.7);
        await scrollToWord(cy.page, kind, 'r20z', 0.5);
        const target = await until('"r20z" in Ada\'s page', () => wordBox(ada.page, kind, 'r20z'), (b) => b !== null);
        const bobWord = (await wordBox(bob.page, kind, 'r20z'))!;
        assert.ok(Math.abs(bobWord.top - target!.top) > 50, `Ada's and Bob's pages are scrolled differently (${target!.top} vs ${bobWord.top})`);
        const aim = { x: target!.left + 3, y: (target!.top + target!.bottom) / 2 };
        await ada.page.mouse.move(aim.x - 20, aim.y - 10);
        await ada.page.mouse.move(aim.x, aim.y, { steps: 3 });
        for (const peer of [bob, cy]) {
          await until(
            `${peer.name}: Ada's pointer on "r20z"`,
            async () => ({ word: await wordBox(peer.page, kind, 'r20z'), d: await drawn(peer.page, 'Ada Lovelace') }),
            ({ word, d }) => word !== null && d.pointer !== null && near(d.pointer.x, word.left + 3, PX) && near(d.pointer.y, (word.top + word.bottom) / 2, PX),
          );
        }
        assert.match((await drawn(bob.page, 'Ada Lovelace')).pointerShape ?? '', /wave-pointer--arrow/);
        assert.match((await drawn(cy.page, 'Ada Lovelace')).pointerShape ?? '', /wave-pointer--pointerSolid/);
        // A click is a ripple in the others' pages.
        await ada.page.mouse.down();
        await ada.page.mouse.up();
        await bob.page.waitForSelector('.wave-ripple', { state: 'attached', timeout: 20_000 });
        // … and is gone shortly after.
        await bob.page.waitForSelector('.wave-ripple', { state: 'detached', timeout: 20_000 });

        // Screenshots with three users (looked at by a person: e2e/artifacts/presence/): everyone back near the top,
        // Ada selects "charlie", Bob points at "bravo", Cy's caret at the end of her line.
        for (const peer of peers) {
          await scrollToWord(peer.page, kind, 'charlie', 0.3);
          await peer.page.evaluate(() => window.scrollTo(0, 0)); // the page's top: header, avatars, editor
        }
        await selectWord(ada.page, kind, 'charlie');
        await cy.driver.focusStart(cy.page);
        await cy.driver.type(cy.page, '!');
        const bravo = (await wordBox(bob.page, kind, 'bravo'))!;
        await bob.page.mouse.move(bravo.left + 8, bravo.bottom - 4, { steps: 2 });
        const bobDrawn = await until("Bob's pointer in Ada's page", () => drawn(ada.page, 'Bob'), (d) => d.pointer !== null);
        // One colour per user: avatar, caret and pointer.
        assert.equal(bobDrawn.caretColor, 'rgb(230, 85, 13)');
        assert.equal(bobDrawn.pointerColor, 'rgb(230, 85, 13)');
        await until("Ada's selection in Bob's page", () => drawn(bob.page, 'Ada Lovelace'), (d) => d.selection.length > 0);
        for (const peer of peers) {
          await peer.page.screenshot({ path: join(ARTIFACTS, `${kind}-${peer.name.split(' ')[0]!.toLowerCase()}.png`) });
        }
        // Nothing of Wave's inside the editor: every presence element lives in the overlay (or the textarea mirror).
        for (const peer of peers) {
          const outside = await peer.page.evaluate(() => {
            const frames = [document, ...Array.from(document.querySelectorAll('iframe')).map((f) => f.contentDocument).filter((d): d is Document => d !== null)];
            return frames.flatMap((d) => Array.from(d.querySelectorAll('[class*="wave-"]')))
              .filter((el) => !el.closest('.wave-presence') && !el.classList.contains('wave-mirror'))
              .map((el) => el.className);
          });
          assert.deepEqual(outside, [], `${peer.name}: presence elements outside the overlay`);
        }
        const aimAgain = await wordBox(ada.page, kind, 'r3z');
        const aim2 = { x: aimAgain!.left + 3, y: (aimAgain!.top + aimAgain!.bottom) / 2 };

        // ---- show/hide methods ----
        const count = (page: Page, selector: string) => page.evaluate((s) => Array.from(document.querySelectorAll(s)).filter((e) => e.getClientRects().length > 0).length, selector);
        const toggle = (page: Page, expr: string) => page.evaluate(expr);
        await toggle(bob.page, 'window.coedit.cursors.hide()');
        await until('cursors.hide()', () => count(bob.page, '.wave-caret'), (n) => n === 0);
        await toggle(bob.page, 'window.coedit.cursors.show()');
        await until('cursors.show()', () => count(bob.page, '.wave-caret'), (n) => n === 2);
        await toggle(bob.page, 'window.coedit.cursor.hide()');
        await until('cursor.hide() (alias)', () => count(bob.page, '.wave-caret'), (n) => n === 0);
        await toggle(bob.page, 'window.coedit.cursor.show()');
        await until('cursor.show() (alias)', () => count(bob.page, '.wave-caret'), (n) => n === 2);
        await toggle(bob.page, 'window.coedit.ui.hide()');
        await until('ui.hide()', () => count(bob.page, '.wave-avatar'), (n) => n === 0);
        await toggle(bob.page, 'window.coedit.ui.show()');
        await until('ui.show()', () => count(bob.page, '.wave-avatar'), (n) => n === 3);
        await until('a pointer in Bob\'s page', () => count(bob.page, '.wave-pointer'), (n) => n >= 1);
        await toggle(bob.page, 'window.coedit.pointers.hide()');
        await until('pointers.hide()', () => count(bob.page, '.wave-pointer'), (n) => n === 0);
        await toggle(bob.page, 'window.coedit.pointers.show()');
        await ada.page.mouse.move(aim2.x + 5, aim2.y);
        await until('pointers.show()', () => count(bob.page, '.wave-pointer'), (n) => n >= 1);

        // ---- options: showUI, showCursor, showPointer false ----
        const dee = await scene.open('Dee', driver, { doc, query: { ui: '0', cursors: '0', pointers: '0' } });
        await until('four users for Dee', () => dee.page.evaluate(() => window.coedit!.getUsers().length), (n) => n === 4);
        await ada.page.mouse.move(aim2.x + 10, aim2.y);
        await selectWord(ada.page, kind, 'bravo');
        await until('Ada moved for Bob', () => drawn(bob.page, 'Ada Lovelace'), (d) => d.caret !== null && d.labelVisible);
        assert.equal(await count(dee.page, '.wave-avatar'), 0, 'showUI: false');
        assert.equal(await count(dee.page, '.wave-caret'), 0, 'showCursor: false');
        assert.equal(await count(dee.page, '.wave-pointer'), 0, 'showPointer: false');
        await toggle(dee.page, 'window.coedit.cursors.show()');
        await until('cursors.show() after showCursor: false', () => count(dee.page, '.wave-caret'), (n) => n >= 1);

        // ---- leaving: stop() removes the user from peers, with their caret ----
        await dee.page.evaluate(() => window.coedit!.stop());
        await ada.page.evaluate(() => window.coedit!.stop());
        for (const peer of [bob, cy]) {
          await until(`${peer.name}: Ada and Dee gone`, () => avatars(peer.page), (a) => a?.names.length === 2, 10_000);
          await until(`${peer.name}: no caret of Ada`, () => drawn(peer.page, 'Ada Lovelace'), (d) => d.caret === null && d.pointer === null, 10_000);
        }
        assert.equal(await ada.page.evaluate(() => document.querySelectorAll('.wave-presence').length), 0, 'stop() removes the presence UI');
      });
    });

    it('a caret on an empty line, in the middle or at the end, is drawn on that line, at its start', { timeout: TIMEOUT_MS }, async () => {
      await withScene(browser, server, `presence-empty-line-${kind}`, async (scene) => {
        const doc = freshDocId(`presence-empty-line-${kind}`);
        const lines = 'first\n\nthird';
        const ada = await scene.open('Ada Lovelace', driver, { doc, text: lines });
        const bob = await scene.open('Bob', driver, { doc, text: lines });
        await ada.driver.focusStart(ada.page);
        await ada.page.keyboard.press('ArrowDown');
        const first = await until('"first" in Bob\'s page', () => wordBox(bob.page, kind, 'first'), (b) => b !== null);
        const third = (await wordBox(bob.page, kind, 'third'))!;
        await until(
          "Ada's caret on the empty line in Bob's page",
          () => drawn(bob.page, 'Ada Lovelace'),
          (d) => d.caret !== null && near(d.caret.left, first!.left, PX) && d.caret.top >= first!.bottom - PX && d.caret.bottom <= third.top + PX,
        );
        // A new empty line at the end.
        await ada.driver.focusEnd(ada.page);
        await ada.page.keyboard.press('Enter');
        await until(
          "Ada's caret on the new last line in Bob's page",
          () => drawn(bob.page, 'Ada Lovelace'),
          (d) => d.caret !== null && near(d.caret.left, first!.left, PX) && d.caret.top >= third.bottom - PX,
        );
      });
    });

    it('a pointer in the blank part of the editor below a one-line text shows whole, label included', { timeout: TIMEOUT_MS }, async () => {
      // Quill's root and TinyMCE's iframe body are only as tall as their text: below the first line a pointer must
      // still be drawn whole (Quill clips to its root) and sent (TinyMCE: the mouse is over the frame's <html> there).
      await withScene(browser, server, `presence-blank-${kind}`, async (scene) => {
        const doc = freshDocId(`presence-blank-${kind}`);
        const ada = await scene.open('Ada Lovelace', driver, { doc, text: 'hello world' });
        const bob = await scene.open('Bob', driver, { doc, text: 'hello world' });
        const word = await until('"hello" in Bob\'s page', () => wordBox(bob.page, kind, 'hello'), (b) => b !== null);
        const below = 100;
        await bob.page.mouse.move(word!.left + 3, word!.bottom + below - 10);
        await bob.page.mouse.move(word!.left + 3, word!.bottom + below, { steps: 2 });
        const adaWord = (await wordBox(ada.page, kind, 'hello'))!;
        await until(
          "Bob's pointer in the blank part of Ada's editor",
          () => drawn(ada.page, 'Bob'),
          (d) => d.pointer !== null && near(d.pointer.x, adaWord.left + 3, PX) && near(d.pointer.y, adaWord.bottom + below, PX),
        );
        const shown = await ada.page.evaluate(() => {
          const label = Array.from(document.querySelectorAll('.wave-pointer-label')).find((l) => l.textContent === 'Bob')!;
          const l = label.getBoundingClientRect();
          const c = label.closest('.wave-clip')!.getBoundingClientRect();
          return { label: [l.top, l.bottom], clip: [c.top, c.bottom] };
        });
        assert.ok(shown.label[0]! >= shown.clip[0]! && shown.label[1]! <= shown.clip[1]!, `the label is inside the visible editor: ${JSON.stringify(shown)}`);
      });
    });
  });
}
