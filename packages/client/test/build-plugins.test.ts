// The browser bundles' esbuild plugins (build-plugins.mjs). Logging: Yjs' console messages still reach the console,
// every name of lib0/logging that Yjs reads is there (esbuild does not warn about a missing one inside node_modules),
// and the client bundle builds with it without lib0's own logging. Environment: the bundle answers as a browser
// without reading the page's URL or storage, exports every name of lib0/environment, and leaves lib0's out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';
import { build, type Plugin } from 'esbuild';
// @ts-expect-error build-plugins.mjs is plain JavaScript for the build scripts, without declarations
import { lib0BrowserEnvironment, lib0PlainLogging } from '../build-plugins.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const plugin = lib0PlainLogging as Plugin;
const environment = lib0BrowserEnvironment as Plugin;

test("Yjs' print and warn go to the console without lib0's colour markers", async () => {
  const result = await build({
    stdin: { contents: "import * as logging from 'lib0/logging'; logging.print(logging.ORANGE, logging.BOLD, '[yjs] ', logging.UNBOLD, logging.RED, 'changed'); logging.warn('Invalid access');", resolveDir: here },
    bundle: true,
    format: 'iife',
    write: false,
    plugins: [plugin],
    logLevel: 'silent',
  });
  const calls: Array<[string, unknown[]]> = [];
  const console = { log: (...args: unknown[]) => calls.push(['log', args]), warn: (...args: unknown[]) => calls.push(['warn', args]) };
  runInNewContext(result.outputFiles[0]!.text, { console, Symbol });
  assert.deepEqual(calls, [
    ['log', ['[yjs] ', 'changed']],
    ['warn', ['Invalid access']],
  ]);
});

test('the client bundle builds with both without warnings, and without lib0/logging.js or lib0/environment.js', async () => {
  const result = await build({
    entryPoints: [join(here, '..', 'src', 'cdn.ts')],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: ['es2022'],
    minify: true,
    write: false,
    metafile: true,
    plugins: [plugin, environment],
    logLevel: 'silent',
  });
  assert.deepEqual(result.warnings.map((w) => w.text), []);
  const inputs = Object.keys(result.metafile.inputs);
  assert.ok(inputs.some((path) => path.includes('yjs')), 'Yjs is in the bundle');
  assert.deepEqual(inputs.filter((path) => /lib0[\\/](logging|dom|environment|storage)\.js$/.test(path)), []);
});

test('it exports every name of lib0/logging that Yjs reads', async () => {
  const result = await build({ stdin: { contents: "export * from 'lib0/logging';", resolveDir: here }, bundle: true, format: 'esm', write: false, metafile: true, plugins: [plugin], logLevel: 'silent', outdir: 'out' });
  const exported = new Set(Object.values(result.metafile.outputs)[0]!.exports);
  const yjs = readFileSync(fileURLToPath(import.meta.resolve('yjs')), 'utf8');
  assert.match(yjs, /import \* as logging from 'lib0\/logging'/);
  const read = new Set([...yjs.matchAll(/\blogging\.(\w+)/g)].map((m) => m[1]!));
  assert.ok(read.has('print') && read.has('warn'), `Yjs reads ${[...read].join(', ')}`);
  assert.deepEqual([...read].filter((name) => !exported.has(name)), []);
});

test("lib0/environment answers as a browser with no switches set, without reading the page's URL or storage", async () => {
  const result = await build({
    stdin: {
      contents:
        "import * as env from 'lib0/environment'; import * as buffer from 'lib0/buffer'; " +
        "globalThis.answers = [env.isNode, env.isBrowser, env.production, env.getVariable('node_env'), env.hasConf('production'), env.getParam('--x', 'd'), buffer.toBase64(new Uint8Array([104, 105]))];",
      resolveDir: here,
    },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    write: false,
    plugins: [environment],
    logLevel: 'silent',
  });
  // A page whose URL and storage would switch lib0's development and production modes on.
  const touched: string[] = [];
  const watched = (name: string, value: object): object =>
    new Proxy(value, {
      get(target, key, receiver) {
        touched.push(`${name}.${String(key)}`);
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
  const context: Record<string, unknown> = {
    window: {},
    document: {},
    navigator: { platform: 'Linux x86_64' },
    location: watched('location', { search: '?production&nodeEnv=development' }),
    localStorage: watched('localStorage', { getItem: (key: string) => (key === 'node_env' ? 'development' : 'x') }),
    btoa,
    Uint8Array,
  };
  runInNewContext(result.outputFiles[0]!.text, context);
  assert.deepEqual([...(context['answers'] as unknown[])], [false, true, false, null, false, 'd', 'aGk=']);
  assert.deepEqual(touched, []);
});

test('it exports every name of lib0/environment', async () => {
  const exportsOf = async (plugins: Plugin[]): Promise<string[]> => {
    const result = await build({ stdin: { contents: "export * from 'lib0/environment';", resolveDir: here }, bundle: true, format: 'esm', write: false, metafile: true, plugins, logLevel: 'silent', outdir: 'out' });
    return [...Object.values(result.metafile.outputs)[0]!.exports].sort();
  };
  const real = await exportsOf([]);
  assert.ok(real.includes('getVariable') && real.includes('isBrowser'), `lib0/environment exports ${real.join(', ')}`);
  assert.deepEqual(await exportsOf([environment]), real);
});
