/**
 * Plain HTTP routes: `/healthz` (store and Redis), `/metrics`, the CDN paths of API.md, and the demo pages under `/demo/`. Static files are
 * streamed (never read whole on the event loop) and confined to their folder.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { existsSync, readFileSync } from 'node:fs';
import type { Store } from './store/types.js';
import type { Fanout } from './fanout/types.js';
import type { Logger } from './log.js';
import type { Gauges, Metrics } from './metrics.js';
import { REST_PREFIX, handleRest } from './rest.js';
import { CHANGES_PATH, handleChanges } from './webhooks/changes.js';
import { WEBHOOKS_REST_PREFIX, handleWebhooksRest } from './webhooks/rest.js';
import type { RestOptions } from './rest.js';

export interface StaticPaths {
  /** Repository root; the other paths default to folders below it. */
  root: string;
  /** Demo pages, served at `/demo/`. */
  examples: string;
  /** Built CDN files of the client (`wave.client.js`, `wave.client.css`): `dist/cdn` of the `wave-client` package. */
  clientCdn: string;
  /** Built TinyMCE plugin folder (`plugin.min.js`): `dist` of the `wave-tinymce-plugin` package. */
  tinymcePlugin: string;
}

/** Repository root computed from this file's location (`packages/server/{src,dist}/http.*`). */
export function defaultRoot(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
}

export function resolvePaths(overrides: Partial<StaticPaths> = {}): StaticPaths {
  const root = overrides.root ?? defaultRoot();
  return {
    root,
    examples: overrides.examples ?? join(root, 'examples'),
    clientCdn: overrides.clientCdn ?? join(dependencyDir('wave-client', root, 'client'), 'dist', 'cdn'),
    tinymcePlugin: overrides.tinymcePlugin ?? join(dependencyDir('wave-tinymce-plugin', root, 'tinymce-plugin'), 'dist'),
  };
}

/**
 * Folder of one of this package's dependencies, resolved from this file as Node resolves imports: the installed
 * package next to an installed wave-server, the workspace link in the repository. `packages/<folder>` of the
 * repository when it cannot be resolved.
 */
function dependencyDir(packageName: string, root: string, folder: string): string {
  return findPackageDir(fileURLToPath(import.meta.url), packageName) ?? join(root, 'packages', folder);
}

/**
 * Editor libraries the demo pages load, served from the npm packages that `examples/package.json` depends on.
 * Add a row to serve another editor (codemirror, froala-editor, tinymce …).
 */
export const VENDOR_PACKAGES: ReadonlyArray<{ urlPrefix: string; packageName: string; subfolder: string }> = [
  { urlPrefix: '/demo/vendor/quill/', packageName: 'quill', subfolder: 'dist' },
  // CodeMirror 5 keeps its files at the package root: lib/codemirror.{js,css}, mode/…, addon/…
  { urlPrefix: '/demo/vendor/codemirror/', packageName: 'codemirror', subfolder: '' },
  // Froala: js/froala_editor.pkgd.min.js and css/…; TinyMCE: tinymce.min.js plus the skins, models, themes and
  // plugins it loads from its own folder.
  { urlPrefix: '/demo/vendor/froala-editor/', packageName: 'froala-editor', subfolder: '' },
  { urlPrefix: '/demo/vendor/tinymce/', packageName: 'tinymce', subfolder: '' },
];

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.wasm': 'application/wasm',
};

export interface HttpHandlerOptions {
  store: Store;
  /** Reported by `/healthz` when fan-out across servers is on. */
  fanout?: Fanout;
  metrics?: { registry: Metrics; gauges: () => Gauges };
  paths: StaticPaths;
  log: Logger;
  /** Origin used for `serverUrl` when a request has no `Host` header. */
  fallbackOrigin: () => string;
  /** REST under `/api/v2/docs/` (rest.ts). */
  docs?: Omit<RestOptions, 'store' | 'maxBodyBytes'> & { maxBodyBytes?: number };
}

export type HttpHandler = (req: IncomingMessage, res: ServerResponse) => void;

