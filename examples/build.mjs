// Builds what the demo pages load besides the CDN files: `dist/quill-provider.js`, the Quill provider package as an
// app's bundler would include it (`import Coedit from 'wave-quill-provider'`, with Yjs), served at
// /demo/dist/quill-provider.js. Quill itself comes from /demo/vendor/quill/ like on the other Quill page.
// Run after packages/quill-provider/build.mjs.
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

await build({
  entryPoints: [join(here, 'quill-provider.entry.js')],
  outfile: join(here, 'dist', 'quill-provider.js'),
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2020'],
  minify: true,
  sourcemap: 'linked',
  legalComments: 'none',
  logLevel: 'warning',
});
