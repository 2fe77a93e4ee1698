// Session lifecycle in a real browser: the same document in three tabs of one browser (RELIABILITY R6), and the
// "leave site?" confirmation while edits are unsaved.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import type { Browser, Dialog, Page } from 'playwright-core';
import { launchBrowser, withScene, type Peer, type Scene } from '../lib/browser.ts';
import { textarea } from '../lib/drivers.ts';
import { startServer, type WaveServer } from '../lib/server.ts';
import { freePort, freshDocId, waitUntil } from '../lib/util.ts';
import { serverAndBrowser } from '../lib/suite.ts';
import '../lib/page-globals.ts';

let server: WaveServer;
let browser: Browser;

serverAndBrowser((s, b) => {
  server = s;
  browser = b;
});

const value = (page: Page) => textarea.text(page);

it('[R6] one document in three tabs of one browser: three users, nobody kicked, converged', async () => {
  await withScene(browser, server, 'three-tabs', async (scene) => {
    const doc = freshDocId('tabs');
    const first = await scene.open('Tab', textarea, { doc, text: 'start\n' });
    const pages: Page[] = [first.page];
    for (let i = 0; i < 2; i++) {
      const page = await first.context.newPage();
      page.on('pageerror', (err) => first.errors.push(`pageerror: ${err.message}`));
      await page.goto(scene.demoUrl(textarea, { doc, user: 'Tab' }));
      await page.evaluate(() => window.waveStarted);
      pages.push(page);
    }
    for (const [i, page] of pages.entries()) {
      await page.locator('#editor').focus();
      await page.keyboard.press('End');
      await page.keyboard.type(` tab${i}`);
    }
    await waitUntil(async () => new Set(await Promise.all(pages.map(value))).size === 1, {
      message: async () => `three tabs converged: ${JSON.stringify(await Promise.all(pages.map(value)))}`,
    });
    const text = await value(pages[0]!);
    for (const word of ['tab0', 'tab1', 'tab2']) assert.equal(text.split(word).length - 1, 1, `${word} once in ${JSON.stringify(text)}`);
    for (const page of pages) {
      await page.waitForFunction(() => window.waveLog!.users_update.at(-1)?.length === 3, undefined, { timeout: 10_000 });
      const users = await page.evaluate(() => window.waveLog!.users_update.at(-1)!.map((u) => u.self));
      const log = await page.evaluate(() => JSON.stringify(window.waveLog!.users_update.map((list) => list.map((u) => `${u.user.name}@${+new Date(u.joinTime)}${u.self ? '*' : ''}`))));
      assert.equal(users.filter(Boolean).length, 1, `each tab is itself exactly once; users_update history: ${log}`);
      assert.equal(await page.evaluate(() => window.coedit!.getState()), 'online', 'nobody was kicked');
    }
  });
});

