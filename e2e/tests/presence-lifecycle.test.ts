// Presence lifecycle: a user who leaves (tab closed, stop()) disappears from peers within 2 s; a silent
// one (RELIABILITY.md R5: tab frozen, its socket still open) within 30 s; no ghost avatars or carets afterwards.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { withScene } from '../lib/browser.ts';
import { textarea } from '../lib/drivers.ts';
import type { WaveServer } from '../lib/server.ts';
import { freshDocId, waitUntil } from '../lib/util.ts';
import { avatars, drawn, selectWord } from '../lib/presence.ts';
import { serverAndBrowser } from '../lib/suite.ts';
import '../lib/page-globals.ts';

const TIMEOUT_MS = 180_000;
/** How soon peers stop showing a user who left, and one who went silent. */
const LEAVE_MS = 2_000;
const SILENT_MS = 30_000;

let server: WaveServer;
let browser: Browser;

serverAndBrowser((s, b) => {
  server = s;
  browser = b;
});

const avatarNames = async (page: Page) => (await avatars(page))?.names ?? [];

/**
 * Waits (in the page, on its own clock) until its avatar bar shows `count` users and no caret of `gone` is drawn;
 * resolves with the time it took. Both count: avatars follow the user list at once, carets are redrawn in the next
 * animation frame after the user's presence state is removed.
 */
function timeUntilGone(page: Page, count: number, gone: string, timeoutMs: number): Promise<number> {
  // Plain JavaScript source: functions compiled by tsx carry `__name` helpers that do not exist in the page.
  return page.evaluate(`new Promise(function (resolve, reject) {
    var t0 = performance.now();
    (function check() {
      var shown = document.querySelectorAll('.wave-avatars .wave-avatar').length;
      var carets = Array.prototype.filter.call(document.querySelectorAll('.wave-cursor'), function (c) {
        var label = c.querySelector('.wave-caret-label'), caret = c.querySelector('.wave-caret');
        return label && label.textContent === ${JSON.stringify(gone)} && caret && !caret.classList.contains('wave-hidden');
      }).length;
      if (shown === ${count} && carets === 0) resolve(performance.now() - t0);
      else if (performance.now() - t0 > ${timeoutMs}) reject(new Error('still ' + shown + ' avatars and ' + carets + ' carets of ${gone} after ${timeoutMs} ms'));
      else setTimeout(check, 20);
    })();
  })`) as Promise<number>;
}

