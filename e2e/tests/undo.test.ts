// Undo undoes only your own edits, in every editor of CONTRACT_DRIVERS, with the editor's usual keys: two users type
// interleaved words; Ctrl+Z in one page removes only that user's words (never the other's, never the host content
// that seeded the document), both pages converge, and redo (Ctrl+Y, Ctrl+Shift+Z) brings the words back.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { withScene, type Peer } from '../lib/browser.ts';
import { CONTRACT_DRIVERS, type ContractDriver } from '../lib/drivers.ts';
import type { WaveServer } from '../lib/server.ts';
import { freshDocId, waitUntil } from '../lib/util.ts';
import { serverAndBrowser } from '../lib/suite.ts';
import '../lib/page-globals.ts';

const CONVERGE_MS = 10_000;
const TEST_TIMEOUT_MS = 90_000;
/** More presses than undo steps exist: the loops stop as soon as the expected text is reached. */
const MAX_PRESSES = 12;

let server: WaveServer;
let browser: Browser;

serverAndBrowser((s, b) => {
  server = s;
  browser = b;
});

async function shows(peer: Peer, want: string): Promise<void> {
  let seen = '';
  await waitUntil(async () => (seen = await peer.driver.text(peer.page)) === want, {
    timeoutMs: CONVERGE_MS,
    message: () => `${peer.name} to show ${JSON.stringify(want)}; shows ${JSON.stringify(seen)}`,
  });
}

/** Waits until both pages show the same content, and returns `a`'s text. */
async function converged(a: Peer, b: Peer, driver: ContractDriver): Promise<string> {
  let ca = '';
  let cb = '';
  await waitUntil(async () => (ca = await driver.content(a.page)) === (cb = await driver.content(b.page)), {
    timeoutMs: CONVERGE_MS,
    message: () => `identical content: ${a.name}=${ca} ${b.name}=${cb}`,
  });
  return driver.text(a.page);
}

async function typeAtEnd(peer: Peer, driver: ContractDriver, text: string): Promise<void> {
  await driver.focusEnd(peer.page);
  await driver.type(peer.page, text);
}

/**
 * Presses `key` in `peer` until its own text satisfies `done` (each press is one undo step, so the number of presses
 * depends on how typing was grouped), waiting after each press until the other page shows the same text.
 */
async function pressUntil(peer: Peer, other: Peer, key: string, done: (text: string) => boolean): Promise<{ text: string; presses: number }> {
  for (let presses = 1; presses <= MAX_PRESSES; presses++) {
    await peer.page.keyboard.press(key);
    const text = await peer.driver.text(peer.page);
    await shows(other, text);
    if (done(text)) return { text, presses };
  }
  throw new Error(`${peer.name}: ${MAX_PRESSES} × ${key} never reached the expected text; now ${JSON.stringify(await peer.driver.text(peer.page))}`);
}

/**
 * The editor's own undo/redo API, as a host's toolbar button or menu calls it; it must reach the same per-user undo.
 * (A textarea has none: its menu items arrive as `beforeinput` history events.)
 */
const OWN_COMMANDS: Record<string, { undo: string; redo: string }> = {
  quill: { undo: 'window.quill.history.undo()', redo: 'window.quill.history.redo()' },
  codemirror: { undo: "window.cm.execCommand('undo')", redo: "window.cm.execCommand('redo')" },
};

for (const driver of CONTRACT_DRIVERS) {
  describe(`undo over ${driver.name}`, () => {
    it('Ctrl+Z undoes only my own edits, redo brings them back, the seed is never undone', { timeout: TEST_TIMEOUT_MS }, async () => {
      await withScene(browser, server, `undo-${driver.name}`, async (scene) => {
        const doc = freshDocId(`undo-${driver.name}`);
        const ann = await scene.open('Ann', driver, { doc, text: 'Base.' });
        const bob = await scene.open('Bob', driver, { doc });
        await shows(bob, 'Base.');

        // Interleaved: each word waits until the other page shows the previous one.
        const annWords = [' a1', ' a2', ' a3'];
        const bobWords = [' b1', ' b2', ' b3'];
        let expected = 'Base.';
        for (let i = 0; i < annWords.length; i++) {
          await typeAtEnd(ann, driver, annWords[i]!);
          expected += annWords[i];
          await shows(bob, expected);
          await typeAtEnd(bob, driver, bobWords[i]!);
          expected += bobWords[i];
          await shows(ann, expected);
        }
        assert.equal(expected, 'Base. a1 b1 a2 b2 a3 b3');

        await driver.focusEnd(ann.page);
        const undone = await pressUntil(ann, bob, 'Control+z', (t) => !/a\d/.test(t));
        assert.equal(undone.text, 'Base. b1 b2 b3', `only Ann's words went (${undone.presses} presses)`);
        assert.equal(await converged(ann, bob, driver), 'Base. b1 b2 b3');

        // Nothing left to undo: the host's content that seeded the document is not Ann's edit.
        for (let i = 0; i < 2; i++) await ann.page.keyboard.press('Control+z');
        assert.equal(await driver.text(ann.page), 'Base. b1 b2 b3', 'the seed stays');

        // Redo: first with Ctrl+Y, then Ctrl+Shift+Z, until every word of Ann's is back.
        await ann.page.keyboard.press('Control+y');
        assert.match(await driver.text(ann.page), /a\d/, 'Ctrl+Y redid a step');
        const redone = await pressUntil(ann, bob, 'Control+Shift+z', (t) => ['a1', 'a2', 'a3'].every((w) => t.includes(w)));
        assert.equal(redone.text, 'Base. a1 b1 a2 b2 a3 b3', 'redo restored Ann\'s words where they were');
        assert.equal(await converged(ann, bob, driver), 'Base. a1 b1 a2 b2 a3 b3');

        // Bob's undo is his own: it takes his last word(s) (words typed < 500 ms apart are one step), none of Ann's.
        await driver.focusEnd(bob.page);
        const bobUndo = await pressUntil(bob, ann, 'Control+z', (t) => !t.includes('b3'));
        assert.match(bobUndo.text, /^Base\. a1( b1)? a2( b2)? a3$/, `Bob undid only his own words: ${JSON.stringify(bobUndo.text)}`);
        assert.equal(await converged(ann, bob, driver), bobUndo.text);
      });
    });

    const own = OWN_COMMANDS[driver.name];
    if (own) {
      it(`the editor's own undo command (${own.undo}) undoes only my own edits too`, { timeout: TEST_TIMEOUT_MS }, async () => {
        await withScene(browser, server, `undo-command-${driver.name}`, async (scene) => {
          const doc = freshDocId(`undo-command-${driver.name}`);
          const ann = await scene.open('Ann', driver, { doc, text: 'Base.' });
          const bob = await scene.open('Bob', driver, { doc });
          await shows(bob, 'Base.');
          await typeAtEnd(ann, driver, ' mine');
          await shows(bob, 'Base. mine');
          await typeAtEnd(bob, driver, ' his');
          await shows(ann, 'Base. mine his');
          await ann.page.evaluate(own.undo);
          assert.equal(await driver.text(ann.page), 'Base. his', 'the command undid Ann\'s edit, not Bob\'s');
          await shows(bob, 'Base. his');
          await ann.page.evaluate(own.undo);
          assert.equal(await driver.text(ann.page), 'Base. his', 'nothing else to undo: the seed stays');
          await ann.page.evaluate(own.redo);
          assert.equal(await driver.text(ann.page), 'Base. mine his');
          await shows(bob, 'Base. mine his');
        });
      });
    }
  });
}
