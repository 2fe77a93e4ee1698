// esbuild plugins shared by the browser bundles that carry the client (this package's build.mjs and the TinyMCE
// plugin's).

/**
 * Yjs prints three console messages through lib0/logging.js (`print` and `warn`, with colour markers). That module
 * brings lib0/dom.js (whose module-level schema values keep lib0/schema.js and lib0/prng.js in a bundle), lib0's
 * virtual consoles and its colour formatting: about 0.5 KiB gzipped that only formats those messages. This plugin
 * gives Yjs a `lib0/logging` that writes the same messages to the console without the markers (Symbols, as
 * lib0/logging.common.js makes them). It exports every name of lib0/logging.js that Yjs reads.
 */
export const lib0PlainLogging = {
  name: 'lib0-plain-logging',
  setup(build) {
    build.onResolve({ filter: /^lib0\/logging$/ }, () => ({ path: 'lib0/logging', namespace: 'wave-plain-logging' }));
    build.onLoad({ filter: /.*/, namespace: 'wave-plain-logging' }, () => ({
      loader: 'js',
      contents: `
export const BOLD = Symbol(), UNBOLD = Symbol(), BLUE = Symbol(), GREY = Symbol(), GREEN = Symbol(), RED = Symbol(), PURPLE = Symbol(), ORANGE = Symbol(), UNCOLOR = Symbol();
const plain = (args) => args.filter((arg) => typeof arg !== 'symbol');
export const print = (...args) => console.log(...plain(args));
export const warn = (...args) => console.warn(...plain(args));
`,
    }));
  },
};

/**
 * lib0/environment.js decides at load whether it runs in Node or a browser, and reads its switches from the page:
 * on import it parses `location.search` and reads `localStorage` (`production`, `no-color`, `COLORTERM`, `TERM`),
 * and Yjs asks it for `node_env` (its development mode deep-freezes every `ContentAny`). A bundle for the page
 * should not change with the page's URL or storage, and needs none of that code (about 0.6 KiB gzipped with
 * lib0/storage and lib0/conditions). This plugin gives the bundle a lib0/environment with a browser's answers and
 * no switches set. It exports every name of lib0/environment.js (esbuild does not warn about a missing one inside
 * node_modules; test/build-plugins.test.ts compares the two lists).
 */
export const lib0BrowserEnvironment = {
  name: 'lib0-browser-environment',
  setup(build) {
    const stub = { path: 'lib0/environment', namespace: 'wave-browser-environment' };
    build.onResolve({ filter: /^lib0\/environment$/ }, () => stub);
    // lib0's own modules import it relatively (lib0/buffer.js reads `isBrowser`).
    build.onResolve({ filter: /^\.\/environment\.js$/ }, (args) => (/[\\/]lib0[\\/][^\\/]+\.js$/.test(args.importer) ? stub : undefined));
    build.onLoad({ filter: /.*/, namespace: 'wave-browser-environment' }, () => ({
      loader: 'js',
      contents: `
export const isNode = false, isBrowser = true;
export const isMac = typeof navigator !== 'undefined' ? /Mac/.test(navigator.platform) : false;
export const hasParam = () => false;
export const getParam = (name, defaultVal) => defaultVal;
export const getVariable = () => null;
export const getConf = () => null;
export const ensureConf = (name) => {
  throw new Error(\`Expected configuration "\${name.toUpperCase().replaceAll('-', '_')}"\`);
};
export const hasConf = () => false;
export const production = false;
export const supportsColor = true;
`,
    }));
  },
};
