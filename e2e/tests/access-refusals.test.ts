// RELIABILITY.md S17 and S11 in Chromium. S17: a reader's page script changes its editor (as a user could from the
// console); the change is reverted at once and the reader keeps showing exactly the shared document, in every
// editor kind. S11: a page whose origin is not in the key's allow-list gets one fatal `validation_error` naming its
// origin and the fix, start() rejects, and no second WebSocket is opened.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { SignJWT } from 'jose';
import { startResult, withScene } from '../lib/browser.ts';
import { codemirror, quill, textarea, type EditorDriver } from '../lib/drivers.ts';
import { froala, tinymce } from '../lib/richtext-drivers.ts';
import { REPO_ROOT, type WaveServer } from '../lib/server.ts';
import { serverAndBrowser } from '../lib/suite.ts';
import { freshDocId, waitUntil } from '../lib/util.ts';
import '../lib/page-globals.ts';

const CLI = join(REPO_ROOT, 'packages', 'server', 'dist', 'cli.js');
let server: WaveServer;
let browser: Browser;

serverAndBrowser(async (s, b) => {
  server = s;
  browser = b;
});

/** Creates a key with the real CLI on the server's own store (its master key file sits next to it). */
async function createKey(name: string, extra: string[]): Promise<{ apiKey: string; secret: string }> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [CLI, 'keys', 'create', '--name', name, ...extra, '--json', '--store', `sqlite:${join(server.dataDir, 'wave.db')}`],
    { cwd: REPO_ROOT },
  );
  return JSON.parse(stdout) as { apiKey: string; secret: string };
}

function token(secret: string, docId: string, permission: 'edit' | 'read', user: string): Promise<string> {
  return new SignJWT({ docId, permission, user })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(secret));
}

/**
 * What a script on the reader's page does to its editor behind the read-only UI: through the editor's API or DOM,
 * the way each adapter learns of edits (input event, CodeMirror/Quill API, the rich-text root's DOM).
 */
const SCRIPTED_EDITS: Record<string, string> = {
  textarea: `(() => { const el = document.getElementById('editor'); el.value = el.value + ' hacked'; el.dispatchEvent(new Event('input', { bubbles: true })); })()`,
  codemirror: `(() => { const cm = document.querySelector('.CodeMirror').CodeMirror; cm.replaceRange(' hacked', cm.posFromIndex(cm.getValue().length)); })()`,
  quill: `window.quill.insertText(window.quill.getLength() - 1, ' hacked', 'api')`,
  froala: `window.froala.el.querySelector('p').append(' hacked')`,
  tinymce: `window.tiny.getBody().querySelector('p').append(' hacked')`,
};

/** The editor's own read-only mode (as in readonly.test.ts); a rebind must not lift it. */
const READ_ONLY_CHECKS: Record<string, string> = {
  textarea: `document.getElementById('editor').readOnly === true`,
  quill: `window.quill.root.getAttribute('contenteditable') === 'false'`,
  codemirror: `document.querySelector('.CodeMirror').CodeMirror.getOption('readOnly') === true`,
  froala: `window.froala.edit.isDisabled() === true`,
  tinymce: `window.tiny.mode.get() === 'readonly'`,
};

describe('refused access in the browser', () => {
  for (const driver of [textarea, codemirror, quill, froala, tinymce] as EditorDriver[]) {
    it(`${driver.name}: a reader's scripted edit is reverted at once; the reader shows the shared document (S17)`, { timeout: 90_000 }, async () => {
      const key = await createKey(`s17-${driver.name}`, ['--origin', 'self', '--require-token']);
      await withScene(browser, server, `s17-${driver.name}`, async (scene) => {
        const doc = freshDocId(`s17-${driver.name}`);
        const writerToken = await token(key.secret, doc, 'edit', 'Writer');
        const readerToken = await token(key.secret, doc, 'read', 'Reader');
        const writer = await scene.open('writer', driver, { doc, text: 'shared', config: (c) => ({ ...c, apiKey: key.apiKey, token: writerToken }) });
        const reader = await scene.open('reader', driver, { doc, config: (c) => ({ ...c, apiKey: key.apiKey, token: readerToken }) });
        await waitUntil(async () => (await driver.text(reader.page)) === 'shared', { timeoutMs: 15_000, message: () => 'reader synced' });

        await reader.page.evaluate(SCRIPTED_EDITS[driver.name]!);
        await waitUntil(async () => (await driver.text(reader.page)) === 'shared', {
          timeoutMs: 5_000,
          message: async () => `the reader's editor went back to the shared document; now ${JSON.stringify(await driver.text(reader.page))}`,
        });

        assert.equal(await reader.page.evaluate(READ_ONLY_CHECKS[driver.name]!), true, 'the editor is still in its read-only mode');

        await driver.focusEnd(writer.page);
        await driver.type(writer.page, ' more');
        await waitUntil(async () => (await driver.text(reader.page)) === 'shared more', {
          timeoutMs: 15_000,
          message: async () => `reader shows the writer's document; now ${JSON.stringify(await driver.text(reader.page))}`,
        });
        assert.equal(await driver.text(writer.page), 'shared more', 'nothing of the reader reached the writer');
        const readerErrors = await reader.page.evaluate(() => window.waveLog!.error.map((e) => e.code));
        assert.deepEqual(readerErrors, [], 'the reader sent nothing to be refused');
      });
    });
  }

  it('textarea: a page from an origin outside the key allow-list gets a fatal validation_error naming it, no retry (S11)', { timeout: 60_000 }, async () => {
    const key = await createKey('s11-foreign', ['--origin', 'https://app.example']);
    await withScene(browser, server, 's11-foreign', async (scene) => {
      const peer = await scene.open('Page', textarea, {
        doc: freshDocId('s11'),
        text: 'local text',
        config: (c) => ({ ...c, apiKey: key.apiKey }),
        noWait: true,
        // Counts the WebSockets the page opens (a retry loop would open more).
        initScript: `window.__sockets = 0; const Native = window.WebSocket; window.WebSocket = class extends Native { constructor(...args) { super(...args); window.__sockets++; } };`,
      });
      // S11's bar: the page knows within 5 s.
      const result = await startResult(peer.page, 5_000);
      assert.equal(result.ok, false, 'start() rejects');
      assert.ok(!result.ok);
      assert.equal(result.error.code, 'validation_error', JSON.stringify(result));
      const origin = new URL(server.url).origin;
      assert.ok(String(result.error.detail).includes(`"${origin}" is not allowed for this apiKey`), String(result.error.detail));
      assert.match(String(result.error.detail), /wave-server keys create .*--origin/);
      const events = await peer.page.evaluate(() => window.waveLog!.error.map((e) => [e.code, e.fatal]));
      assert.deepEqual(events, [['validation_error', true]], 'one fatal error event, no connection_lost');
      assert.equal(await peer.page.evaluate(() => window.coedit!.getState()), 'stopped');
      assert.equal(await peer.page.evaluate(() => (window as unknown as { __sockets: number }).__sockets), 1, 'no retry: one WebSocket');
      assert.equal(await textarea.text(peer.page), 'local text', 'the editor keeps its content');
    });
  });
});
