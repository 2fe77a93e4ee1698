// The CodeMirror 5 adapter outside a browser: wave-client's entry imports in Node (the adapter drives the page's
// editor instance and never imports the `codemirror` package, which touches `navigator` and `document`), and an editor that is not a CodeMirror 5 instance is a config mistake naming `editor`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Coedit, CoeditError } from '../src/index.js';

const config = { docId: 'cm-doc', apiKey: 'wk_test', user: { name: 'Ada' }, serverUrl: 'http://127.0.0.1:1' };

test('app editorB / codemirror rejects an editor that is not CodeMirror 5 with invalid_config naming editor', async () => {
  for (const app of ['editorB', 'codemirror']) {
    for (const editor of [{}, { getValue() {}, getDoc() {} }, document_like()]) {
      await assert.rejects(new Coedit().init({ ...config, app, editor }), (err: unknown) => {
        assert.ok(err instanceof CoeditError);
        assert.equal(err.code, 'invalid_config');
        assert.match(err.detail, /^editor: expected a CodeMirror 5 editor/);
        return true;
      });
    }
  }
});

test('a duck-typed CodeMirror 5 editor is accepted: init with autoStart false binds nothing yet', async () => {
  const cm = { getValue: () => '', getDoc: () => ({}), on: () => {}, getWrapperElement: () => ({}) };
  const coedit = new Coedit();
  await coedit.init({ ...config, app: 'codemirror', editor: cm, autoStart: false });
  assert.equal(coedit.getState(), 'initialized');
});

/** A textarea-like object: the wrong editor for app 'editorB'. */
function document_like(): object {
  return { value: '', addEventListener() {}, tagName: 'TEXTAREA' };
}
