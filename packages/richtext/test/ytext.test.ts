/**
 * The edits on the shared Y.Text ([RT-E*]), the races the flat model wins by construction, and repairs ([RT-R6]).
 * Docs exchange updates by hand (helpers/fuzz.ts `Net`): a peer that is "offline" simply gets its updates later.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as Y from 'yjs';
import {
  applyRepairs, docLines, indentLine, insertTable, insertTableColumn, insertTableRow, renderHtml, renderText, repairs,
  repairsOf, replaceLines, RICHTEXT_TYPE, setHeader, toggleBlockquote, toggleList, type Line,
} from '../src/index.ts';
import { LOCAL, Net, rng } from './helpers/fuzz.ts';
import { linesOf } from './helpers/html.ts';

const L = (text: string, attrs: Record<string, unknown> = {}): Line => ({ ops: text === '' ? [] : [{ insert: text }], attrs });
const load = (net: Net, html: string) => {
  replaceLines(net.peers[0]!.text, 0, 0, linesOf(html), 'seed');
  net.deliverAll(rng(1));
};
const html = (net: Net, i = 0) => renderHtml(docLines(net.peers[i]!.text));
const same = (net: Net) => {
  const first = JSON.stringify(net.peers[0]!.text.toDelta());
  for (const p of net.peers) assert.equal(JSON.stringify(p.text.toDelta()), first);
};

describe('races the flat text wins by construction ([RT-E1])', () => {
  it('Enter offline while a collaborator types after the caret: the typing stays inside its word', () => {
    const net = new Net(2);
    load(net, '<p>hello world</p>');
    const [a, b] = net.peers;
    // A presses Enter after "hello " (offline); B types XX after "wo", is delivered and leaves.
    replaceLines(a!.text, 0, 1, [L('hello '), L('world')], LOCAL, { maxPrefix: 6, maxSuffix: 6 });
    b!.doc.transact(() => b!.text.insert(8, 'XX', {}), LOCAL);
    net.deliverAll(rng(2));
    same(net);
    assert.equal(renderText(docLines(a!.text)), 'hello \nwoXXrld');
  });

  it('a selection deleted across a paragraph boundary while a collaborator types inside and after it: every typed character once', () => {
    const net = new Net(2);
    load(net, '<p>alpha beta</p><p>gamma delta</p>');
    const [a, b] = net.peers;
    // A (offline) deletes from "beta" to the end of "gamma "; B types QQ inside "gamma" and ZZ inside "delta".
    a!.doc.transact(() => a!.text.delete(6, 11), LOCAL);
    b!.doc.transact(() => {
      b!.text.insert(14, 'QQ', {});
      b!.text.insert(22, 'ZZ', {});
    }, LOCAL);
    net.deliverAll(rng(3));
    same(net);
    assert.equal(renderText(docLines(a!.text)), 'alpha QQdelZZta');
  });

  it('a paragraph turned into a heading and another into a list item while a collaborator types in them', () => {
    const net = new Net(2);
    load(net, '<p>first line</p><p>second line</p>');
    const [a, b] = net.peers;
    setHeader(a!.text, 0, 2, LOCAL);
    toggleList(a!.text, 1, 'bullet', LOCAL);
    b!.doc.transact(() => {
      b!.text.insert(5, 'AA', {});
      b!.text.insert(19, 'BB', {});
    }, LOCAL);
    net.deliverAll(rng(4));
    same(net);
    assert.equal(html(net), '<h2>firstAA line</h2><ul><li>secondBB line</li></ul>');
  });

  it('two indents of one list item while the other peer types in it: one item, typing kept', () => {
    const net = new Net(2);
    load(net, '<ul><li>first</li><li>hello world</li></ul>');
    const [a, b] = net.peers;
    indentLine(a!.text, 1, 1, LOCAL);
    indentLine(b!.text, 1, 1, LOCAL);
    b!.doc.transact(() => b!.text.insert(17, 'AB', {}), LOCAL);
    net.deliverAll(rng(5));
    same(net);
    assert.equal(html(net), '<ul><li>first<ul><li>hello worldAB</li></ul></li></ul>');
  });
});

describe('replaceLines ([RT-E2][RT-E3])', () => {
  it('writes only the difference: a typed character is one insert, the rest untouched', () => {
    const doc = new Y.Doc();
    const text = doc.getText(RICHTEXT_TYPE);
    replaceLines(text, 0, 0, [L('abc', { header: 1 }), L('def')]);
    const updates: Uint8Array[] = [];
    doc.on('update', (u: Uint8Array) => updates.push(u));
    replaceLines(text, 0, 1, [{ ops: [{ insert: 'ab' }, { insert: 'X', attributes: { bold: true } }, { insert: 'c' }], attrs: { header: 1 } }]);
    assert.equal(updates.length, 1);
    assert.deepEqual(text.toDelta(), [
      { insert: 'ab' }, { insert: 'X', attributes: { bold: true } }, { insert: 'c' }, { insert: '\n', attributes: { header: 1 } }, { insert: 'def\n' },
    ]);
  });

  it('new text inherits no format of its neighbours, and the attributes object passed in is not changed', () => {
    const doc = new Y.Doc();
    const text = doc.getText(RICHTEXT_TYPE);
    replaceLines(text, 0, 0, [{ ops: [{ insert: 'ab', attributes: { bold: true } }], attrs: {} }]);
    const attrs = {};
    const line: Line = { ops: [{ insert: 'ab', attributes: { bold: true } }, { insert: 'c', attributes: attrs }], attrs: {} };
    replaceLines(text, 0, 1, [line]);
    assert.deepEqual(text.toDelta(), [{ insert: 'ab', attributes: { bold: true } }, { insert: 'c\n' }]);
    assert.deepEqual(attrs, {});
  });

  it('format changes of kept text are format calls: concurrent typing in the formatted range survives', () => {
    const net = new Net(2);
    load(net, '<p>one two</p>');
    const [a, b] = net.peers;
    replaceLines(a!.text, 0, 1, [{ ops: [{ insert: 'one', attributes: { bold: true } }, { insert: ' two' }], attrs: {} }], LOCAL);
    b!.doc.transact(() => b!.text.insert(1, 'X', {}), LOCAL);
    net.deliverAll(rng(6));
    same(net);
    assert.equal(renderText(docLines(a!.text)), 'oXne two');
  });

  it('on a document without its final "\\n", two peers pressing Enter at once keep the text once', () => {
    const net = new Net(2);
    const [a, b] = net.peers;
    a!.doc.transact(() => a!.text.insert(0, 'abcdef'), 'seed');
    net.deliverAll(rng(7));
    replaceLines(a!.text, 0, 1, [L('ab'), L('cdef')], LOCAL);
    replaceLines(b!.text, 0, 1, [L('abcd'), L('ef')], LOCAL);
    net.deliverAll(rng(8));
    same(net);
    assert.equal(renderText(docLines(a!.text)).replace(/\n/g, ''), 'abcdef');
  });

  it('an editor command that puts a block break in place of the space after a word a collaborator is typing: the word stays whole', () => {
    // A (client 1, ordered first by Yjs among inserts with one origin) has "cid11" of B's word; its editor turns
    // the space after it into a block break, " xy" underlined (a format item right after "cid11"). B types the
    // word's "q" meanwhile.
    const net = new Net(2);
    load(net, '<p>ab cid11<u> xy</u></p>');
    const [a, b] = net.peers;
    replaceLines(a!.text, 0, 1, [L('ab cid11'), { ops: [{ insert: 'xy', attributes: { underline: true } }], attrs: {} }], LOCAL);
    b!.doc.transact(() => b!.text.insert(8, 'q', {}), LOCAL);
    net.deliverAll(rng(11));
    same(net);
    assert.equal(renderText(docLines(a!.text)), 'ab cid11q\nxy');
  });

  it('bounds make pasted text new even where it equals its neighbours: a concurrent delete of the old text leaves it whole', () => {
    const net = new Net(2);
    load(net, '<p>ab</p>');
    const [a, b] = net.peers;
    // A selects "b" and pastes "bb". Unbounded, the diff would keep the old "b" as the first pasted one.
    replaceLines(a!.text, 0, 1, [L('abb')], LOCAL, { maxPrefix: 1, maxSuffix: 1 });
    b!.doc.transact(() => b!.text.delete(1, 1), LOCAL);
    net.deliverAll(rng(9));
    same(net);
    assert.equal(renderText(docLines(a!.text)), 'abb');
  });
});

describe('replaceLines inserts new lines in one pass ([RT-E2])', () => {
  it('gives the same document as inserting each run at its index with its attributes, on 300 random documents and pastes', () => {
    const FORMATS: Array<Record<string, unknown>> = [{}, { bold: true }, { italic: true, bold: true }, { link: 'https://x.org/' }];
    const BLOCKS: Array<Record<string, unknown>> = [{}, { list: 'bullet' }, { header: 2 }, { blockquote: true }];
    for (let seed = 1; seed <= 300; seed++) {
      const rand = rng(seed);
      const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
      const randomLines = (n: number): Line[] =>
        Array.from({ length: n }, () => ({
          ops: Array.from({ length: Math.floor(rand() * 3) }, () => {
            const attributes = pick(FORMATS);
            const insert = rand() < 0.1 ? { break: true } : pick(['a', 'bc', 'def ']);
            return Object.keys(attributes).length > 0 ? { insert, attributes } : { insert };
          }),
          attrs: pick(BLOCKS),
        }));
      // A document with history: lines written, some formatted and some deleted by another client.
      const base = new Y.Doc();
      base.clientID = 1;
      replaceLines(base.getText(RICHTEXT_TYPE), 0, 0, randomLines(1 + Math.floor(rand() * 5)));
      const other = new Y.Doc();
      other.clientID = 2;
      Y.applyUpdate(other, Y.encodeStateAsUpdate(base));
      const ot = other.getText(RICHTEXT_TYPE);
      if (ot.length > 2) {
        ot.format(Math.floor(rand() * (ot.length - 1)), 1, pick(FORMATS.slice(1)));
        ot.delete(Math.floor(rand() * (ot.length - 1)), 1);
      }
      const start = Y.encodeStateAsUpdate(other);
      const [viaReplace, viaInserts] = [new Y.Doc(), new Y.Doc()];
      for (const d of [viaReplace, viaInserts]) {
        d.clientID = 3;
        Y.applyUpdate(d, start);
      }
      // New lines pasted before line `at`: replaceLines writes their units; the reference inserts each run itself.
      const lines = docLines(viaReplace.getText(RICHTEXT_TYPE));
      const at = Math.floor(rand() * (lines.length + 1));
      const pasted = randomLines(1 + Math.floor(rand() * 6));
      replaceLines(viaReplace.getText(RICHTEXT_TYPE), at, at, pasted);
      const text = viaInserts.getText(RICHTEXT_TYPE);
      let index = 0;
      for (const line of lines.slice(0, at)) index += line.ops.reduce((n, op) => n + (typeof op.insert === 'string' ? op.insert.length : 1), 0) + 1;
      viaInserts.transact(() => {
        for (const line of pasted) {
          for (const op of line.ops) {
            if (typeof op.insert === 'string') text.insert(index, op.insert, { ...(op.attributes ?? {}) });
            else text.insertEmbed(index, op.insert, { ...(op.attributes ?? {}) });
            index += typeof op.insert === 'string' ? op.insert.length : 1;
          }
          text.insert(index++, '\n', { ...line.attrs });
        }
      });
      assert.deepEqual(viaReplace.getText(RICHTEXT_TYPE).toDelta(), text.toDelta(), `seed ${seed}`);
    }
  });
});

describe('bounds never make a diff delete text the edit kept ([RT-E3])', () => {
  it('a line pasted before a paragraph, with bounds that put the edit at its end: only the new line is written, so typing inside the paragraph stays in its word', () => {
    const net = new Net(2);
    load(net, '<p>bob70q</p>');
    const [a, b] = net.peers;
    // The bounds say the change ends at the paragraph's end (no suffix kept); it is an insertion before it.
    replaceLines(a!.text, 0, 1, [L('ann58q'), L('bob70q')], LOCAL, { maxPrefix: 7, maxSuffix: 0 });
    b!.doc.transact(() => b!.text.insert(3, 'XX', {}), LOCAL);
    net.deliverAll(rng(10));
    same(net);
    assert.equal(renderText(docLines(a!.text)), 'ann58q\nbobXX70q');
  });

  it('an edit in two places of a range (lines pasted, an empty line added after them): the text between them is kept, so typing inside it stays in its word', () => {
    const net = new Net(2);
    load(net, '<p>ann28q ann29q cid26q</p>');
    const [a, b] = net.peers;
    replaceLines(a!.text, 0, 1, [L('ann28q'), L('bob35q'), L('ann29q cid26q'), L('')], LOCAL);
    b!.doc.transact(() => b!.text.insert(10, 'XX', {}), LOCAL);
    net.deliverAll(rng(11));
    same(net);
    assert.equal(renderText(docLines(a!.text)), 'ann28q\nbob35q\nannXX29q cid26q\n');
  });

  it('without bounds, a new word is never made of the letters of an old word beside it: typing inside that old word stays in it', () => {
    const net = new Net(2);
    load(net, '<p>x ann12q y</p>');
    const [a, b] = net.peers;
    // A pastes two words before "ann12q" and the editor also changes "y" (a change no bounds explain).
    replaceLines(a!.text, 0, 1, [L('x ann56q ann57q ann12q Y')], LOCAL);
    // B types inside "ann12q", after its "a".
    b!.doc.transact(() => b!.text.insert(3, 'ZZ', {}), LOCAL);
    net.deliverAll(rng(12));
    same(net);
    assert.equal(renderText(docLines(a!.text)), 'x ann56q ann57q aZZnn12q Y');
  });

  it('without bounds, typing inside a word keeps the word\'s other letters: a collaborator\'s typing beside them stays', () => {
    const net = new Net(2);
    load(net, '<p>x ann12q y</p>');
    const [a, b] = net.peers;
    replaceLines(a!.text, 0, 1, [L('x ann1X2q y')], LOCAL);
    b!.doc.transact(() => b!.text.insert(3, 'ZZ', {}), LOCAL);
    net.deliverAll(rng(13));
    same(net);
    assert.equal(renderText(docLines(a!.text)), 'x aZZnn1X2q y');
  });

  it('bounds that match the edit still make a replaced selection new', () => {
    const doc = new Y.Doc();
    const text = doc.getText(RICHTEXT_TYPE);
    replaceLines(text, 0, 0, [L('a w4q b')]);
    const deleted: number[] = [];
    text.observe((e) => e.delta.forEach((op) => op.delete !== undefined && deleted.push(op.delete)));
    // "w4q" selected and replaced by "w5q": all three characters are new, not only the digit.
    replaceLines(text, 0, 1, [L('a w5q b')], LOCAL, { maxPrefix: 2, maxSuffix: 3 });
    assert.deepEqual(deleted, [3]);
    assert.equal(renderText(docLines(text)), 'a w5q b');
  });
});

describe('block edits ([RT-E4][RT-E5])', () => {
  it('list toggle, indent, outdent, heading and quote format the line\'s "\\n" only', () => {
    const doc = new Y.Doc();
    const text = doc.getText(RICHTEXT_TYPE);
    replaceLines(text, 0, 0, [L('a'), L('b')]);
    toggleList(text, 0, 'ordered');
    toggleList(text, 1, 'ordered');
    indentLine(text, 1, 1);
    assert.equal(renderHtml(docLines(text)), '<ol><li>a<ol><li>b</li></ol></li></ol>');
    indentLine(text, 1, -1);
    indentLine(text, 1, -1);
    toggleList(text, 0, 'ordered');
    setHeader(text, 1, 3);
    toggleBlockquote(text, 0);
    assert.equal(renderHtml(docLines(text)), '<blockquote><p>a</p></blockquote><h3>b</h3>');
    assert.equal(text.toString(), 'a\nb\n');
  });
});

describe('tables ([RT-E6])', () => {
  const setup = () => {
    const doc = new Y.Doc();
    const text = doc.getText(RICHTEXT_TYPE);
    replaceLines(text, 0, 0, [L('x')]);
    let n = 0;
    insertTable(text, 0, 2, 2, () => `row${++n}`);
    return text;
  };

  it('insertTable, insertTableRow and insertTableColumn keep the table rectangular', () => {
    const text = setup();
    assert.equal(renderHtml(docLines(text)), '<p>x</p><table><tbody><tr><td><br></td><td><br></td></tr><tr><td><br></td><td><br></td></tr></tbody></table>');
    insertTableRow(text, 1, true, 'rowX');
    insertTableColumn(text, 1, false);
    const html = renderHtml(docLines(text));
    assert.equal(html.split('<tr>').length - 1, 3);
    for (const row of html.split('<tr>').slice(1)) assert.equal(row.split('<td>').length - 1, 3, html);
    assert.deepEqual(repairsOf(text), []);
  });

  it('a concurrent row and column insert converge on a table whose short row is padded, and the repair writes the pad once', () => {
    const net = new Net(2);
    const [a, b] = net.peers;
    replaceLines(a!.text, 0, 0, [L('a', { table: 'r1' }), L('b', { table: 'r1' })], 'seed');
    net.deliverAll(rng(10));
    insertTableRow(a!.text, 0, true, 'r2', LOCAL);
    insertTableColumn(b!.text, 0, true, LOCAL);
    net.deliverAll(rng(11));
    same(net);
    const shown = html(net);
    assert.equal(shown, '<table><tbody><tr><td>a</td><td><br></td><td>b</td></tr><tr><td><br></td><td><br></td><td><br></td></tr></tbody></table>');
    const list = repairsOf(a!.text);
    assert.deepEqual(list.map((r) => r.kind), ['insert']);
    applyRepairs(a!.text, list);
    net.deliverAll(rng(12));
    assert.equal(html(net, 1), shown);
    assert.deepEqual(repairsOf(b!.text), []);
  });
});

describe('repairs ([RT-R6])', () => {
  it('list nesting, continuation without item, conflicting attributes, stray formats and the final "\\n"', () => {
    const delta = [
      { insert: 'a' }, { insert: '\n', attributes: { list: 'bullet', indent: 3, header: 2 } },
      { insert: 'b', attributes: { list: 'bullet', bold: true } }, { insert: '\n', attributes: { 'list-cont': true, bold: true } },
      { insert: 'c' },
    ];
    const list = repairs(delta);
    assert.deepEqual(list, [
      { kind: 'insert', index: 5, attributes: {} },
      { kind: 'format', index: 3, length: 1, attributes: { 'list-cont': null, bold: null } },
      { kind: 'format', index: 2, length: 1, attributes: { list: null } },
      { kind: 'format', index: 1, length: 1, attributes: { indent: null, header: null } },
    ]);
    const doc = new Y.Doc();
    const text = doc.getText(RICHTEXT_TYPE);
    text.applyDelta(delta);
    const before = renderHtml(docLines(text));
    applyRepairs(text, list);
    assert.deepEqual(repairsOf(text), []);
    assert.equal(renderHtml(docLines(text)), before);
    assert.equal(before, '<ul><li>a</li></ul><p><strong>b</strong></p><p>c</p>');
  });
});
