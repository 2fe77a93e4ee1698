/** Serves the y-websocket peer page: pages/peer.html, its esbuild bundle, and editor files from bench/node_modules. */
import { build } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { extname, join, normalize } from 'node:path';
import { BENCH_DIR } from './servers.ts';

const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };

/** y-codemirror imports `codemirror` and y-quill's peer is Quill: both come from the page (window.*), as on Wave's demos. */
const pageGlobals = {
  name: 'page-globals',
  setup(b: { onResolve: Function; onLoad: Function }) {
    b.onResolve({ filter: /^(codemirror|quill)$/ }, (a: { path: string }) => ({ path: a.path, namespace: 'page-global' }));
    b.onLoad({ filter: /.*/, namespace: 'page-global' }, (a: { path: string }) => ({
      contents: a.path === 'codemirror' ? 'export default window.CodeMirror;' : 'export default window.Quill;',
      loader: 'js',
    }));
  },
};

export async function startPeerPages(): Promise<{ url: string; close(): Promise<void> }> {
  const bundle = await build({
    entryPoints: [join(BENCH_DIR, 'pages', 'peer.js')],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: ['es2020'],
    minify: true,
    write: false,
    plugins: [pageGlobals as never],
    logLevel: 'warning',
  });
  const js = bundle.outputFiles[0]!.contents;
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const send = (body: Uint8Array | string, type: string): void => {
      res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (path === '/peer.bundle.js') return send(js, TYPES['.js']!);
    if (path === '/peer.html') return void readFile(join(BENCH_DIR, 'pages', 'peer.html')).then((b) => send(b, TYPES['.html']!));
    if (path.startsWith('/vendor/')) {
      const file = normalize(join(BENCH_DIR, 'node_modules', path.slice('/vendor/'.length)));
      if (!file.startsWith(join(BENCH_DIR, 'node_modules'))) return void res.writeHead(403).end();
      return void readFile(file).then(
        (b) => send(b, TYPES[extname(file)] ?? 'application/octet-stream'),
        () => res.writeHead(404).end(),
      );
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) };
}
