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
