// The built package as an app imports it (`dist/index.js`, run `npm run build` first): the default export is the
// Coedit constructor, it refuses an editor that is not Quill with invalid_config naming `editor`, and its bundle
// carries the Quill adapter only.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const dist = (file: string) => fileURLToPath(new URL(`../dist/${file}`, import.meta.url));
const config = { docId: 'provider-doc', apiKey: 'wk_test', user: { name: 'Ada' }, serverUrl: 'http://127.0.0.1:1' };

test('the default export is the Coedit constructor', async () => {
  const mod = await import('wave-quill-provider');
  const Coedit = mod.default;
  assert.equal(typeof Coedit, 'function');
  assert.equal(mod.Coedit, Coedit, 'also exported by name');
  const coedit = new Coedit();
  for (const method of ['init', 'start', 'stop', 'on', 'off', 'getUsers', 'getState']) {
    assert.equal(typeof (coedit as unknown as Record<string, unknown>)[method], 'function', `coedit.${method}()`);
  }
  assert.equal(coedit.getState(), 'idle');
});

test('init rejects an editor that is not a Quill instance with invalid_config naming editor', async () => {
  const { default: Coedit, CoeditError } = await import('wave-quill-provider');
  const coedit = new Coedit();
  const errors: unknown[] = [];
  coedit.on('error', (e) => errors.push(e));
  for (const editor of [{}, { getContents() {} }, 'not an editor']) {
    const attempt = new Coedit();
    await assert.rejects(attempt.init({ ...config, editor }), (err: unknown) => {
      assert.ok(err instanceof CoeditError, `a CoeditError, got ${String(err)}`);
      assert.equal(err.code, 'invalid_config');
      assert.match(err.detail, /^editor: expected a Quill 2 instance/);
      return true;
    });
  }
  await assert.rejects(coedit.init({ ...config, editor: {} }), { code: 'invalid_config' });
  assert.equal(errors.length, 1, 'the error event fired too');
  assert.equal(coedit.getState(), 'idle', 'nothing was started');
});

test('app defaults to Quill, and no other editor kind is in the package', async () => {
  const { default: Coedit } = await import('wave-quill-provider');
  await assert.rejects(new Coedit().init({ ...config, app: 'text', editor: {} }), (err: { code: string; detail: string }) => {
    assert.equal(err.code, 'invalid_config');
    assert.match(err.detail, /^app: expected an editor kind included in this build \(editorC\)/);
    return true;
  });
  await assert.rejects(new Coedit().init({ ...config, app: 'quill', editor: {} }), /invalid_config/, "'quill' is accepted as app (then editor fails)");
});

test('the bundle holds the Quill adapter only, and Yjs stays external', () => {
  const bundle = readFileSync(dist('index.js'), 'utf8');
  for (const marker of ['HTMLTextAreaElement', 'CodemirrorBinding', 'FROALA_DIALECT', 'TINYMCE_DIALECT', 'RichTextBinding']) {
    assert.ok(!bundle.includes(marker), `no ${marker} in the bundle`);
  }
  assert.ok(bundle.includes('wave-break'), "the Quill binding (quill-sync.ts) is bundled");
  assert.match(bundle, /from "yjs"/, 'yjs is imported, not bundled');
  const types = readFileSync(dist('index.d.ts'), 'utf8');
  assert.match(types, /export \{[^}]*Coedit as default/, 'the .d.ts declares the default export');
  assert.ok(!/from "wave-client"/.test(types), 'the .d.ts does not depend on wave-client');
});