export function createHttpHandler(options: HttpHandlerOptions): HttpHandler {
  const { store, paths, log } = options;
  const vendorDirs = new Map<string, string>();

  const files: ReadonlyMap<string, { dir: string; file: string }> = new Map([
    ['/lib/2.x/api/wave.client.js', { dir: paths.clientCdn, file: 'wave.client.js' }],
    ['/lib/2.x/css/wave.client.css', { dir: paths.clientCdn, file: 'wave.client.css' }],
    ['/waveEditorD/2.x/plugin.min.js', { dir: paths.tinymcePlugin, file: 'plugin.min.js' }],
  ]);

  function vendorDir(packageName: string, subfolder: string): string | undefined {
    const cached = vendorDirs.get(packageName);
    if (cached !== undefined) return cached;
    const dir = findPackageDir(join(paths.examples, 'package.json'), packageName);
    if (dir === undefined) return undefined;
    const full = join(dir, subfolder);
    vendorDirs.set(packageName, full);
    return full;
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let pathname: string;
    try {
      pathname = new URL(req.url ?? '/', 'http://wave.invalid').pathname;
    } catch {
      return sendText(res, 400, 'bad request');
    }
    const method = req.method ?? 'GET';
    if (pathname === CHANGES_PATH && options.docs) {
      return handleChanges(req, res, new URL(req.url ?? '/', 'http://wave.invalid'), { store, maxBodyBytes: 0, ...options.docs });
    }
    if (pathname.startsWith(WEBHOOKS_REST_PREFIX) && options.docs) {
      return handleWebhooksRest(req, res, new URL(req.url ?? '/', 'http://wave.invalid'), { store, maxBodyBytes: 0, ...options.docs });
    }
    if (pathname.startsWith(REST_PREFIX) && options.docs) {
      return handleRest(req, res, new URL(req.url ?? '/', 'http://wave.invalid'), {
        store,
        maxBodyBytes: 16 * 1024 * 1024,
        ...options.docs,
      });
    }
    if (method !== 'GET' && method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return sendText(res, 405, 'method not allowed');
    }

    if (pathname === '/healthz') {
      // Both at once: a load balancer's check must not take the sum of two timeouts.
      const [storeOk, redisOk] = await Promise.all([
        check(() => store.ping(), 'store'),
        options.fanout ? check(() => options.fanout!.ping(), 'redis') : Promise.resolve(undefined),
      ]);
      const ok = storeOk && redisOk !== false;
      const body: Record<string, unknown> = { ok, store: storeOk ? 'ok' : 'error' };
      if (redisOk !== undefined) body['redis'] = redisOk ? 'ok' : 'error';
      return sendJson(res, ok ? 200 : 503, body);
    }
    if (pathname === '/metrics' && options.metrics) {
      const text = options.metrics.registry.render(options.metrics.gauges());
      res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : text);
      return;
    }
    const file = files.get(pathname);
    if (file) return serveFile(req, res, file.dir, file.file, false);

    if (pathname === '/demo') return redirect(res, '/demo/');
    if (pathname === '/demo/config.json') {
      const demo = (await store.listKeys()).find((k) => k.name === 'demo' && k.revokedAt === null);
      if (!demo) return sendText(res, 404, 'no API key named "demo"; create one with: wave-server keys create --name demo');
      const host = req.headers.host;
      const serverUrl = host && /^[^/?#@\s\\]+$/.test(host) ? `http://${host}` : options.fallbackOrigin();
      return sendJson(res, 200, { apiKey: demo.apiKey, serverUrl });
    }
    for (const vendor of VENDOR_PACKAGES) {
      if (pathname.startsWith(vendor.urlPrefix)) {
        const dir = vendorDir(vendor.packageName, vendor.subfolder);
        if (dir === undefined) return sendText(res, 404, `package ${vendor.packageName} is not installed`);
        return serveFile(req, res, dir, pathname.slice(vendor.urlPrefix.length), false);
      }
    }
    if (pathname.startsWith('/demo/')) {
      return serveFile(req, res, paths.examples, pathname.slice('/demo/'.length), true);
    }
    return sendText(res, 404, 'not found');
  }

  async function check(ping: () => Promise<void>, what: string): Promise<boolean> {
    try {
      await ping();
      return true;
    } catch (error) {
      log.error(`health check: ${what}`, error);
      return false;
    }
  }

  return (req, res) => {
    route(req, res).catch((error: unknown) => {
      log.error(`http ${req.method} ${req.url}`, error);
      if (!res.headersSent) sendText(res, 500, 'internal error');
      else res.destroy();
    });
  };
}

/**
 * Streams `dir/encodedPath` when it is a file inside `dir`. `encodedPath` is the URL-encoded rest of the path;
 * `..`, NUL, backslashes and (with `hideDotFiles`) dot files and node_modules are refused.
 */
async function serveFile(
  req: IncomingMessage,
  res: ServerResponse,
  dir: string,
  encodedPath: string,
  hideDotFiles: boolean,
): Promise<void> {
  let rel: string;
  try {
    rel = decodeURIComponent(encodedPath);
  } catch {
    return sendText(res, 400, 'bad request');
  }
  const segments = rel.split('/');
  if (
    rel.includes('\0') ||
    rel.includes('\\') ||
    segments.some((s) => s === '..' || (hideDotFiles && (s.startsWith('.') || s === 'node_modules')))
  ) {
    return sendText(res, 404, 'not found');
  }
  const base = resolve(dir);
  let target = resolve(base, ...segments.filter((s) => s !== ''));
  if (target !== base && !target.startsWith(base + sep)) return sendText(res, 404, 'not found');

  let info = await stat(target).catch(() => undefined);
  if (info?.isDirectory()) {
    if (!rel.endsWith('/') && rel !== '') {
      return redirect(res, `${new URL(req.url ?? '/', 'http://wave.invalid').pathname}/`);
    }
    target = join(target, 'index.html');
    info = await stat(target).catch(() => undefined);
  }
  if (!info?.isFile()) return sendText(res, 404, 'not found');

  res.writeHead(200, {
    'Content-Type': CONTENT_TYPES[extname(target).toLowerCase()] ?? 'application/octet-stream',
    'Content-Length': info.size,
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-cache',
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const stream = createReadStream(target);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}

/** Folder of `packageName` as resolved from `fromPackageJson` (Node resolution), or undefined when not installed. */
function findPackageDir(fromPackageJson: string, packageName: string): string | undefined {
  const require = createRequire(fromPackageJson);
  try {
    return dirname(require.resolve(`${packageName}/package.json`));
  } catch {
    // The package's "exports" may hide package.json: resolve its entry and walk up to its package.json.
  }
  let entry: string;
  try {
    entry = require.resolve(packageName);
  } catch {
    return undefined;
  }
  let dir = dirname(entry);
  for (let i = 0; i < 10; i++) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === packageName) return dir;
      } catch {
        // not a readable manifest; keep walking
      }
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return undefined;
}

function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(text);
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-store',
  });
  res.end(body);
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(301, { Location: location, 'Content-Length': 0 });
  res.end();
}
