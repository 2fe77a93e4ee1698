// One adapter contract, run in Chromium against every editor in CONTRACT_DRIVERS (STYLE.md §4): real editors, real
// keys, the real server, and always reading the *other* page to prove an edit crossed the wire. Each case checks both
// directions: a local edit reaches the peer, and a peer's edit is shown in this editor.
// To run it over another editor, give it a ContractDriver (e2e/lib/drivers.ts) and add it to CONTRACT_DRIVERS.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { withScene, type Peer, type Scene } from '../lib/browser.ts';
import { CONTRACT_DRIVERS, type ContractDriver } from '../lib/drivers.ts';
import type { WaveServer } from '../lib/server.ts';
import { freshDocId, waitUntil } from '../lib/util.ts';
import { serverAndBrowser } from '../lib/suite.ts';
import '../lib/page-globals.ts';

/** Edits cross the loopback in ~20 ms; this bound only catches a lost edit. */
const CONVERGE_MS = 10_000;
const CASE_TIMEOUT_MS = 60_000;

let server: WaveServer;
let browser: Browser;

serverAndBrowser((s, b) => {
  server = s;
  browser = b;
});

/** Waits until `peer`'s editor shows exactly `want`. */
async function shows(peer: Peer, want: string): Promise<void> {
  let seen = '';
  await waitUntil(async () => (seen = await peer.driver.text(peer.page)) === want, {
    timeoutMs: CONVERGE_MS,
    message: () => `${peer.name} to show ${JSON.stringify(want)}; shows ${JSON.stringify(seen)}`,
  });
}

/** Two users on one fresh document that `Ann`'s host loaded with `text`; resolves once both show it. */
async function pair(scene: Scene, driver: ContractDriver, label: string, text: string): Promise<[Peer, Peer]> {
  const doc = freshDocId(`${driver.name}-${label}`);
  const ann = await scene.open('Ann', driver, { doc, text });
  const bob = await scene.open('Bob', driver, { doc });
  await shows(bob, text);
  return [ann, bob];
}

const press = (peer: Peer, key: string) => peer.page.keyboard.press(key);
const typeAt = async (peer: Peer, driver: ContractDriver, index: number, text: string) => {
  await driver.select(peer.page, index, index);
  await driver.type(peer.page, text);
};

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

