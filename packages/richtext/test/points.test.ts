/**
 * `parseHtml`'s `onPoint`: for every point it reports, a character inserted at that point into the tree lands where
 * the point said, checked against the parser itself on seeded random trees (the property the rich-text binding's
 * caret mapping rests on); the lines read with `onPoint` are the lines read without it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseHtml, type HtmlNode, type Line } from '../src/index.ts';
import { rng } from './helpers/fuzz.ts';

/** A private-use character nobody types, as the inserted character. */
const MARK = '\ue000';

/** A plain tree node behind `HtmlNode`, so that a copy can take a character anywhere. */
class TNode implements HtmlNode {
  constructor(
    readonly nodeType: number,
    readonly nodeName: string,
    readonly childNodes: TNode[] = [],
    readonly attrs: Record<string, string> = {},
    readonly data?: string,
  ) {}

  getAttribute(name: string): string | null {
    return this.attrs[name] ?? null;
  }

  get textContent(): string {
    return this.nodeType === 3 ? this.data! : this.childNodes.map((c) => c.textContent).join('');
  }
}

const text = (data: string): TNode => new TNode(3, '#text', [], {}, data);
const el = (tag: string, kids: TNode[], attrs: Record<string, string> = {}): TNode => new TNode(1, tag.toUpperCase(), kids, attrs);

/** A copy of `node` with MARK inserted at the point (at, offset). */
function withMark(node: TNode, at: TNode, offset: number): TNode {
  if (node === at && node.nodeType === 3) return text(node.data!.slice(0, offset) + MARK + node.data!.slice(offset));
  const kids = node.childNodes.map((c) => withMark(c, at, offset));
  if (node === at) kids.splice(offset, 0, text(MARK));
  return new TNode(node.nodeType, node.nodeName, kids, node.attrs, node.data);
}

/** Where MARK is in `lines`: its line and its unit in that line. */
function findMark(lines: readonly Line[]): [number, number] | null {
  for (let i = 0; i < lines.length; i++) {
    let k = 0;
    for (const op of lines[i]!.ops) {
      if (typeof op.insert !== 'string') {
        k++;
        continue;
      }
      const at = op.insert.indexOf(MARK);
      if (at >= 0) return [i, k + at];
      k += op.insert.length;
    }
  }
  return null;
}

const CHARS = ['a', 'b', ' ', ' ', '\n', '\t', '\r', '\u00a0', '\u200b', '\ufeff'];
const INLINE = ['b', 'i', 'span', 'a', 'code', 'u'];
const BLOCKS = ['p', 'div', 'pre', 'h1', 'blockquote', 'ul', 'ol', 'li', 'table', 'tr', 'td'];

function randomTree(rand: () => number, depth: number): TNode {
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const r = rand();
  if (depth === 0 || r < 0.35) {
    let s = '';
    const n = Math.floor(rand() * 6);
    for (let i = 0; i < n; i++) s += pick(CHARS);
    return text(s);
  }
  if (r < 0.42) return el('br', []);
  if (r < 0.46) return el('img', [], rand() < 0.5 ? { src: 'https://x.org/p.png' } : { src: 'javascript:x()', alt: pick(['a b', 'c', '']) });
  if (r < 0.48) return el('script', [text('x = 1')]);
  if (r < 0.5) return el('span', [text('\u200b')], { class: 'fr-marker' });
  const kids = Array.from({ length: Math.floor(rand() * 4) }, () => randomTree(rand, depth - 1));
  if (r < 0.75) return el(pick(INLINE), kids, rand() < 0.3 ? { style: 'font-weight: bold' } : {});
  return el(pick(BLOCKS), kids);
}

/** Every point `onPoint` reports for the content of `root`, with its line and unit, and the lines read. */
function tracked(root: TNode): { points: Array<[TNode, number, number, number]>; lines: Line[] } {
  const points: Array<[TNode, number, number, number]> = [];
  const lines = parseHtml(root, { newId: () => 'id', onPoint: (node, offset, line, unit) => points.push([node as TNode, offset, line, unit]) });
  return { points, lines };
}

describe('parseHtml onPoint', () => {
  it('reports where a character inserted at each point lands, and reads the same lines, on 400 random trees', () => {
    for (let seed = 1; seed <= 400; seed++) {
      const rand = rng(seed);
      const root = el('div', Array.from({ length: 1 + Math.floor(rand() * 4) }, () => randomTree(rand, 4)));
      const { points, lines } = tracked(root);
      assert.deepEqual(lines, parseHtml(root, { newId: () => 'id' }), `seed ${seed}: lines read with onPoint`);
      for (const [node, offset, line, unit] of points) {
        if (node === root) continue; // the root's own children are not a point inside the content
        const found = findMark(parseHtml(withMark(root, node, offset), { newId: () => 'id' }));
        assert.deepEqual([line, unit], found, `seed ${seed}: point (${node.nodeName} ${JSON.stringify(node.data ?? '')}, ${offset})`);
      }
    }
  });

  it('reports every offset of every text node it reads and every child boundary of every element it reads, in document order', () => {
    const a = text('a  b');
    const br = el('br', []);
    const b = el('b', [text('x')]);
    const dropped = el('script', [text('y')]);
    const p = el('p', [a, br, b, dropped]);
    const { points } = tracked(el('div', [p]));
    const names = points.map(([n, o]) => `${n === a ? 'a' : n === p ? 'p' : n === b ? 'b' : n.nodeName}:${o}`);
    assert.deepEqual(names, ['DIV:0', 'p:0', 'a:0', 'a:1', 'a:2', 'a:3', 'a:4', 'p:1', 'p:2', 'b:0', '#text:0', '#text:1', 'b:1', 'p:3', 'p:4', 'DIV:1']);
    // "a  b": the second space collapses; a character after "a " keeps that space.
    assert.deepEqual(points.filter(([n]) => n === a).map(([, , , u]) => u), [0, 1, 2, 2, 3]);
  });
});

describe('parseHtml onPoint: stopping', () => {
  it('returning true stops the reading at that point: the points before it are those of a whole read, none after', () => {
    for (let seed = 1; seed <= 100; seed++) {
      const rand = rng(seed);
      const root = el('div', Array.from({ length: 1 + Math.floor(rand() * 4) }, () => randomTree(rand, 4)));
      const whole = tracked(root).points;
      const stopAt = Math.floor(rand() * whole.length);
      const seen: Array<[TNode, number, number, number]> = [];
      parseHtml(root, { newId: () => 'id', onPoint: (node, offset, line, unit) => seen.push([node as TNode, offset, line, unit]) > stopAt });
      assert.deepEqual(seen, whole.slice(0, stopAt + 1), `seed ${seed}`);
    }
  });
});

describe('parseHtml: code text from a DOM (line breaks parse5 would have normalised)', () => {
  it('[RT-C1][RT-H5] "\\r\\n", "\\r" and "\\n" each end one code line; zero-width characters dropped, also inside "\\r\\n"; no-break spaces are spaces', () => {
    const code = (s: string): Line => ({ ops: s === '' ? [] : [{ insert: s }], attrs: { 'code-block': true } });
    const lines = parseHtml(el('div', [el('pre', [text('a\r\nb\rc\nd\r\u200b\ne\u00a0f\u200b\r\n')])]));
    assert.deepEqual(lines, [code('a'), code('b'), code('c'), code('d'), code('e f')]);
  });
});
