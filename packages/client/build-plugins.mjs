// esbuild plugins shared by the browser bundles that carry the client (this package's build.mjs and the TinyMCE
// plugin's).
import { readFile } from 'node:fs/promises';

/**
 * lib0's dom.js builds four schema values at module level (`export const $element = $.$custom(…)`). esbuild cannot
 * tell that those calls have no side effects, so it keeps them even though nothing reads them, and with them the
 * whole of lib0/schema.js (and lib0/prng.js, which it imports): about 2.3 KiB gzipped that Yjs never runs. Yjs
 * reaches dom.js through lib0/logging.js, which uses only its style helpers. Marking the calls `@__PURE__` lets
 * esbuild drop them when unused; a bundle that reads them keeps them as they are.
 */
export const lib0PureDomSchemas = {
  name: 'lib0-pure-dom-schemas',
  setup(build) {
    build.onLoad({ filter: /[\\/]lib0[\\/]dom\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      let count = 0;
      const contents = source.replace(/^(export const \$\w+ = )(\$\.\$custom\()/gm, (_, decl, call) => {
        count++;
        return `${decl}/* @__PURE__ */ ${call}`;
      });
      const warnings = count ? [] : [{ text: 'lib0/dom.js has no `export const $x = $.$custom(` left to mark pure: lib0/schema.js stays in the bundle' }];
      return { contents, loader: 'js', warnings };
    });
  },
};
