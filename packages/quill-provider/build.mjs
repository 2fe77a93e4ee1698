// Builds wave-quill-provider (run after `tsc -b packages/client`, whose ESM output it bundles):
//   dist/index.js    ESM for bundlers and browsers with an import map, with source map
//   dist/index.d.ts  one self-contained declaration file (dts-bundle-generator)
//
// What is bundled and what is not, and why:
//   - external: `yjs` and `quill` (peer dependencies: the app has them, and Yjs must exist exactly once on a page),
//     `lib0` and `y-protocols` (dependencies that apps using Yjs already have, shared with yjs instead of copied).
//   - bundled: Wave's own client code (only `CoeditBase`, the session core and the Quill adapter: the import graph
//     of src/index.ts, tree-shaken), the wire protocol and valibot (tree-shaken to the validators used).
// Prints the size of the minified + gzipped bundle, the number an app pays for the provider on top of Yjs and Quill.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, 'dist');
await mkdir(out, { recursive: true });

export const EXTERNAL = ['yjs', 'quill', 'quill/*', 'lib0', 'lib0/*', 'y-protocols', 'y-protocols/*'];

const common = {
  entryPoints: [join(here, 'src', 'index.ts')],
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  mainFields: ['module', 'main'],
  target: ['es2020'],
  external: EXTERNAL,
  legalComments: 'none',
  logLevel: 'warning',
};

const result = await build({ ...common, outfile: join(out, 'index.js'), sourcemap: 'linked', metafile: true });
await writeFile(join(out, 'meta.json'), JSON.stringify(result.metafile));

// The size an app ships: what its bundler would produce from dist/index.js, minified, then gzipped.
const minified = await build({ ...common, minify: true, write: false });
const bytes = minified.outputFiles[0].contents;
const gzipped = gzipSync(bytes, { level: 9 }).length;
await writeFile(join(out, 'size.json'), `${JSON.stringify({ minified: bytes.length, gzipped }, null, 2)}\n`);
console.log(`wave-quill-provider: dist/index.js ${(bytes.length / 1024).toFixed(1)} KiB minified, ${(gzipped / 1024).toFixed(1)} KiB minified+gzipped (yjs, quill, lib0, y-protocols external)`);

// One declaration file with Wave's own types inlined (wave-client is not a runtime dependency of this package).
execFileSync(
  process.execPath,
  [
    join(dirname(fileURLToPath(import.meta.resolve('dts-bundle-generator/package.json'))), 'dist', 'bin', 'dts-bundle-generator.js'),
    '--silent',
    '--project', join(here, 'tsconfig.json'),
    '--external-inlines', 'wave-client', 'wave-protocol',
    '--export-referenced-types', 'false',
    '--out-file', join(out, 'index.d.ts'),
    join(here, 'src', 'index.ts'),
  ],
  { stdio: 'inherit' },
);
