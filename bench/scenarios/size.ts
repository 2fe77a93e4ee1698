/**
 * 6. Size: the served wave.client.js (every adapter, minified) and the Quill provider, gzipped; the same for the
 * y-websocket stack a Quill page needs (y-quill + quill-cursors + y-websocket + Yjs), bundled the same way.
 * Memory per idle loaded document: D documents with one client and ~100 characters each, unchanged for 35 s (Wave
 * holds an idle document in compact form after 30 s), RSS growth / D.
 */
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { REPO_ROOT, BENCH_DIR, startServer, type ServerKind } from '../lib/servers.ts';
import { rssBytes } from '../lib/proc.ts';
import { holdScript } from '../lib/spawn.ts';
import { summarize, type Summary } from '../lib/stats.ts';
import type { ClientKind } from '../lib/clients.ts';

export interface Sizes {
  minified: number;
  gzipped: number;
}

export interface SizeResult {
  waveClient: Sizes;
  /** wave-quill-provider as an app's bundler ships it, yjs/lib0/y-protocols external (peer deps). */
  quillProvider: Sizes;
  /** The same with Yjs, lib0 and y-protocols bundled (Quill external): everything but the editor. */
  quillProviderWithYjs: Sizes;
  /** y-quill + quill-cursors + y-websocket + Yjs (Quill external), minified the same way. */
  peerQuillStack: Sizes;
  /** Bytes of server RSS per idle loaded document, per stack. */
  idleRssPerDoc: Record<string, Summary>;
  /** Idle-memory runs that failed or lost clients (an overloaded machine). */
  idleErrors: string[];
}

function sizes(code: Uint8Array | string): Sizes {
  const buf = typeof code === 'string' ? Buffer.from(code) : Buffer.from(code);
  return { minified: buf.length, gzipped: gzipSync(buf, { level: 9 }).length };
}

async function bundle(source: string, external: string[], resolveDir: string): Promise<Sizes> {
  const r = await build({
    stdin: { contents: source, resolveDir, loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2020'],
    minify: true,
    write: false,
    external,
    legalComments: 'none',
    logLevel: 'silent',
  });
  return sizes(r.outputFiles[0]!.contents);
}

/** How long the documents stay unchanged before RSS is read. */
const IDLE_WAIT_MS = 35_000;

const IDLE_STACKS: Array<[ServerKind, ClientKind]> = [
  ['wave', 'wave'],
  ['y-websocket', 'y-websocket'],
  ['hocuspocus', 'hocuspocus'],
];

export async function size(opts: { idleDocs: number; runs: number; log: (s: string) => void }): Promise<SizeResult> {
  const waveClient = sizes(readFileSync(join(REPO_ROOT, 'packages', 'client', 'dist', 'cdn', 'wave.client.js')));
  const providerDir = join(REPO_ROOT, 'packages', 'quill-provider');
  const providerEntry = `export { default } from ${JSON.stringify(join(providerDir, 'dist', 'index.js'))};`;
  const quillProvider = await bundle(providerEntry, ['yjs', 'quill', 'quill/*', 'lib0', 'lib0/*', 'y-protocols', 'y-protocols/*'], providerDir);
  const quillProviderWithYjs = await bundle(providerEntry, ['quill', 'quill/*'], providerDir);
  const peerQuillStack = await bundle(
    `export * as Y from 'yjs'; export { QuillBinding } from 'y-quill'; export { WebsocketProvider } from 'y-websocket'; export { default as QuillCursors } from 'quill-cursors';`,
    ['quill', 'quill/*'],
    BENCH_DIR,
  );
  const idleRssPerDoc: Record<string, Summary> = {};
  const idleErrors: string[] = [];
  for (const [serverKind, clientKind] of IDLE_STACKS) {
    const runs: number[] = [];
    for (let run = 0; run < opts.runs; run++) {
      const server = await startServer(serverKind);
      try {
        await new Promise((r) => setTimeout(r, 300));
        const before = rssBytes(server.pid);
        const holder = await holdScript<{ docs: number; failed: number }>('lib/sync-probe.ts', [clientKind, server.url, `idle-${run}`, 'idle', server.apiKey ?? '-', String(opts.idleDocs)]);
        // Idle documents: no change for longer than Wave keeps a document's Y.Doc live without one (30 s,
        // DEFAULT_COMPACT_IDLE_AFTER_MS in packages/server/src/rooms/room-options.ts); every stack waits as long.
        await new Promise((r) => setTimeout(r, IDLE_WAIT_MS));
        if (holder.value.docs > 0) runs.push((rssBytes(server.pid) - before) / holder.value.docs);
        if (holder.value.failed > 0) idleErrors.push(`${clientKind} run ${run + 1}: ${holder.value.failed} of ${opts.idleDocs} clients did not connect`);
        await holder.stop();
      } catch (err) {
        idleErrors.push(`${clientKind} run ${run + 1}: ${(err as Error).message.split('\n')[0]}`);
      } finally {
        await server.stop();
      }
    }
    idleRssPerDoc[clientKind] = summarize(runs);
    opts.log(`  idle RSS ${clientKind}: ${(idleRssPerDoc[clientKind]!.median / 1024).toFixed(1)} KB/doc`);
  }
  return { waveClient, quillProvider, quillProviderWithYjs, peerQuillStack, idleRssPerDoc, idleErrors };
}