describe('presence lifecycle', () => {
  it('closing a tab and stop() remove the user from peers within 2 s, carets included', { timeout: TIMEOUT_MS }, async () => {
    await withScene(browser, server, 'presence-leave', async (scene) => {
      const doc = freshDocId('presence-leave');
      const ada = await scene.open('Ada', textarea, { doc, text: 'alpha bravo charlie' });
      const bob = await scene.open('Bob', textarea, { doc });
      const cy = await scene.open('Cy', textarea, { doc });
      await waitUntil(async () => (await avatarNames(ada.page)).length === 3, { message: 'three avatars', timeoutMs: 20_000 });
      await selectWord(bob.page, 'textarea', 'bravo');
      await selectWord(cy.page, 'textarea', 'charlie');
      await waitUntil(async () => (await drawn(ada.page, 'Bob')).caret && (await drawn(ada.page, 'Cy')).caret, { message: 'carets of Bob and Cy', timeoutMs: 20_000 });

      const closed = timeUntilGone(ada.page, 2, 'Bob', 10_000);
      await bob.page.close({ runBeforeUnload: false });
      const afterClose = await closed;
      assert.ok(afterClose <= LEAVE_MS, `a closed tab left peers in ${Math.round(afterClose)} ms (bar ${LEAVE_MS})`);
      assert.equal((await drawn(ada.page, 'Bob')).caret, null, "Bob's caret is gone with him");

      const stopped = timeUntilGone(ada.page, 1, 'Cy', 10_000);
      await cy.page.evaluate(() => window.coedit!.stop());
      const afterStop = await stopped;
      assert.ok(afterStop <= LEAVE_MS, `stop() left peers in ${Math.round(afterStop)} ms (bar ${LEAVE_MS})`);
      assert.equal((await drawn(ada.page, 'Cy')).caret, null, "Cy's caret is gone with her");
      assert.deepEqual(await avatarNames(ada.page), ['Ada (you)']);

      // users_update (API.md): { user, joinTime: Date, color, self } for every connected user, on every change.
      const log = await ada.page.evaluate(() =>
        window.waveLog!.users_update.map((users) =>
          users.map((u) => ({ keys: Object.keys(u).sort().join(','), name: u.user?.name, date: u.joinTime instanceof Date, color: typeof u.color, self: u.self })),
        ),
      );
      assert.deepEqual(log.map((users) => users.map((u) => u.name)), [['Ada'], ['Ada', 'Bob'], ['Ada', 'Bob', 'Cy'], ['Ada', 'Cy'], ['Ada']]);
      for (const users of log) {
        for (const u of users) assert.deepEqual(u, { keys: 'color,joinTime,self,user', name: u.name, date: true, color: 'string', self: u.name === 'Ada' });
      }
    });
  });

  it('presence traffic is throttled: ≤ ~20 updates a second while moving, none for the pointer when alone', { timeout: TIMEOUT_MS }, async () => {
    await withScene(browser, server, 'presence-traffic', async (scene) => {
      const doc = freshDocId('presence-traffic');
      const text = Array.from({ length: 12 }, (_, i) => `line ${i} with some words to select`).join('\n');
      const ada = await scene.open('Ada', textarea, { doc, text });
      let sent = 0;
      ada.page.on('websocket', (ws) => ws.on('framesent', () => sent++));
      // The socket is already open: reload so that the listener sees it from the start.
      await ada.page.reload();
      await ada.page.evaluate(() => window.waveStarted);
      const box = (await ada.page.locator('#editor').boundingBox())!;
      /** 100 mouse moves and 20 caret moves, as fast as the browser takes them (the bound scales with the time taken). */
      const wiggle = async () => {
        const t0 = Date.now();
        for (let i = 0; i < 100; i++) {
          await ada.page.mouse.move(box.x + 20 + (i % 50) * 6, box.y + 20 + (i % 7) * 20);
          if (i % 5 === 0) await ada.page.evaluate((k) => (document.getElementById('editor') as HTMLTextAreaElement).setSelectionRange(k, k), i);
        }
        return Date.now() - t0;
      };
      await ada.page.locator('#editor').focus();
      sent = 0;
      const aloneMs = await wiggle();
      const aloneSent = sent;
      assert.ok(aloneSent <= Math.ceil(aloneMs / 1000) + 2, `alone: ${aloneSent} frames in ${aloneMs} ms (caret ≤ 1/s, no pointer)`);

      await scene.open('Bob', textarea, { doc });
      await waitUntil(async () => (await avatarNames(ada.page)).length === 2, { message: 'Bob joined', timeoutMs: 20_000 });
      await ada.page.locator('#editor').focus();
      sent = 0;
      const busyMs = await wiggle();
      const busySent = sent;
      assert.ok(busySent <= (busyMs / 1000) * 20 + 3, `with a peer: ${busySent} frames in ${busyMs} ms (≤ 20/s)`);
      assert.ok(busySent >= 5, `with a peer, updates flow: ${busySent} frames`);
      await waitUntil(async () => (await drawn(scene.peers[1]!.page, 'Ada')).pointer, { message: "Ada's pointer for Bob", timeoutMs: 20_000 });
    });
  });

  it('[R5] a frozen tab disappears from peers within 30 s and comes back once, without a ghost', { timeout: TIMEOUT_MS }, async () => {
    await withScene(browser, server, 'presence-frozen', async (scene) => {
      const doc = freshDocId('presence-frozen');
      const ada = await scene.open('Ada', textarea, { doc, text: 'alpha bravo charlie' });
      const bob = await scene.open('Bob', textarea, { doc });
      await selectWord(bob.page, 'textarea', 'bravo');
      await waitUntil(async () => (await drawn(ada.page, 'Bob')).caret, { message: "Bob's caret for Ada", timeoutMs: 20_000 });

      // Frozen: no script runs in Bob's page (paused by the debugger at its next task), but the browser keeps its
      // socket open and answers the server's pings. (Page.setWebLifecycleState 'frozen' does not freeze a visible page.)
      const cdp = await bob.context.newCDPSession(bob.page);
      await cdp.send('Debugger.enable');
      const gone = timeUntilGone(ada.page, 1, 'Bob', SILENT_MS + 15_000);
      await cdp.send('Debugger.pause');
      const silentFor = await gone;
      assert.ok(silentFor <= SILENT_MS, `a frozen tab left peers after ${Math.round(silentFor)} ms (bar ${SILENT_MS})`);
      assert.equal((await drawn(ada.page, 'Bob')).caret, null, 'no ghost caret');

      await cdp.send('Debugger.resume');
      await cdp.send('Debugger.disable');
      await cdp.detach();
      await waitUntil(async () => (await avatarNames(ada.page)).length === 2, { message: 'Bob back after resuming', timeoutMs: 60_000 });
      assert.deepEqual(await avatarNames(ada.page), ['Ada (you)', 'Bob'], 'Bob once, no ghost of his frozen self');
      assert.deepEqual(await avatarNames(bob.page), ['Ada', 'Bob (you)']);
    });
  });
});
