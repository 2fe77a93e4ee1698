// A `read` token makes the editor read-only in the browser, emits `access_changed`, and what the
// reader types goes nowhere; the writer's edits still reach it. All five editor kinds.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { SignJWT } from 'jose';
import { withScene } from '../lib/browser.ts';
import { codemirror, quill, textarea, type EditorDriver } from '../lib/drivers.ts';
import { froala, tinymce } from '../lib/richtext-drivers.ts';
import { REPO_ROOT, type WaveServer } from '../lib/server.ts';
import { serverAndBrowser } from '../lib/suite.ts';
import { freshDocId, waitUntil } from '../lib/util.ts';
import '../lib/page-globals.ts';

const CLI = join(REPO_ROOT, 'packages', 'server', 'dist', 'cli.js');
let server: WaveServer;
let browser: Browser;
let key: { apiKey: string; secret: string };

serverAndBrowser(async (s, b) => {
  server = s;
  browser = b;
  // A key that requires tokens, on the server's own store (its master key file sits next to it).
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [CLI, 'keys', 'create', '--name', 'readonly-e2e', '--origin', 'self', '--require-token', '--json', '--store', `sqlite:${join(server.dataDir, 'wave.db')}`],
    { cwd: REPO_ROOT },
  );
  key = JSON.parse(stdout) as { apiKey: string; secret: string };
});

function token(docId: string, permission: 'edit' | 'read', user: string): Promise<string> {
  return new SignJWT({ docId, permission, user })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(key.secret));
}

const READ_ONLY_CHECKS: Record<string, string> = {
  textarea: `document.getElementById('editor').readOnly === true`,
  quill: `window.quill.root.getAttribute('contenteditable') === 'false'`,
  codemirror: `document.querySelector('.CodeMirror').CodeMirror.getOption('readOnly') === true`,
  froala: `window.froala.edit.isDisabled() === true`,
  tinymce: `window.tiny.mode.get() === 'readonly'`,
};

describe('read-only permission', () => {
  for (const driver of [textarea, quill, codemirror, froala, tinymce] as EditorDriver[]) {
    it(`${driver.name}: a read token makes the editor read-only; typing changes nothing; the writer's edits arrive`, { timeout: 90_000 }, async () => {
      await withScene(browser, server, `readonly-${driver.name}`, async (scene) => {
        const doc = freshDocId(`readonly-${driver.name}`);
        const writerToken = await token(doc, 'edit', 'Writer');
        const readerToken = await token(doc, 'read', 'Reader');
        const writer = await scene.open('writer', driver, { doc, text: 'shared', config: (c) => ({ ...c, apiKey: key.apiKey, token: writerToken }) });
        const reader = await scene.open('reader', driver, { doc, config: (c) => ({ ...c, apiKey: key.apiKey, token: readerToken }) });
        await waitUntil(async () => (await driver.text(reader.page)) === 'shared', { timeoutMs: 15_000, message: () => 'reader synced' });
        assert.equal(await reader.page.evaluate(READ_ONLY_CHECKS[driver.name]!), true, 'editor is read-only');
        const access = await reader.page.evaluate(() => (window.waveLog as unknown as Record<string, Array<{ permission: string }>>)['access_changed']);
        assert.deepEqual(access, [{ permission: 'read' }]);
        assert.deepEqual(
          await writer.page.evaluate(() => (window.waveLog as unknown as Record<string, unknown[]>)['access_changed']),
          [],
          'an editor with an edit token gets no access_changed',
        );

        await driver.focusEnd(reader.page);
        await driver.type(reader.page, ' hacked');
        await driver.focusEnd(writer.page);
        await driver.type(writer.page, ' more');
        await waitUntil(async () => (await driver.text(reader.page)) === 'shared more', {
          timeoutMs: 15_000,
          message: async () => `reader shows the writer's edit only; now ${JSON.stringify(await driver.text(reader.page))}`,
        });
        assert.equal(await driver.text(writer.page), 'shared more', "the reader's keys went nowhere");

        // stop() gives the editor back to the host as the session found it: editable.
        await reader.page.evaluate(() => window.coedit!.stop());
        assert.equal(await reader.page.evaluate(READ_ONLY_CHECKS[driver.name]!), false, 'editable again after stop()');
      });
    });
  }
});
