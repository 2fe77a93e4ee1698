// Two (or three) real browsers co-editing one document through the real server and client, over every editor.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { Barrier, SHOTS_DIR, withScene, type Peer } from '../lib/browser.ts';
import { DRIVERS } from '../lib/drivers.ts';
import type { WaveServer } from '../lib/server.ts';
import { freshDocId, seededRandom, testSeed, waitUntil } from '../lib/util.ts';
import { serverAndBrowser } from '../lib/suite.ts';
import '../lib/page-globals.ts';

/** Edits cross the loopback in ~20 ms; a bound this large only catches a lost edit, never a slow one. */
const CONVERGE_MS = 15_000;
const SCENARIO_TIMEOUT_MS = 90_000;

let server: WaveServer;
let browser: Browser;

serverAndBrowser((s, b) => {
  server = s;
  browser = b;
});

/** Waits until every peer's editor holds the same text, and returns it. */
async function converged(peers: Peer[], timeoutMs = CONVERGE_MS): Promise<string> {
  let texts: string[] = [];
  await waitUntil(
    async () => {
      texts = await Promise.all(peers.map((p) => p.driver.text(p.page)));
      return texts.every((t) => t === texts[0]);
    },
    { timeoutMs, message: () => `identical editors; now ${JSON.stringify(Object.fromEntries(peers.map((p, i) => [p.name, texts[i]])))}` },
  );
  return texts[0]!;
}

/** Waits until the page's latest `users_update` lists exactly `names`, with `self` true only for `me`. */
async function waitForUsers(page: Page, me: string, names: string[]): Promise<void> {
  await page
    .waitForFunction(
      ({ me, names }) => {
        const users = window.waveLog!.users_update.at(-1);
        if (!users || users.length !== names.length) return false;
        const listed = users.map((u) => u.user?.name).sort();
        const selves = users.filter((u) => u.self);
        return JSON.stringify(listed) === JSON.stringify([...names].sort()) && selves.length === 1 && selves[0]!.user?.name === me;
      },
      { me, names },
      { timeout: CONVERGE_MS },
    )
    .catch(async (err: Error) => {
      const seen = await page.evaluate(() => JSON.stringify(window.waveLog!.users_update.at(-1)));
      throw new Error(`${me}: users_update never listed ${names.join(', ')} with one self; last: ${seen} (${err.message})`);
    });
}

/** Waits until a `status {saved: true, pending: 0}` is received after the page's last key press. */
async function waitForSavedAfterTyping(peer: Peer): Promise<void> {
  await peer.page
    .waitForFunction(
      () => {
        const t = window.waveTiming!;
        const last = window.waveLog!.status.at(-1);
        return t.status.some((s) => s.at > t.lastKeyAt && s.saved && s.pending === 0) && last?.saved === true;
      },
      undefined,
      { timeout: CONVERGE_MS },
    )
    .catch(async (err: Error) => {
      const seen = await peer.page.evaluate(() => JSON.stringify({ lastKeyAt: window.waveTiming!.lastKeyAt, status: window.waveTiming!.status.slice(-5) }));
      throw new Error(`${peer.name}: no status {saved: true} after typing stopped: ${seen} (${err.message})`);
    });
  const line = await peer.page.locator('#status').textContent();
  assert.match(line ?? '', /saved/, `${peer.name}: the status line shows "saved"`);
}

/** Types `words` one by one with a random per-key delay (input shaping only), at the caret. */
async function typeWords(peer: Peer, words: string[], rand: () => number): Promise<void> {
  for (const word of words) await peer.driver.type(peer.page, word, { delay: 5 + Math.floor(rand() * 45) });
}

function countOf(tokens: string[], word: string): number {
  return tokens.filter((t) => t === word).length;
}