for (const driver of CONTRACT_DRIVERS) {
  describe(`adapter contract: ${driver.name}`, () => {
    const run = (label: string, body: (scene: Scene) => Promise<void>) =>
      withScene(browser, server, `contract-${driver.name}-${label}`, body);

    it('insert: typed text reaches the peer at the same place, and the peer\'s at its place', { timeout: CASE_TIMEOUT_MS }, () =>
      run('insert', async (scene) => {
        const [ann, bob] = await pair(scene, driver, 'insert', 'hello world');
        await typeAt(ann, driver, 6, 'big ');
        await shows(bob, 'hello big world');
        await typeAt(bob, driver, 0, 'Oh, ');
        await shows(ann, 'Oh, hello big world');
        await typeAt(ann, driver, 'Oh, hello big world'.length, '!');
        await shows(bob, 'Oh, hello big world!');
      }));

    it('delete: Backspace over a selection, Backspace and Delete at the caret', { timeout: CASE_TIMEOUT_MS }, () =>
      run('delete', async (scene) => {
        const [ann, bob] = await pair(scene, driver, 'delete', 'alpha beta gamma');
        await driver.select(ann.page, 5, 10); // " beta"
        await press(ann, 'Backspace');
        await shows(bob, 'alpha gamma');
        await driver.select(bob.page, 'alpha gamma'.length, 'alpha gamma'.length);
        for (let i = 0; i < 3; i++) await press(bob, 'Backspace');
        await shows(ann, 'alpha ga');
        await driver.select(ann.page, 0, 0);
        await press(ann, 'Delete');
        await shows(bob, 'lpha ga');
      }));

    it('replace: typing over a selection replaces it, on both sides', { timeout: CASE_TIMEOUT_MS }, () =>
      run('replace', async (scene) => {
        const [ann, bob] = await pair(scene, driver, 'replace', 'one two three');
        await driver.select(ann.page, 4, 7); // "two"
        await driver.type(ann.page, '2');
        await shows(bob, 'one 2 three');
        await driver.select(bob.page, 'one 2 three'.length, 'one 2 '.length); // "three", selected backwards
        await driver.type(bob.page, '3');
        await shows(ann, 'one 2 3');
      }));

    it('newline: Enter splits the line on both sides', { timeout: CASE_TIMEOUT_MS }, () =>
      run('newline', async (scene) => {
        const [ann, bob] = await pair(scene, driver, 'newline', 'first');
        await driver.select(ann.page, 'first'.length, 'first'.length);
        await press(ann, 'Enter');
        await driver.type(ann.page, 'second');
        await shows(bob, 'first\nsecond');
        await driver.select(bob.page, 'fir'.length, 'fir'.length);
        await press(bob, 'Enter');
        await shows(ann, 'fir\nst\nsecond');
      }));

    it('emoji: surrogate pairs cross whole, never as half characters', { timeout: CASE_TIMEOUT_MS }, () =>
      run('emoji', async (scene) => {
        const [ann, bob] = await pair(scene, driver, 'emoji', 'x');
        await typeAt(ann, driver, 1, '😀🎉');
        await shows(bob, 'x😀🎉');
        // The peer inserts between two emoji (a UTF-16 offset past a surrogate pair) and before them.
        await typeAt(bob, driver, 'x😀'.length, '𝄞');
        await typeAt(bob, driver, 1, 'y');
        await shows(ann, 'xy😀𝄞🎉');
        await driver.select(ann.page, 'xy😀𝄞🎉'.length, 'xy😀𝄞🎉'.length);
        await press(ann, 'Backspace'); // one key removes one whole emoji
        await shows(bob, 'xy😀𝄞');
        for (const peer of [ann, bob]) {
          const text = await driver.text(peer.page);
          assert.ok(!LONE_SURROGATE.test(text), `${peer.name}: no half character in ${JSON.stringify(text)}`);
        }
        assert.equal(await driver.content(ann.page), await driver.content(bob.page), 'identical content');
      }));

    it('selection round trip: the local selection stays on the same characters across remote edits', { timeout: CASE_TIMEOUT_MS }, () =>
      run('selection', async (scene) => {
        const [ann, bob] = await pair(scene, driver, 'selection', 'alpha beta gamma');
        await driver.select(ann.page, 6, 10); // "beta"
        const selected = async () => {
          const [start, end] = await driver.selection(ann.page);
          return { start, end, text: (await driver.text(ann.page)).slice(start, end) };
        };
        assert.deepEqual(await selected(), { start: 6, end: 10, text: 'beta' });

        await typeAt(bob, driver, 0, 'XY '); // before the selection: it moves right
        await shows(ann, 'XY alpha beta gamma');
        assert.deepEqual(await selected(), { start: 9, end: 13, text: 'beta' }, 'moved with the text');

        await typeAt(bob, driver, 'XY alpha beta gamma'.length, '!'); // after it: it stays
        await shows(ann, 'XY alpha beta gamma!');
        assert.deepEqual(await selected(), { start: 9, end: 13, text: 'beta' }, 'an insert after it leaves it alone');

        await driver.select(bob.page, 0, 3); // "XY " deleted before it: it moves left
        await press(bob, 'Backspace');
        await shows(ann, 'alpha beta gamma!');
        assert.deepEqual(await selected(), { start: 6, end: 10, text: 'beta' }, 'moved back with the text');

        // And it is still the live selection: typing replaces exactly "beta".
        await driver.type(ann.page, 'BETA');
        await shows(bob, 'alpha BETA gamma!');
      }));

    it('stop() unhooks every listener: no edit crosses either way, and a restart binds once', { timeout: CASE_TIMEOUT_MS }, () =>
      run('stop', async (scene) => {
        const [ann, bob] = await pair(scene, driver, 'stop', 'shared');
        const cid = await scene.open('Cid', driver, { doc: new URL(ann.page.url()).searchParams.get('doc')! });
        await shows(cid, 'shared');

        await ann.page.evaluate(() => window.coedit!.stop());
        assert.equal(await ann.page.evaluate(() => window.coedit!.getState()), 'stopped');
        assert.deepEqual(await driver.leftovers(ann.page), [], 'nothing of the session is left hooked into the editor');
        const changesAtStop = await ann.page.evaluate(() => window.waveLog!.content_changed.length);

        // Local typing stays local; the peers' edits stay with them (Cid seeing Bob's edit proves it was sent).
        await typeAt(ann, driver, 'shared'.length, ' ann-after-stop');
        await typeAt(bob, driver, 0, 'bob-after-stop ');
        await shows(cid, 'bob-after-stop shared');
        await bob.page.waitForFunction(() => window.waveLog!.status.at(-1)?.saved === true, undefined, { timeout: CONVERGE_MS });
        assert.equal(await driver.text(ann.page), 'shared ann-after-stop', 'Ann shows only her own text');
        assert.equal(await driver.text(bob.page), 'bob-after-stop shared', 'Bob never got Ann\'s text');
        assert.equal(await ann.page.evaluate(() => window.waveLog!.content_changed.length), changesAtStop, 'no content_changed after stop');
        // Undo keys after stop belong to the editor again and must not throw (withScene fails on page errors).
        await press(ann, 'Control+z');

        // start() rejoins: the live session's content wins, and one edit arrives once (a listener left over from the
        // first binding would write it twice).
        await ann.page.evaluate(() => (window.coedit as unknown as { start(): Promise<void> }).start());
        await shows(ann, 'bob-after-stop shared');
        await typeAt(ann, driver, 0, '[again]');
        await shows(bob, '[again]bob-after-stop shared');
        await shows(cid, '[again]bob-after-stop shared');
      }));
  });
}
