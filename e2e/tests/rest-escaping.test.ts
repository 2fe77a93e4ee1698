// RELIABILITY.md S18 end to end: a Froala and a TinyMCE user type markup and an ampersand; the REST API serves the
// document escaped (`format=html`, and `html` in `format=json`), and `format=text` keeps every line.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { withScene } from '../lib/browser.ts';
import { RICH_TEXT_DRIVERS } from '../lib/richtext-drivers.ts';
import { REPO_ROOT, type WaveServer } from '../lib/server.ts';
import { serverAndBrowser } from '../lib/suite.ts';
import { freshDocId, waitUntil } from '../lib/util.ts';
import '../lib/page-globals.ts';

const CLI = join(REPO_ROOT, 'packages', 'server', 'dist', 'cli.js');
/** What the users type, one line each. */
const LINES = ['<img src=x onerror=alert(1)>', 'a & b'];
/** As wave-richtext renders it: every text escaped ([RT-X1]). */
const ESCAPED_HTML = '<p>&lt;img src=x onerror=alert(1)&gt;</p><p>a &amp; b</p>';

let server: WaveServer;
let browser: Browser;
let key: { apiKey: string; secret: string };

serverAndBrowser(async (s, b) => {
  server = s;
  browser = b;
  // A key of our own, on the server's store, so that the test knows its secret (REST is authorised by it).
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [CLI, 'keys', 'create', '--name', 'rest-escaping-e2e', '--origin', 'self', '--json', '--store', `sqlite:${join(server.dataDir, 'wave.db')}`],
    { cwd: REPO_ROOT },
  );
  key = JSON.parse(stdout) as { apiKey: string; secret: string };
});

async function rest(docId: string, format: 'text' | 'html' | 'json'): Promise<string> {
  const res = await fetch(`${server.url}/api/v2/docs/${encodeURIComponent(docId)}?apiKey=${key.apiKey}&format=${format}`, {
    headers: { Authorization: `Bearer ${key.secret}` },
  });
  const body = await res.text();
  assert.equal(res.status, 200, `format=${format}: ${body}`);
  return body;
}

describe('REST output of typed rich text', () => {
  for (const driver of RICH_TEXT_DRIVERS) {
    it(`${driver.name}: typed <img …> and "a & b" come out escaped as HTML and whole as text`, { timeout: 90_000 }, async () => {
      await withScene(browser, server, `rest-escaping-${driver.name}`, async (scene) => {
        const doc = freshDocId(`rest-escaping-${driver.name}`);
        const user = await scene.open('Ann', driver, { doc, text: '', config: (c) => ({ ...c, apiKey: key.apiKey }) });
        await driver.focusEnd(user.page);
        await driver.type(user.page, LINES.join('\n'));
        const expectedText = `${LINES.join('\n')}\n`;
        // Stored once the server acked it; the text view is the first to show the whole document.
        await waitUntil(async () => (await rest(doc, 'text')) === expectedText, {
          timeoutMs: 15_000,
          message: async () => `REST text of what ${driver.name} typed; now ${JSON.stringify(await rest(doc, 'text'))}`,
        });
        const html = await rest(doc, 'html');
        assert.equal(html, ESCAPED_HTML);
        const json = JSON.parse(await rest(doc, 'json')) as { html: string; text: string };
        assert.equal(json.html, ESCAPED_HTML);
        assert.equal(json.text, expectedText);
      });
    });
  }
});
