import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { REPO_ROOT } from './helpers/server-process.js';
import { startInProcess } from './helpers/in-process.js';
import type { InProcessServer } from './helpers/in-process.js';

/** A raw request: the path is sent as written (fetch would normalise `..`). */
function get(url: string, path: string, method = 'GET', headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>((resolve, reject) => {
    const req = request(`${url}${path}`, { method, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    // Keep the path exactly as given.
    req.path = path;
    req.end();
  });
}

describe('HTTP routes', () => {
  let server: InProcessServer;
  let files: string;

  before(async () => {
    files = await mkdtemp(join(tmpdir(), 'wave-http-'));
    await mkdir(join(files, 'examples', 'sub'), { recursive: true });
    await mkdir(join(files, 'examples', '.private'), { recursive: true });
    await mkdir(join(files, 'cdn'), { recursive: true });
    await writeFile(join(files, 'examples', 'index.html'), '<!doctype html><title>demo</title>');
    await writeFile(join(files, 'examples', 'style.css'), 'body{}');
    await writeFile(join(files, 'examples', 'sub', 'index.html'), 'sub page');
    await writeFile(join(files, 'examples', '.private', 'x.txt'), 'hidden');
    await writeFile(join(files, 'examples', 'package.json'), '{"name":"x","private":true}');
    await writeFile(join(files, 'secret.txt'), 'outside the served folders');
    await writeFile(join(files, 'cdn', 'wave.client.js'), 'window.Coedit = 1;');
    await writeFile(join(files, 'cdn', 'wave.client.css'), '.wave-x{}');
    server = await startInProcess({
      paths: { root: files, examples: join(files, 'examples'), clientCdn: join(files, 'cdn'), tinymcePlugin: join(files, 'none') },
    });
  });
  after(async () => {
    await server.cleanup();
    await rm(files, { recursive: true, force: true });
  });

  it('GET /healthz answers 200 with the store ok', async () => {
    const res = await get(server.url, '/healthz');
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body), { ok: true, store: 'ok' });
  });

  it('serves the CDN files with their content types and nosniff', async () => {
    const js = await get(server.url, '/lib/2.x/api/wave.client.js');
    assert.equal(js.status, 200);
    assert.equal(js.body, 'window.Coedit = 1;');
    assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(js.headers['x-content-type-options'], 'nosniff');
    const css = await get(server.url, '/lib/2.x/css/wave.client.css');
    assert.equal(css.headers['content-type'], 'text/css; charset=utf-8');
    const head = await get(server.url, '/lib/2.x/api/wave.client.js', 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.body, '');
    assert.equal(head.headers['content-length'], String('window.Coedit = 1;'.length));
    assert.equal((await get(server.url, '/waveEditorD/2.x/plugin.min.js')).status, 404, 'not built yet');
  });

  it('serves the demo folder, index.html for folders', async () => {
    const index = await get(server.url, '/demo/');
    assert.equal(index.status, 200);
    assert.match(index.body, /<title>demo<\/title>/);
    assert.equal(index.headers['content-type'], 'text/html; charset=utf-8');
    const redirect = await get(server.url, '/demo');
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers['location'], '/demo/');
    assert.equal((await get(server.url, '/demo/sub')).headers['location'], '/demo/sub/');
    assert.equal((await get(server.url, '/demo/sub/')).body, 'sub page');
    assert.equal((await get(server.url, '/demo/style.css')).headers['content-type'], 'text/css; charset=utf-8');
  });

  it('refuses path traversal, NUL, dot files and unknown paths', async () => {
    for (const path of [
      '/demo/../secret.txt',
      '/demo/%2e%2e/secret.txt',
      '/demo/..%2fsecret.txt',
      '/demo/sub/..%2f..%2fsecret.txt',
      '/demo/%2e%2e%5csecret.txt',
      '/demo/index.html%00.css',
      '/demo/.private/x.txt',
      '/demo/%2eprivate/x.txt',
      '/demo/missing.html',
      '/lib/2.x/api/../../../secret.txt',
      '/secret.txt',
      '/',
    ]) {
      const res = await get(server.url, path);
      assert.ok(res.status === 404 || res.status === 400, `${path}: ${res.status}`);
      assert.doesNotMatch(res.body, /outside the served folders|hidden/, path);
    }
    assert.equal((await get(server.url, '/demo/%E0%A4%A')).status, 400, 'malformed percent-encoding');
  });

  it('answers 405 to other methods', async () => {
    const res = await get(server.url, '/demo/', 'POST');
    assert.equal(res.status, 405);
    assert.equal(res.headers['allow'], 'GET, HEAD');
  });

  it('GET /demo/config.json gives the active demo key and the origin it was reached at', async () => {
    assert.equal((await get(server.url, '/demo/config.json')).status, 404, 'no demo key yet');
    const demo = await server.sqlite.createKey({ name: 'demo', origins: ['self'] });
    const res = await get(server.url, '/demo/config.json');
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body), { apiKey: demo.record.apiKey, serverUrl: server.url });
    await server.sqlite.revokeKey(demo.record.apiKey);
    assert.equal((await get(server.url, '/demo/config.json')).status, 404, 'revoked');
  });
});

describe('HTTP vendor files and health failure', () => {
  it('serves editor packages under /demo/vendor/ from the examples dependencies', async () => {
    const server = await startInProcess({ paths: { root: REPO_ROOT } });
    try {
      const res = await get(server.url, '/demo/vendor/quill/quill.js', 'HEAD');
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], 'text/javascript; charset=utf-8');
      assert.equal((await get(server.url, '/demo/vendor/quill/../package.json')).status, 404);
    } finally {
      await server.cleanup();
    }
  });

  it('GET /healthz answers 503 when the store fails', async () => {
    const server = await startInProcess({}, (sqlite) =>
      new Proxy(sqlite, {
        get(target, prop) {
          if (prop === 'ping') return () => Promise.reject(new Error('disk gone'));
          const value: unknown = Reflect.get(target, prop, target);
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      }),
    );
    try {
      const res = await get(server.url, '/healthz');
      assert.equal(res.status, 503);
      assert.deepEqual(JSON.parse(res.body), { ok: false, store: 'error' });
    } finally {
      await server.cleanup();
    }
  });
});
