// The shared-type names both ends open (src/doc-names.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as Y from 'yjs';
import { RICHTEXT_TYPE } from 'wave-richtext';
import { META_MAP, TEXT_TYPE } from '../src/index.js';

test('the flat rich text of wave-richtext is the Y.Text the text and Delta editors open', () => {
  // wave-richtext imports only yjs (DESIGN.md), so it keeps its own constant; this keeps the two equal.
  assert.equal(RICHTEXT_TYPE, TEXT_TYPE);
});

test('the content type and the meta map have distinct names, so one document holds both', () => {
  assert.notEqual(TEXT_TYPE, META_MAP);
  // Yjs refuses to open one name as two kinds of type: opening both in one doc shows they do not collide.
  const doc = new Y.Doc();
  doc.getText(TEXT_TYPE).insert(0, 'a');
  doc.getMap(META_MAP).set('k', 'c');
  assert.equal(doc.getText(TEXT_TYPE).toString(), 'a');
});
