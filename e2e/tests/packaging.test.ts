// The path a user takes with the published packages: `npm pack` every package, install the tarballs into an empty
// folder outside the repository (their dependencies come from the npm registry), start the installed `wave-server`
// bin there, create an API key with it, and co-edit in Chromium from
//   (a) a page that loads wave.client.js from the installed server (/lib/2.x/api/wave.client.js), and
//   (b) a page whose script imports `wave-quill-provider` and Quill, bundled with esbuild from the installed packages;
// and check that the installed server serves the installed TinyMCE plugin.
// Nothing is resolved from the repository: the app folder is in the OS temp dir, and the bundle is built from there.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../lib/browser.ts';
import { REPO_ROOT, startServer, type WaveServer } from '../lib/server.ts';
import { freshDocId } from '../lib/util.ts';

const run = promisify(execFile);

/** The workspaces published to npm, by folder. */
const PACKAGES = ['protocol', 'richtext', 'client', 'server', 'quill-provider', 'tinymce-plugin'];
/** Bounds a hung page only: a page loads and syncs in well under a second here. */
const SYNC_TIMEOUT_MS = 20_000;

const CDN_PAGE = (wave: string) => `<!doctype html>
<meta charset="utf-8"><link rel="icon" href="data:,">
<link rel="stylesheet" href="${wave}/lib/2.x/css/wave.client.css">
<script src="${wave}/lib/2.x/api/wave.client.js"></script>
<textarea id="editor" rows="5" cols="60"></textarea>
<script>
  const params = new URLSearchParams(location.search);
  const coedit = new Coedit();
  coedit.start({
    app: 'text', docId: params.get('doc'), apiKey: params.get('key'), user: { name: params.get('user') },
    editor: document.getElementById('editor'), offline: false,
  }).then(() => { window.waveStarted = true; }, (err) => { window.waveError = err.code + ': ' + err.detail; });
  window.editorText = () => document.getElementById('editor').value;
</script>
`;

/** The app's own module, as a user writes it; bundled by esbuild from the app folder. */
const QUILL_APP = `import Quill from 'quill';
import Coedit from 'wave-quill-provider';

const params = new URLSearchParams(location.search);
const quill = new Quill('#editor');
new Coedit().start({
  docId: params.get('doc'), apiKey: params.get('key'), user: { name: params.get('user') },
  serverUrl: params.get('server'), editor: quill, offline: false,
}).then(() => { window.waveStarted = true; }, (err) => { window.waveError = err.code + ': ' + err.detail; });
window.editorText = () => quill.getText();
`;

const QUILL_PAGE = (wave: string) => `<!doctype html>
<meta charset="utf-8"><link rel="icon" href="data:,">
<link rel="stylesheet" href="${wave}/lib/2.x/css/wave.client.css">
<div id="editor"></div>
<script type="module" src="/app.js"></script>
`;