for (const driver of DRIVERS) {
  describe(`co-editing over ${driver.name}`, () => {
    it('two users typing concurrently converge on every word exactly once', { timeout: SCENARIO_TIMEOUT_MS }, async () => {
      const label = `${driver.name}-concurrent`;
      const seed = testSeed(label);
      const rand = seededRandom(seed);
      await withScene(browser, server, label, async (scene) => {
        const doc = freshDocId(label);
        const ann = await scene.open('Ann', driver, { doc });
        const bob = await scene.open('Bob', driver, { doc });

        // An anchor both sides agree on, so that "start" and "end" are different places.
        await driver.focusEnd(ann.page);
        await driver.type(ann.page, 'MID');
        await waitUntil(async () => (await driver.text(bob.page)) === 'MID', { timeoutMs: CONVERGE_MS, message: 'Bob to see "MID"' });

        // Unique words; Ann appends at the end, Bob inserts at the start, both at the same time.
        const count = 12 + Math.floor(rand() * 8);
        const annWords = Array.from({ length: count }, (_, i) => `ann${i}q${Math.floor(rand() * 1000)}`);
        const bobWords = Array.from({ length: count }, (_, i) => `bob${i}z${Math.floor(rand() * 1000)}`);
        console.log(`${label}: ${count} words each`);
        await driver.focusEnd(ann.page);
        await driver.focusStart(bob.page);
        await Promise.all([
          typeWords(ann, annWords.map((w) => ` ${w}`), seededRandom(seed + 1)),
          typeWords(bob, bobWords.map((w) => `${w} `), seededRandom(seed + 2)),
        ]);

        const text = await converged([ann, bob]);
        const tokens = text.split(/\s+/).filter(Boolean);
        for (const word of [...annWords, ...bobWords, 'MID']) {
          assert.equal(countOf(tokens, word), 1, `"${word}" appears exactly once in ${JSON.stringify(text)}`);
        }
        assert.deepEqual([...tokens].sort(), [...annWords, ...bobWords, 'MID'].sort(), 'no other text appeared');
        // Each caret stayed where its user was typing while the other's edits arrived.
        const expected = `${bobWords.map((w) => `${w} `).join('')}MID${annWords.map((w) => ` ${w}`).join('')}`;
        assert.equal(text, expected, 'the words are in typing order: Bob\'s before MID, Ann\'s after');

        await waitForUsers(ann.page, 'Ann', ['Ann', 'Bob']);
        await waitForUsers(bob.page, 'Bob', ['Ann', 'Bob']);

        for (const peer of [ann, bob]) {
          const sources = await peer.page.evaluate(() => window.waveLog!.content_changed.map((e) => e.source));
          assert.ok(sources.includes('local'), `${peer.name} typed: content_changed {source: 'local'} fired (${sources.length} events)`);
          assert.ok(sources.includes('remote'), `${peer.name} received: content_changed {source: 'remote'} fired`);
          const sawUnsaved = await peer.page.evaluate(() => window.waveLog!.status.some((s) => !s.saved && s.pending > 0));
          assert.ok(sawUnsaved, `${peer.name}: a status with pending edits was reported while typing`);
        }
        await waitForSavedAfterTyping(ann);
        await waitForSavedAfterTyping(bob);

        mkdirSync(SHOTS_DIR, { recursive: true });
        for (const peer of [ann, bob]) {
          await peer.page.screenshot({ path: join(SHOTS_DIR, `${driver.name}-${peer.name}.png`) });
        }
      });
    });

    it('a user who joins later gets the session content, not the host copy again', { timeout: SCENARIO_TIMEOUT_MS }, async () => {
      const label = `${driver.name}-late-join`;
      await withScene(browser, server, label, async (scene) => {
        const doc = freshDocId(label);
        const hostCopy = 'Stored by the host.';
        const ann = await scene.open('Ann', driver, { doc, text: hostCopy });
        assert.equal(await driver.text(ann.page), hostCopy, 'the first editor keeps the content it seeded');
        await driver.focusEnd(ann.page);
        await driver.type(ann.page, ' Ann was here.');
        await waitForSavedAfterTyping(ann);

        // Bob's host loads the same (now stale) stored copy; the live session must win, without duplication.
        const bob = await scene.open('Bob', driver, { doc, text: hostCopy });
        const want = `${hostCopy} Ann was here.`;
        assert.equal(await converged([ann, bob]), want);

        await driver.focusEnd(bob.page);
        await driver.type(bob.page, ' Bob too.');
        await waitUntil(async () => (await driver.text(ann.page)) === `${want} Bob too.`, {
          timeoutMs: CONVERGE_MS,
          message: `Ann to see Bob's edit`,
        });
        assert.equal(await converged([ann, bob]), `${want} Bob too.`);
      });
    });

    it('two pages starting together with the same host content seed it exactly once', { timeout: SCENARIO_TIMEOUT_MS }, async () => {
      const label = `${driver.name}-seed-once`;
      await withScene(browser, server, label, async (scene) => {
        const doc = freshDocId(label);
        const hostCopy = 'Seed me once.';
        // Both pages fetch their config, then call start() in the same instant.
        const gate = new Barrier(2);
        const [ann, bob] = await Promise.all([
          scene.open('Ann', driver, { doc, text: hostCopy, gate }),
          scene.open('Bob', driver, { doc, text: hostCopy, gate }),
        ]);
        assert.equal(await converged([ann!, bob!]), hostCopy);

        // A round trip after the seed: anything sent before it (a second seed) has arrived by then.
        await driver.focusEnd(ann!.page);
        await driver.type(ann!.page, '!');
        await waitUntil(async () => (await driver.text(bob!.page)).endsWith('!'), { timeoutMs: CONVERGE_MS, message: 'Bob to see "!"' });
        assert.equal(await converged([ann!, bob!]), `${hostCopy}!`);

        // A third page, also with the host copy, joins the live session.
        const cid = await scene.open('Cid', driver, { doc, text: hostCopy });
        assert.equal(await converged([ann!, bob!, cid]), `${hostCopy}!`);
        await waitForUsers(cid.page, 'Cid', ['Ann', 'Bob', 'Cid']);
      });
    });
  });
}
