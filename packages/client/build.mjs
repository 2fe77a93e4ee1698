// Builds the browser bundles with esbuild (the typed ESM build and .d.ts come from `tsc -b`).
//   dist/cdn/wave.client.js   IIFE, global `Coedit`, served at /lib/2.x/api/wave.client.js
//   dist/cdn/wave.client.css  served at /lib/2.x/css/wave.client.css
// The bundle is ES2022 (native class fields): the browsers of 2021 on, which the editors it binds (Quill 2,
// TinyMCE 8, Froala 4) require anyway.
import { build } from 'esbuild';
import { copyFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lib0BrowserEnvironment, lib0PlainLogging } from './build-plugins.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, 'dist', 'cdn');
await mkdir(out, { recursive: true });

await build({
  entryPoints: [join(here, 'src', 'cdn.ts')],
  outfile: join(out, 'wave.client.js'),
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: ['es2022'],
  minify: true,
  sourcemap: 'linked',
  legalComments: 'none',
  logLevel: 'warning',
  plugins: [lib0PlainLogging, lib0BrowserEnvironment],
});
await copyFile(join(here, 'src', 'wave.client.css'), join(out, 'wave.client.css'));
