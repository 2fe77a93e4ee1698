/**
 * Config validation (API.md "Config"). Every mistake becomes `CoeditError('invalid_config')` whose detail names
 * the key and what was expected, e.g. `docId: expected a string of 1–256 characters, got ""`.
 * Schemas use valibot; the editor instance itself is checked by its adapter.
 */
import * as v from 'valibot';
import type { UserInput } from 'wave-protocol';
import { CoeditError, invalidConfig } from './errors.js';

/** Editor kinds and their accepted `app` spellings (Codox Wave names first). */
export const APP_ALIASES: Readonly<Record<string, EditorKind>> = {
  editorA: 'editorA',
  froala: 'editorA',
  editorB: 'editorB',
  codemirror: 'editorB',
  editorC: 'editorC',
  quill: 'editorC',
  quilljs: 'editorC',
  text: 'text',
  tinymce: 'tinymce',
};

export type EditorKind = 'editorA' | 'editorB' | 'editorC' | 'text' | 'tinymce';

export interface Hooks {
  contentChanged?: (data: { source: 'local' | 'remote' }) => void;
  usersUpdate?: (users: unknown[]) => void;
  fetchDocOnNetworkReconnect?: () => Promise<{ content: unknown; timestamp: number }>;
}

/** The config after validation and alias resolution. */
export interface NormalizedConfig {
  app: EditorKind;
  docId: string;
  apiKey: string;
  user: UserInput;
  editor: unknown;
  autoStart: boolean;
  avatars: { left: boolean; vertical: boolean };
  showUI: boolean;
  showCursor: boolean;
  cursorAlwaysOn: boolean;
  showPointer: boolean;
  pointers: { shape: 'arrow' | 'hand' | 'pointer' | 'pointerSolid' };
  hooks: Hooks;
  token: string | (() => Promise<string>) | undefined;
  serverUrl: string | undefined;
  /** Ask the browser's "leave site?" confirmation while local edits are not yet stored (default true). */
  confirmLeave: boolean;
  /** Keep the document in IndexedDB so that edits made offline survive a closed tab (default true). */
  offline: boolean;
}

const bool = (what = 'a boolean') => v.optional(v.boolean(what));
const str = (max: number) => v.pipe(v.string(`a string of at most ${max} characters`), v.maxLength(max, `a string of at most ${max} characters`));
const fn = v.custom<(...args: unknown[]) => unknown>((x) => typeof x === 'function', 'a function');

const UserSchema = v.object(
  {
    name: v.optional(str(100)),
    email: v.optional(str(254)),
    avatar: v.optional(str(2048)),
    id: v.optional(v.union([str(256), v.number()], 'a string or a number')),
    color: v.optional(str(64)),
  },
  'an object like { name, email?, avatar?, id?, color? }',
);

const DisplaySchema = v.object(
  {
    left: bool(),
    vertical: bool(),
  },
  'an object like { left?: boolean, vertical?: boolean }',
);