it('asks "leave site?" only while edits are unsaved (config confirmLeave)', async () => {
  // This test has a Chromium of its own: its scene closes a context holding a page whose beforeunload dialog was
  // dismissed, and whatever that does to the browser process cannot reach the shared browser of the later tests.
  const own = await startServer();
  const ownBrowser = await launchBrowser();
  try {
    await withScene(ownBrowser, own, 'confirm-leave', async (scene) => {
      const doc = freshDocId('leave');
      const ann = await scene.open('Ann', textarea, {
        doc,
        text: 'hello',
        allowErrors: [/WebSocket connection to .* failed/, /ERR_CONNECTION_REFUSED/],
      });
      const dialogs: string[] = [];
      // Each dismissal is awaited before the page or its context is closed, so that no close overlaps one.
      const dismissals: Array<Promise<void>> = [];
      const onDialog = (dialog: Dialog) => {
        dialogs.push(dialog.type());
        dismissals.push(dialog.dismiss());
      };
      ann.page.on('dialog', onDialog);
      await ann.page.locator('#editor').focus();
      await ann.page.keyboard.type(' saved');
      await ann.page.waitForFunction(() => window.waveLog!.status.at(-1)?.saved === true);
      // With runBeforeUnload, close() returns before the page has closed; the page either closes or shows a dialog.
      const annSettled = Promise.race([ann.page.waitForEvent('close'), ann.page.waitForEvent('dialog')]);
      await ann.page.close({ runBeforeUnload: true });
      await annSettled;
      await Promise.all(dismissals);
      assert.equal(dialogs.length, 0, `no confirmation when everything is saved; got ${dialogs.join(', ')}`);
      assert.equal(ann.page.isClosed(), true, 'the saved page closed');

      const bob = await scene.open('Bob', textarea, { doc, allowErrors: [/WebSocket connection to .* failed/, /ERR_CONNECTION_REFUSED/] });
      bob.page.on('dialog', onDialog);
      await own.stop();
      await bob.page.waitForFunction(() => window.coedit!.getState() === 'offline');
      await bob.page.locator('#editor').focus();
      await bob.page.keyboard.type(' unsaved');
      await bob.page.waitForFunction(() => window.waveLog!.status.at(-1)?.saved === false);
      const bobDialog = bob.page.waitForEvent('dialog');
      await bob.page.close({ runBeforeUnload: true });
      await bobDialog;
      await Promise.all(dismissals);
      assert.deepEqual(dialogs, ['beforeunload']);
      assert.equal(bob.page.isClosed(), false, 'dismissing the dialog keeps the page open');
    });
  } finally {
    await ownBrowser.close();
    await own.stop();
  }
});

it('forceSync(content) replaces the document for every peer in one step and clears their undo stacks', async () => {
  await withScene(browser, server, 'force-sync', async (scene) => {
    const doc = freshDocId('force');
    const ann = await scene.open('Ann', textarea, { doc, text: 'draft one\n' });
    const bob = await scene.open('Bob', textarea, { doc });
    await bob.page.locator('#editor').focus();
    await bob.page.keyboard.press('End');
    // A deletion is what undo would bring back: Bob removes " one".
    for (let i = 0; i < 4; i++) await bob.page.keyboard.press('Backspace');
    await waitUntil(async () => (await value(ann.page)) === 'draft\n', { message: 'bob reached ann' });
    const before = await bob.page.evaluate(() => window.waveLog!.content_changed.length);

    await ann.page.evaluate(() => window.coedit!.forceSync('restored version\n'));
    await waitUntil(async () => (await value(bob.page)) === 'restored version\n', { message: 'bob shows the restored version' });
    assert.equal(await value(ann.page), 'restored version\n');
    const after = await bob.page.evaluate((n) => window.waveLog!.content_changed.slice(n), before);
    assert.deepEqual(after, [{ source: 'remote' }], 'exactly one remote content_changed at the peer');

    // Bob's undo stack was cleared: Ctrl+Z must not bring his old text back into the restored version.
    await bob.page.locator('#editor').focus();
    await bob.page.keyboard.press('Control+z');
    await bob.page.keyboard.type('!');
    await waitUntil(async () => (await value(ann.page)).includes('!'), { message: 'bob edit after undo reached ann' });
    assert.ok(!(await value(ann.page)).includes('one'), `undo did not resurrect Bob's deletion: ${JSON.stringify(await value(ann.page))}`);

    const rejected = await ann.page.evaluate(() => window.coedit!.forceSync(42).then(() => null, (e: { code: string; detail: string }) => [e.code, e.detail]));
    assert.deepEqual(rejected, ['invalid_config', "forceSync(content): expected a string for app 'text', got number 42"]);
  });
});

