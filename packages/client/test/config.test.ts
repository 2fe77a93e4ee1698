import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeConfig } from '../src/core/config.js';
import { CoeditError } from '../src/core/errors.js';
import { Coedit, CoeditBase } from '../src/index.js';
import { createTextareaAdapter } from '../src/adapters/textarea.js';

const base = { app: 'text', docId: 'd1', apiKey: 'wk_1', user: { name: 'Ada' }, editor: {} };

function detailOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof CoeditError, `expected CoeditError, got ${String(err)}`);
    assert.equal(err.code, 'invalid_config');
    assert.equal(err.message, 'invalid_config');
    return err.detail;
  }
  assert.fail('expected invalid_config');
}

test('a valid config is normalised with defaults', () => {
  const c = normalizeConfig(base);
  assert.equal(c.app, 'text');
  assert.equal(c.autoStart, true);
  assert.deepEqual(c.avatars, { left: false, vertical: false });
  assert.equal(c.showPointer, false);
  assert.equal(c.pointers.shape, 'arrow');
});

test('every config mistake names the key and what was expected', () => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ ...base, docId: undefined }, /^docId: expected a string of 1–256 characters/],
    [{ ...base, docId: '' }, /^docId: expected a string of 1–256 characters, got ""/],
    [{ ...base, docId: 'x'.repeat(257) }, /^docId: /],
    [{ ...base, docId: 'a\u0000b' }, /^docId: expected a string without control characters/],
    [{ ...base, apiKey: 5 }, /^apiKey: expected the apiKey string, got number 5/],
    [{ ...base, app: 'word' }, /^app: expected one of 'editorA', .*'text'.*, got "word"/],
    [{ ...base, app: undefined }, /^app: expected one of/],
    [{ ...base, user: 'Ada' }, /^user: expected an object like \{ name/],
    [{ ...base, user: undefined }, /^user: expected an object/],
    [{ ...base, user: { name: 5 } }, /^user\.name: expected a string of at most 100 characters/],
    [{ ...base, autoStart: 'yes' }, /^autoStart: expected a boolean, got "yes"/],
    [{ ...base, avatars: { left: 1 } }, /^avatars\.left: expected a boolean/],
    [{ ...base, pointers: { shape: 'star' } }, /^pointers\.shape: expected one of 'arrow', 'hand', 'pointer', 'pointerSolid'/],
    [{ ...base, hooks: { contentChanged: 'save()' } }, /^hooks\.contentChanged: expected a function/],
    [{ ...base, serverUrl: 'ftp://x' }, /^serverUrl: expected an http\(s\) URL/],
    [{ ...base, editor: undefined }, /^editor: expected the editor instance/],
    [{ ...base, token: 3 }, /^token: expected a non-empty string or a function/],
  ];
  for (const [config, pattern] of cases) assert.match(detailOf(() => normalizeConfig(config)), pattern);
  assert.match(detailOf(() => normalizeConfig(null)), /^config: expected an object/);
});

test('app aliases resolve to editor kinds', () => {
  const kinds = ['froala', 'codemirror', 'quill', 'quilljs', 'tinymce', 'editorA', 'editorB', 'editorC'].map(
    (app) => normalizeConfig({ ...base, app }).app,
  );
  assert.deepEqual(kinds, ['editorA', 'editorB', 'editorC', 'editorC', 'tinymce', 'editorA', 'editorB', 'editorC']);
});

test('username is mapped to user.name with one deprecation warning', (t) => {
  const warn = t.mock.method(console, 'warn', () => {});
  const { user: _u, ...rest } = base;
  assert.equal(normalizeConfig({ ...rest, username: 'Old' }).user.name, 'Old');
  normalizeConfig({ ...rest, username: 'Again' });
  assert.equal(warn.mock.calls.filter((c) => String(c.arguments[0]).includes('username is deprecated')).length, 1);
});

test('init rejects an editor that does not fit the app, emits error, sends nothing', async () => {
  const coedit = new Coedit();
  const errors: unknown[] = [];
  coedit.on('error', (e) => errors.push(e));
  await assert.rejects(coedit.init({ ...base, editor: { value: 'not a textarea' } }), (err: CoeditError) => {
    assert.equal(err.code, 'invalid_config');
    assert.match(err.detail, /^editor: expected a <textarea> element for app 'text'/);
    return true;
  });
  assert.equal(errors.length, 1);
  assert.deepEqual(Object.keys(errors[0] as object).sort(), ['code', 'detail', 'fatal', 'message']);
  assert.equal(coedit.getState(), 'idle');

  await assert.rejects(new Coedit().init({ ...base, app: 'editorC', editor: { root: null } }), /invalid_config/);
  const textOnly = new CoeditBase({ text: createTextareaAdapter });
  await assert.rejects(textOnly.start({ ...base, app: 'quill' }), (err: CoeditError) => /^app: expected an editor kind included in this build \(text\), got "editorC"/.test(err.detail));
});