const ConfigSchema = v.object(
  {
    docId: v.pipe(
      v.string('a string of 1–256 characters'),
      v.minLength(1, 'a string of 1–256 characters'),
      v.maxLength(256, 'a string of 1–256 characters'),
      // eslint-disable-next-line no-control-regex
      v.regex(/^[^\u0000-\u001f\u007f]*$/, 'a string without control characters'),
    ),
    apiKey: v.pipe(v.string('the apiKey string'), v.minLength(1, 'the apiKey string'), v.maxLength(256, 'the apiKey string')),
    user: v.optional(UserSchema),
    username: v.optional(str(100)),
    autoStart: bool(),
    avatars: v.optional(DisplaySchema),
    avatar: v.optional(DisplaySchema),
    showUI: bool(),
    showCursor: bool(),
    cursorAlwaysOn: bool(),
    showPointer: bool(),
    confirmLeave: bool(),
    offline: bool(),
    pointers: v.optional(
      v.object(
        { shape: v.optional(v.picklist(['arrow', 'hand', 'pointer', 'pointerSolid'], "one of 'arrow', 'hand', 'pointer', 'pointerSolid'")) },
        'an object like { shape }',
      ),
    ),
    hooks: v.optional(
      v.object(
        {
          contentChanged: v.optional(fn),
          usersUpdate: v.optional(fn),
          fetchDocOnNetworkReconnect: v.optional(fn),
        },
        'an object of hook functions',
      ),
    ),
    token: v.optional(v.union([v.pipe(v.string(), v.minLength(1)), fn], 'a non-empty string or a function returning a Promise of one')),
    serverUrl: v.optional(
      v.pipe(v.string('an http(s) URL'), v.regex(/^https?:\/\/[^\s/?#]+(?:\/[^\s?#]*)?$/i, "an http(s) URL like 'https://wave.example.com'")),
    ),
  },
  'a config object',
);

const KNOWN_KEYS = new Set([...Object.keys(ConfigSchema.entries), 'app', 'editor']);

let warnedUsername = false;

/**
 * Validates `input` (a Codox-style config object). `defaults.app` is set by hosts that fix the editor kind
 * (the TinyMCE plugin, the Quill provider). Throws `CoeditError('invalid_config')`.
 */
export function normalizeConfig(input: unknown, defaults: { app?: EditorKind } = {}): NormalizedConfig {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw invalidConfig('config', 'an object', input);
  }
  const raw = input as Record<string, unknown>;
  const app = resolveApp(raw['app'], defaults.app);
  const result = v.safeParse(ConfigSchema, raw);
  if (!result.success) throw fromIssue(result.issues[0]);
  const c = result.output;

  for (const key of Object.keys(raw)) {
    if (!KNOWN_KEYS.has(key)) console.warn(`[wave] config: unknown key "${key}" is ignored`);
  }

  let user: UserInput | undefined = c.user;
  if (c.username !== undefined) {
    if (!warnedUsername) {
      warnedUsername = true;
      console.warn('[wave] config.username is deprecated: use user: { name } instead');
    }
    user = { ...user, name: user?.name ?? c.username };
  }
  if (user === undefined) throw invalidConfig('user', 'an object like { name, email?, avatar?, id?, color? }');
  if (raw['editor'] === undefined || raw['editor'] === null) {
    throw invalidConfig('editor', 'the editor instance (see the integration guide for this app)', raw['editor']);
  }

  const display = c.avatars ?? c.avatar ?? {};
  return {
    app,
    docId: c.docId,
    apiKey: c.apiKey,
    user,
    editor: raw['editor'],
    autoStart: c.autoStart ?? true,
    avatars: { left: display.left ?? false, vertical: display.vertical ?? false },
    showUI: c.showUI ?? true,
    showCursor: c.showCursor ?? true,
    cursorAlwaysOn: c.cursorAlwaysOn ?? false,
    showPointer: c.showPointer ?? false,
    pointers: { shape: c.pointers?.shape ?? 'arrow' },
    hooks: (c.hooks ?? {}) as Hooks,
    token: c.token as NormalizedConfig['token'],
    serverUrl: c.serverUrl?.replace(/\/+$/, ''),
    confirmLeave: c.confirmLeave ?? true,
    offline: c.offline ?? true,
  };
}

function resolveApp(value: unknown, fixed: EditorKind | undefined): EditorKind {
  if (value === undefined && fixed) return fixed;
  const expected = `one of ${Object.keys(APP_ALIASES).map((a) => `'${a}'`).join(', ')}`;
  if (typeof value !== 'string' || !Object.hasOwn(APP_ALIASES, value)) throw invalidConfig('app', expected, value);
  return APP_ALIASES[value] as EditorKind;
}

function fromIssue(issue: v.BaseIssue<unknown> | undefined): CoeditError {
  if (!issue) return new CoeditError('invalid_config', 'config: invalid', true);
  const path = issue.path?.map((p) => String(p.key)).join('.') ?? 'config';
  // A missing required key arrives as an issue whose input is undefined.
  return invalidConfig(path, issue.message, issue.input);
}
