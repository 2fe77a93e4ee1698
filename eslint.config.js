// `npm run lint`: typescript-eslint's recommended rules (syntax only, no type information, so it runs in seconds),
// no unused code, no import cycles, no focused/skipped tests or TODO markers, and the package boundaries of
// DESIGN.md ("Layout"):
//   - packages/protocol/src imports nothing but yjs, y-protocols and lib0 (and its own files);
//   - packages/richtext/src imports nothing but yjs (and its own files);
//   - the client's core/ (the DOM-free session) imports nothing from the rest of the client (adapters, presence,
//     persistence), nothing from the server and no editor or DOM binding. Its tsconfig has no DOM lib, so DOM
//     globals are already type errors there;
//   - the client's presence/ imports nothing from adapters/: it declares what it needs from an editor
//     (presence/types.ts, `PresenceHost`) and the adapters satisfy that interface.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

const EDITOR_AND_DOM_PACKAGES = [
  'quill', 'quill/*', 'quill-cursors', 'codemirror', 'codemirror/*', 'froala-editor', 'froala-editor/*',
  'tinymce', 'tinymce/*', 'y-quill', 'y-codemirror', 'y-indexeddb',
];

export default tseslint.config(
  {
    ignores: ['**/dist/**', '**/node_modules/**', 'bench/**', 'examples/**', 'e2e/artifacts/**', '**/*.d.ts'],
  },
  {
    files: ['packages/**/*.{ts,mjs,js}', 'e2e/**/*.{ts,mjs,js}', 'eslint.config.js'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    plugins: { 'import-x': importX },
    languageOptions: { ecmaVersion: 2022, sourceType: 'module' },
    settings: {
      // Follow imports into TypeScript files (the sources import `./x.js`, which resolves to `./x.ts`).
      'import-x/extensions': ['.ts', '.js', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [
        createTypeScriptImportResolver({
          project: ['packages/*/tsconfig.json', 'packages/client/src/core/tsconfig.json', 'e2e/tsconfig.json'],
          noWarnOnMultipleProjects: true,
        }),
      ],
    },
    rules: {
      'import-x/no-cycle': 'error',
      // Every test runs, every time: no focused, skipped or to-do tests; a skip is an option that gives its reason.
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name=/^(it|test|describe|suite)$/][property.name=/^(only|skip|todo)$/]",
          message: 'No .only/.skip/.todo: every test runs (pass { skip: reason } only for a missing service or an opt-in run).',
        },
      ],
      'no-warning-comments': ['error', { terms: ['todo', 'fixme'], location: 'start' }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { args: 'after-used', argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // Pages' globals read inside page.evaluate() callbacks have no types.
    files: ['e2e/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The rich-text HTML binding and its unit tests are being replaced by the flat-text binding (packages/richtext);
    // they are held to the cycle and boundary rules only.
    files: ['packages/client/src/adapters/html/**/*.ts', 'packages/client/test/html-*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-unused-vars': 'off' },
  },
  {
    files: ['packages/protocol/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!\\./|yjs$|y-protocols(/|$)|lib0(/|$))',
              message: 'wave-protocol imports only yjs, y-protocols and lib0 (DESIGN.md, Layout).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['packages/richtext/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!\\./|yjs$|fast-diff$)',
              message: 'wave-richtext imports only yjs (DESIGN.md, Layout) and fast-diff (a DOM-free diff): the client and the server both build on it.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['packages/client/src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^\\.\\./', message: 'core/ is the DOM-free session: it imports nothing from the rest of the client (adapters, presence, persistence).' },
            { group: ['wave-server', 'wave-server/*', 'wave-client', 'wave-client/*'], message: 'core/ imports nothing from the server or the client\'s public entry.' },
            { group: EDITOR_AND_DOM_PACKAGES, message: 'core/ is editor-agnostic: editor bindings belong in adapters/.' },
          ],
        },
      ],
    },
  },
  {
    files: ['packages/client/src/presence/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./adapters(/|$)',
              message: 'presence/ owns its interface (presence/types.ts): adapters implement it; presence imports nothing from adapters/.',
            },
          ],
        },
      ],
    },
  },
);