describe('the packed packages, installed outside the repository', () => {
  let work: string;
  let app: string;
  let server: WaveServer | undefined;
  let pages: Server | undefined;
  let pagesUrl: string;
  let apiKey: string;
  let browser: Browser | undefined;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'wave-packaging-'));
    const tarballs = join(work, 'tarballs');
    app = join(work, 'app');
    mkdirSync(tarballs);
    mkdirSync(app);

    // `npm test` builds first; npm pack takes each package's `files` from its built dist.
    await run('npm', ['pack', '--silent', '--pack-destination', tarballs, ...PACKAGES.flatMap((p) => ['-w', `packages/${p}`])], { cwd: REPO_ROOT });
    const packed = readdirSync(tarballs).filter((f) => f.endsWith('.tgz'));
    assert.equal(packed.length, PACKAGES.length, `one tarball per package: ${packed.join(', ')}`);

    writeFileSync(
      join(app, 'package.json'),
      `${JSON.stringify({ name: 'wave-packaging-app', private: true, type: 'module', allowScripts: { 'better-sqlite3': true } }, null, 2)}\n`,
    );
    // Dependencies (and peer dependencies: yjs, quill) come from the registry, from npm's cache when it has them.
    // better-sqlite3's install (prebuild-install) looks for a prebuilt binary before compiling; none can be
    // downloaded here, so the repository's own build of the same version is offered as a local prebuild, under the
    // name prebuild-install looks for. Another version finds none and compiles, on every core (JOBS).
    const prebuilds = join(work, 'prebuilds');
    mkdirSync(prebuilds);
    const sqlite = join(REPO_ROOT, 'node_modules', 'better-sqlite3');
    const sqliteVersion = (JSON.parse(readFileSync(join(sqlite, 'package.json'), 'utf8')) as { version: string }).version;
    await run('tar', ['czf', join(prebuilds, `better-sqlite3-v${sqliteVersion}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`), 'build/Release/better_sqlite3.node'], { cwd: sqlite });
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...packed.map((f) => join(tarballs, f))], {
      cwd: app,
      env: { ...process.env, JOBS: 'max', npm_config_better_sqlite3_local_prebuilds: prebuilds },
      maxBuffer: 16 * 1024 * 1024,
    });

    server = await startServer({ cli: join(app, 'node_modules', '.bin', 'wave-server'), cwd: app, dataDir: join(work, 'data') });
    const created = await run(process.execPath, [
      join(app, 'node_modules', '.bin', 'wave-server'), 'keys', 'create', '--name', 'packaging', '--json',
      '--store', `sqlite:${join(work, 'data', 'wave.db')}`,
    ], { cwd: app });
    apiKey = (JSON.parse(created.stdout) as { apiKey: string }).apiKey;
    assert.match(apiKey, /^wk_/);

    // The app's script, bundled from the app folder as the app's own build would: packages resolve from its node_modules.
    mkdirSync(join(app, 'src'));
    writeFileSync(join(app, 'src', 'app.js'), QUILL_APP);
    const bundle = await build({
      absWorkingDir: app,
      entryPoints: [join(app, 'src', 'app.js')],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      write: false,
      logLevel: 'silent',
    });
    const appJs = bundle.outputFiles[0]!.text;

    // The app's pages, from their own origin (a key created without --origin accepts any page origin).
    const cdnPage = CDN_PAGE(server.url);
    const quillPage = QUILL_PAGE(server.url);
    pages = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://pages.invalid').pathname;
      const body = path === '/cdn.html' ? cdnPage : path === '/quill.html' ? quillPage : path === '/app.js' ? appJs : undefined;
      if (body === undefined) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'Content-Type': path.endsWith('.js') ? 'text/javascript' : 'text/html; charset=utf-8' }).end(body);
    });
    await new Promise<void>((resolve) => pages!.listen(0, '127.0.0.1', resolve));
    pagesUrl = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;

    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (pages ? pages.close(() => resolve()) : resolve()));
    await server?.stop();
    if (work && !process.env.WAVE_E2E_KEEP) rmSync(work, { recursive: true, force: true });
  });

  /** Two users open `page` in their own browser contexts, each types a word, and each sees both words. */
  async function coEdit(page: string, editorSelector: string): Promise<void> {
    const doc = freshDocId('packaging');
    const errors: string[] = [];
    const open = async (user: string): Promise<Page> => {
      const context = await browser!.newContext();
      const tab = await context.newPage();
      tab.on('console', (m) => { if (m.type() === 'error') errors.push(`${user}: ${m.text()}`); });
      tab.on('pageerror', (e) => errors.push(`${user}: ${e.message}`));
      const query = new URLSearchParams({ doc, key: apiKey, user, server: server!.url });
      await tab.goto(`${pagesUrl}/${page}?${query}`);
      await tab.waitForFunction(() => {
        const w = window as unknown as { waveStarted?: boolean; waveError?: string };
        if (w.waveError) throw new Error(w.waveError);
        return w.waveStarted === true;
      }, undefined, { timeout: SYNC_TIMEOUT_MS });
      return tab;
    };
    const ada = await open('Ada');
    const grace = await open('Grace');
    try {
      await ada.click(editorSelector);
      await ada.keyboard.type('written-by-ada ');
      await grace.click(editorSelector);
      await grace.keyboard.type('written-by-grace ');
      for (const tab of [ada, grace]) {
        await tab.waitForFunction(
          () => {
            const text = (window as unknown as { editorText(): string }).editorText();
            return text.includes('written-by-ada') && text.includes('written-by-grace');
          },
          undefined,
          { timeout: SYNC_TIMEOUT_MS },
        ).catch(async (error: unknown) => {
          const text = await tab.evaluate(() => (window as unknown as { editorText(): string }).editorText());
          throw new Error(`${(error as Error).message}\neditor text: ${JSON.stringify(text)}\nserver:\n${server!.tail()}`);
        });
      }
      assert.deepEqual(errors, [], 'no console or page errors');
    } finally {
      await ada.context().close();
      await grace.context().close();
    }
  }

  it('serves wave.client.js from the installed server, and two textarea pages co-edit with it', async () => {
    await coEdit('cdn.html', '#editor');
  });

  it('bundles wave-quill-provider with esbuild, and two Quill pages co-edit with it', async () => {
    await coEdit('quill.html', '#editor .ql-editor');
  });

  it('serves the TinyMCE plugin of the installed wave-tinymce-plugin package', async () => {
    const served = await fetch(`${server!.url}/waveEditorD/2.x/plugin.min.js`);
    assert.equal(served.status, 200);
    const installed = readFileSync(join(app, 'node_modules', 'wave-tinymce-plugin', 'dist', 'plugin.min.js'), 'utf8');
    assert.ok(installed.length > 0);
    assert.equal(await served.text(), installed);
  });
});
