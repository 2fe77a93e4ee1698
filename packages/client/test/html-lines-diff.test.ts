// The rich-text binding's DOM-free writing helpers: comparing lines, keeping cell ids, the composition splice, and
// moving a caret through a remote change.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as Y from 'yjs';
import { docLines, replaceLines, RICHTEXT_TYPE, type Line } from 'wave-richtext';
import { keepCellIds, sameLines, writeSplice } from '../src/adapters/html/lines-diff.ts';
import { transformIndex } from '../src/adapters/html/index-map.ts';

const line = (text: string, attrs: Record<string, unknown> = {}): Line => ({ ops: text ? [{ insert: text }] : [], attrs });

function sync(a: Y.Doc, b: Y.Doc): void {
  Y.applyUpdate(b, Y.encodeStateAsUpdate(a, Y.encodeStateVector(b)));
  Y.applyUpdate(a, Y.encodeStateAsUpdate(b, Y.encodeStateVector(a)));
}

describe('rich-text binding: lines', () => {
  it('compares text, embeds and attributes, absent and null attributes alike', () => {
    assert.ok(sameLines([line('a', { header: 1 })], [{ ops: [{ insert: 'a', attributes: { bold: null } }], attrs: { header: 1, list: null } }]));
    assert.ok(!sameLines([line('a')], [line('a', { header: 1 })]));
    assert.ok(!sameLines([line('a')], [{ ops: [{ insert: 'a', attributes: { bold: true } }], attrs: {} }]));
    assert.ok(!sameLines([line('a')], [line('a'), line('')]));
  });

  it("keeps the document's ids of multi-line cells, by position in their row", () => {
    const doc = [line('a', { table: 'r1', cell: 'c1' }), line('b', { table: 'r1', cell: 'c1' }), line('c', { table: 'r1' })];
    const read = [line('a', { table: 'r1', cell: 'new1' }), line('b2', { table: 'r1', cell: 'new1' }), line('c', { table: 'r1' })];
    keepCellIds(read, doc);
    assert.deepEqual(read.map((l) => l.attrs['cell']), ['c1', 'c1', undefined]);
  });
});

describe('rich-text binding: the composition splice', () => {
  it('writes only what the composition changed, where it began, keeping what a peer wrote meanwhile', () => {
    const mine = new Y.Doc();
    const peer = new Y.Doc();
    const text = mine.getText(RICHTEXT_TYPE);
    replaceLines(text, 0, 0, [line('hello world')]);
    sync(mine, peer);
    const before = docLines(text);
    const caret = Y.createRelativePositionFromTypeIndex(text, 5);
    // The peer types at the start of the line while the composition is open.
    peer.getText(RICHTEXT_TYPE).insert(0, 'PEER ');
    sync(mine, peer);
    const end = writeSplice(text, before, [line('hello there world')], caret, 5, 'ime');
    assert.equal(text.toString(), 'PEER hello there world\n');
    assert.equal(end, 'PEER hello there'.length);
  });
});

describe('rich-text binding: a caret through a remote change', () => {
  it('moves with text inserted before it, stays before text inserted at it, and follows deletions', () => {
    assert.equal(transformIndex(5, [{ retain: 2 }, { insert: 'abc' }]), 8);
    assert.equal(transformIndex(5, [{ retain: 5 }, { insert: 'abc' }]), 5);
    assert.equal(transformIndex(5, [{ retain: 1 }, { delete: 2 }]), 3);
    assert.equal(transformIndex(5, [{ retain: 3 }, { delete: 4 }]), 3);
    assert.equal(transformIndex(5, [{ retain: 6 }, { delete: 1 }]), 5);
    assert.equal(transformIndex(5, [{ insert: { image: 'x' } }]), 6);
  });
});
