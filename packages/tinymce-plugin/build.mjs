// Builds dist/plugin.min.js, the TinyMCE external plugin served at /waveEditorD/2.x/plugin.min.js.
// Two bundles in one file: the plugin itself, and the TinyMCE-only Wave client it carries (src/client.ts, with
// Yjs) wrapped in a function that runs only when the page has no `window.Coedit` — so a page that also loads
// wave.client.js keeps one copy of Yjs (Yjs warns when it is evaluated twice).
import { build } from 'esbuild';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { lib0BrowserEnvironment, lib0PlainLogging } from '../client/build-plugins.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, 'dist');
await mkdir(out, { recursive: true });

const common = { bundle: true, platform: 'browser', target: ['es2022'], minify: true, legalComments: 'none', logLevel: 'warning', write: false, plugins: [lib0PlainLogging, lib0BrowserEnvironment] };
const client = await build({ ...common, entryPoints: [join(here, 'src', 'client.ts')], format: 'iife', globalName: '__waveClient' });
const plugin = await build({ ...common, entryPoints: [join(here, 'src', 'plugin.ts')], format: 'iife' });

const code =
  '(function(){' +
  `var __waveCarriedClient=function(){${client.outputFiles[0].text};return __waveClient};` +
  plugin.outputFiles[0].text +
  '})();\n';
await writeFile(join(out, 'plugin.min.js'), code);
console.log(`tinymce-plugin: dist/plugin.min.js ${(code.length / 1024).toFixed(1)} KiB, ${(gzipSync(code).length / 1024).toFixed(1)} KiB gzipped`);
