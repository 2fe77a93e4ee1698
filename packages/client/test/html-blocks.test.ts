// The rich-text binding's line index (adapters/html/blocks.ts): lines cut into top-level blocks the way the renderer
// writes them, so that one block can be re-rendered alone.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { renderHtml, type Line } from 'wave-richtext';
import { blocksOf, blockStarts, changedBlocks } from '../src/adapters/html/blocks.ts';
import { seededRandom } from './helpers/random.js';

const line = (text: string, attrs: Record<string, unknown> = {}): Line => ({ ops: text ? [{ insert: text }] : [], attrs });

const SHAPES: Array<Record<string, unknown>> = [
  {}, { header: 2 }, { list: 'bullet' }, { list: 'bullet', indent: 1 }, { list: 'ordered' }, { list: 'ordered', indent: 2 },
  { list: 'checked' }, { list: 'bullet', 'list-cont': true }, { blockquote: true }, { blockquote: true, 'quote-depth': 2 },
  { blockquote: true, list: 'bullet' }, { 'code-block': true }, { table: 'r1' }, { table: 'r2' }, { table: 'r2', cell: 'c1' },
  { align: 'center' },
];

describe('rich-text line index', () => {
  it('cuts paragraphs, lists, quotes, tables and code into the blocks the renderer writes', () => {
    const lines = [
      line('a'), line('b', { list: 'bullet' }), line('c', { list: 'bullet', indent: 1 }), line('d', { list: 'ordered' }),
      line('e', { blockquote: true }), line('f', { blockquote: true, list: 'ordered' }), line('g', { table: 'r1' }),
      line('h', { table: 'r1' }), line('i', { table: 'r2' }), line('j', { 'code-block': true }), line('k', { 'code-block': true }), line('l'),
    ];
    const blocks = blocksOf(lines);
    assert.deepEqual(blocks.map((b) => b.count), [1, 2, 1, 2, 3, 2, 1]);
    assert.deepEqual(blockStarts(blocks), [0, 1, 3, 4, 6, 9, 11, 12]);
    assert.equal(blocks.map((b) => b.html).join(''), renderHtml(lines));
  });

  it('rendering each block alone gives the whole document, for any shape concurrent edits leave', () => {
    for (let seed = 1; seed <= 500; seed++) {
      const r = seededRandom(seed);
      const lines = Array.from({ length: 1 + Math.floor(r() * 14) }, (_, k) => line(r() < 0.2 ? '' : `w${k}`, { ...SHAPES[Math.floor(r() * SHAPES.length)]! }));
      for (const options of [{}, { lineBeforeLeadingList: true, placeholder: { 'data-mce-bogus': '1' } }]) {
        const blocks = blocksOf(lines, options);
        assert.equal(blocks.reduce((n, b) => n + b.count, 0), lines.length, `seed ${seed}`);
        assert.ok(blocks.every((b) => b.count > 0), `seed ${seed}`);
        assert.equal(blocks.map((b) => b.html).join(''), renderHtml(lines, options), `seed ${seed}: ${JSON.stringify(lines)}`);
      }
    }
  });

  it('finds the blocks a change touched, keeping equal blocks at both ends', () => {
    const before = blocksOf([line('a'), line('b'), line('c'), line('d')]);
    const after = blocksOf([line('a'), line('b'), line('x', { list: 'bullet' }), line('y', { list: 'bullet' }), line('d')]);
    assert.deepEqual(changedBlocks(before, after), { from: 2, to: 3, toAfter: 3 });
    assert.deepEqual(changedBlocks(before, before), { from: 4, to: 4, toAfter: 4 });
  });
});