it('[R3] offline edits survive a closed tab (IndexedDB) and are uploaded once when it reopens online', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'wave-e2e-r3-'));
  const port = await freePort();
  const serverArgs = { dataDir, extraArgs: ['--port', String(port)] };
  let own = await startServer(serverArgs);
  const offlineErrors = [/WebSocket connection to .* failed/, /ERR_CONNECTION_REFUSED/];
  try {
    await withScene(browser, own, 'offline-reopen', async (scene) => {
      const doc = freshDocId('r3');
      const ann = await scene.open('Ann', textarea, { doc, text: 'base\n', allowErrors: offlineErrors });
      await ann.page.locator('#editor').focus();
      await ann.page.keyboard.press('Control+End');
      await ann.page.keyboard.type('online ');
      await ann.page.waitForFunction(() => window.waveLog!.status.at(-1)?.saved === true);

      await own.stop();
      await typeOfflineAndClose(ann, doc, 'offline-edit');

      own = await startServer(serverArgs);
      // The host reopens the document with its last saved copy (it never saw the offline edit).
      const again = await reopen(scene, ann, doc, 'base\nonline ');
      assert.equal(await value(again), 'base\nonline offline-edit');

      const bob = await scene.open('Bob', textarea, { doc, text: 'stale' });
      assert.equal(await value(bob.page), 'base\nonline offline-edit', 'uploaded once, nothing duplicated');
    });
  } finally {
    await own.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

it('[R3] a closed tab keeps the remote edits it had with its offline edit: once the session ended, only that edit is re-applied', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'wave-e2e-r3-'));
  const port = await freePort();
  let own = await startServer({ dataDir, extraArgs: ['--port', String(port)] });
  const offlineErrors = [/WebSocket connection to .* failed/, /ERR_CONNECTION_REFUSED/];
  try {
    await withScene(browser, own, 'offline-remote-kept', async (scene) => {
      const doc = freshDocId('r3r');
      const ann = await scene.open('Ann', textarea, { doc, text: 'base\n', allowErrors: offlineErrors });
      const bob = await scene.open('Bob', textarea, { doc, text: 'base\n' });
      await bob.page.locator('#editor').focus();
      await bob.page.keyboard.press('Control+End');
      await bob.page.keyboard.type('bob ');
      await bob.page.waitForFunction(() => window.waveLog!.status.at(-1)?.saved === true);
      await waitUntil(async () => (await value(ann.page)) === 'base\nbob ', { message: "Bob's edit reached Ann" });
      await bob.page.close({ runBeforeUnload: false });

      await own.stop();
      await ann.page.locator('#editor').focus();
      await ann.page.keyboard.press('Control+End');
      await typeOfflineAndClose(ann, doc, 'ann');

      // With no grace, the session ended when its last connection did: the reopened tab starts a new one, seeded
      // from the host's copy (it saved Bob's edit) plus the edits Ann's kept state holds beyond its confirmed copy.
      // Kept without Bob's edit, her offline text would be anchored on nothing and Bob's text would read as deleted.
      own = await startServer({ dataDir, sessionGrace: 0, extraArgs: ['--port', String(port)] });
      const again = await reopen(scene, ann, doc, 'base\nbob ');
      assert.equal(await value(again), 'base\nbob ann');
    });
  } finally {
    await own.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

it("[R3] a peer's edits are kept with the confirmed copy only: the live store is written for this user's own edits", async () => {
  await withScene(browser, server, 'kept-once', async (scene) => {
    const doc = freshDocId('kept');
    // Counts the read/write IndexedDB transactions each database gets (y-indexeddb opens one per stored update).
    const countWrites = `(() => {
      const writes = (window.idbWrites = {});
      const transaction = IDBDatabase.prototype.transaction;
      IDBDatabase.prototype.transaction = function (stores, mode, ...rest) {
        if (mode === 'readwrite') writes[this.name] = (writes[this.name] ?? 0) + 1;
        return transaction.call(this, stores, mode, ...rest);
      };
    })();`;
    const ann = await scene.open('Ann', textarea, { doc, text: 'base', initScript: countWrites });
    const bob = await scene.open('Bob', textarea, { doc, text: 'base' });
    await ann.page.evaluate(idbWritesSettled, doc);
    const writes = () => ann.page.evaluate(() => ({ ...(window as unknown as { idbWrites: Record<string, number> }).idbWrites }));
    const before = await writes();
    const stores = Object.keys(before).filter((name) => name.includes(doc));
    const live = stores.find((name) => !name.endsWith('#confirmed'));
    const confirmed = stores.find((name) => name.endsWith('#confirmed'));
    assert.ok(live && confirmed, `both stores written at start: ${JSON.stringify(before)}`);

    await bob.page.locator('#editor').focus();
    await bob.page.keyboard.press('End');
    await bob.page.keyboard.type(' from bob', { delay: 20 });
    await waitUntil(async () => (await value(ann.page)) === 'base from bob', { message: "Bob's edits reached Ann" });
    const afterBob = await writes();
    assert.equal(afterBob[live] ?? 0, before[live] ?? 0, `Bob's edits wrote Ann's live store: ${JSON.stringify({ before, afterBob })}`);
    assert.ok((afterBob[confirmed] ?? 0) > (before[confirmed] ?? 0), `Bob's edits are kept in Ann's confirmed store: ${JSON.stringify({ before, afterBob })}`);

    await ann.page.locator('#editor').focus();
    await ann.page.keyboard.press('End');
    await ann.page.keyboard.type('!');
    await ann.page.waitForFunction(() => window.waveLog!.status.at(-1)?.saved === true);
    const afterAnn = await writes();
    assert.ok((afterAnn[live] ?? 0) > (afterBob[live] ?? 0), `Ann's own edit is kept in her live store: ${JSON.stringify({ afterBob, afterAnn })}`);
  });
});

/**
 * Once `peer`'s page is offline, types `text` where its caret is, waits until the edit is pending and kept, and closes
 * the tab. y-indexeddb starts one IndexedDB transaction per update, synchronously, but a tab closed while they are in
 * flight aborts them (a user closing the tab within milliseconds of typing): the tab closes once they have committed,
 * without any chance to flush more.
 */
async function typeOfflineAndClose(peer: Peer, doc: string, text: string): Promise<void> {
  await peer.page.waitForFunction(() => window.coedit!.getState() === 'offline');
  await peer.page.keyboard.type(text);
  await peer.page.waitForFunction(() => window.waveLog!.status.at(-1)?.saved === false);
  await peer.page.evaluate(idbWritesSettled, doc);
  await peer.page.close({ runBeforeUnload: false });
}

/** The host opens `doc` again in `peer`'s browser with `hostText` as its copy; resolves once the page is saved. */
async function reopen(scene: Scene, peer: Peer, doc: string, hostText: string): Promise<Page> {
  const page = await peer.context.newPage();
  page.on('pageerror', (err) => peer.errors.push(`pageerror: ${err.message}`));
  await page.goto(scene.demoUrl(textarea, { doc, user: peer.name, text: hostText }));
  await page.evaluate(() => window.waveStarted);
  await page.waitForFunction(() => window.waveLog!.status.at(-1)?.saved === true);
  return page;
}

/**
 * Resolves once every IndexedDB write already started for `docId`'s databases has committed: IndexedDB runs
 * read/write transactions with overlapping scopes in the order they were created, across connections (IndexedDB 3.0,
 * "transaction scheduling"), so a read/write transaction created now completes only after them.
 */
async function idbWritesSettled(docId: string): Promise<void> {
  const names = (await indexedDB.databases()).map((d) => d.name ?? '').filter((n) => n.includes(docId));
  if (names.length === 0) throw new Error(`no IndexedDB database for ${docId}`);
  for (const name of names) {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const req = indexedDB.open(name);
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    const stores = Array.from(db.objectStoreNames);
    await new Promise<void>((resolve, reject) => {
      const tx = db.transaction(stores, 'readwrite');
      tx.oncomplete = () => resolve();
      tx.onerror = () => reject(tx.error);
    });
    db.close();
  }
}

