// The plain view of a rich Y.Text (textarea, CodeMirror): what it shows [RT-R3], the index mapping, remote deltas
// mapped to plain changes, and local splices written at mapped positions without touching other formatting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as Y from 'yjs';
import { renderText, readLines, type Op } from 'wave-richtext';
import { PlainView, writeSplice, type PlainOp, type YDeltaOp } from '../src/core/plain-view.js';
import { applyEdits, captureEdits, plainText, writeDifference } from '../src/core/reset.js';

const IMG = { image: 'https://example.com/a.png' };

function rich(ops: YDeltaOp[]): Y.Text {
  const doc = new Y.Doc();
  const ytext = doc.getText('text');
  ytext.applyDelta(ops);
  return ytext;
}

function applyPlain(s: string, ops: readonly PlainOp[]): string {
  let out = '';
  let i = 0;
  for (const op of ops) {
    if (op.retain !== undefined) {
      out += s.slice(i, i + op.retain);
      i += op.retain;
    } else if (op.insert !== undefined) out += op.insert;
    else if (op.delete !== undefined) i += op.delete;
  }
  return out + s.slice(i);
}

/** Writes a splice the way an adapter does: in a transaction of its own origin. */
function splice(ytext: Y.Text, view: PlainView, index: number, remove: number, insert: string): void {
  ytext.doc!.transact(() => writeSplice(ytext, view, index, remove, insert), 'plain');
}

test('[RT-R3] the plain view shows a break as a line break and an image as nothing, like renderText', () => {
  const ops: YDeltaOp[] = [
    { insert: 'ab', attributes: { bold: true } }, { insert: IMG }, { insert: 'c' }, { insert: { break: true } }, { insert: 'd' },
    { insert: '\n', attributes: { header: 1 } }, { insert: 'x' }, { insert: '\n', attributes: { list: 'bullet' } },
  ];
  const view = PlainView.of(rich(ops));
  assert.equal(view.text, 'abc\nd\nx\n');
  assert.equal(view.yLength, 9);
  assert.equal(renderText(readLines(ops as Op[])), 'abc\nd\nx');
});

test('indices map around hidden embeds: inserts go before them, deletions keep those at either end', () => {
  // Y: a b [img] c \n      plain: a b c \n
  const view = PlainView.of(rich([{ insert: 'ab' }, { insert: IMG }, { insert: 'c\n' }]));
  assert.equal(view.toY(2, 'after-shown'), 2); // right after "b", before the image
  assert.equal(view.toY(2, 'before-shown'), 3); // right before "c", after the image
  assert.equal(view.toY(0, 'after-shown'), 0);
  assert.equal(view.toY(4, 'after-shown'), 5);
  assert.deepEqual([0, 1, 2, 3, 4, 5].map((y) => view.toPlain(y)), [0, 1, 2, 2, 3, 4]);
  // An image at the very start: an insert at plain 0 goes before it.
  const lead = PlainView.of(rich([{ insert: IMG }, { insert: 'a\n' }]));
  assert.equal(lead.toY(0, 'after-shown'), 0);
  assert.equal(lead.toY(0, 'before-shown'), 1);
});

test('remote deltas map to plain changes (random rich edits on another doc)', () => {
  let x = 99;
  const rnd = (n: number): number => ((x = (x * 1103515245 + 12345) % 2 ** 31), x % n);
  const a = new Y.Doc();
  const b = new Y.Doc();
  a.on('update', (u: Uint8Array) => Y.applyUpdate(b, u));
  const ya = a.getText('text');
  const yb = b.getText('text');
  const view = PlainView.of(yb);
  let shown = view.text;
  yb.observe((event) => {
    shown = applyPlain(shown, view.apply(event.delta as YDeltaOp[]));
  });
  for (let i = 0; i < 3000; i++) {
    const len = ya.length;
    const at = rnd(len + 1);
    const kind = rnd(6);
    a.transact(() => {
      if (kind === 0) ya.insertEmbed(at, IMG, rnd(2) ? { bold: true } : {});
      else if (kind === 1) ya.insertEmbed(at, { break: true });
      else if (kind === 2 && len > at) ya.delete(at, 1 + rnd(Math.min(4, len - at)));
      else if (kind === 3 && len > at) ya.format(at, 1 + rnd(Math.min(5, len - at)), { italic: rnd(2) ? true : null });
      else ya.insert(at, ['x', 'yz', '\n', 'w\nv'][rnd(4)]!, rnd(2) ? { bold: true } : {});
      // Two changes in one transaction give a delta with several ops.
      if (rnd(3) === 0 && ya.length > 0) ya.delete(rnd(ya.length), 1);
    });
    assert.equal(shown, PlainView.of(yb).text, `step ${i}`);
    assert.equal(view.text, shown);
    assert.equal(view.yLength, yb.length);
  }
  assert.ok(yb.length > 50, 'the edits built a non-trivial document');
  assert.ok((yb.toDelta() as YDeltaOp[]).some((op) => typeof op.insert === 'object'), 'the document holds embeds');
});

test('typing takes the inline formats of the character before it on the line, or at a line start of the one after', () => {
  const ytext = rich([{ insert: 'Title' }, { insert: '\n', attributes: { header: 1 } }, { insert: 'bold', attributes: { bold: true } }, { insert: ' plain\n' }]);
  const view = PlainView.of(ytext);
  splice(ytext, view, 10, 0, 'X'); // after "bold"
  splice(ytext, view, 6, 0, 'S'); // start of the second line, before "bold"
  splice(ytext, view, 5, 0, 'T'); // end of the title
  assert.deepEqual(ytext.toDelta(), [
    { insert: 'TitleT' }, { insert: '\n', attributes: { header: 1 } },
    { insert: 'SboldX', attributes: { bold: true } }, { insert: ' plain\n' },
  ]);
  assert.equal(view.text, ytext.toString());
});

test('Yjs alone would put a heading\'s block key on text typed at the start of the next line; the splice does not', () => {
  const ytext = rich([{ insert: 'Title' }, { insert: '\n', attributes: { header: 1 } }, { insert: 'body\n' }]);
  ytext.insert(6, 'Y');
  assert.deepEqual((ytext.toDelta() as YDeltaOp[])[1], { insert: '\nY', attributes: { header: 1 } });
  ytext.delete(6, 1);
  const view = PlainView.of(ytext);
  splice(ytext, view, 6, 0, 'Z');
  assert.deepEqual(ytext.toDelta(), [{ insert: 'Title' }, { insert: '\n', attributes: { header: 1 } }, { insert: 'Zbody\n' }]);
});

test('Enter splits a line: both halves keep its block attributes; formats elsewhere are unchanged', () => {
  const ytext = rich([
    { insert: 'one two', attributes: { italic: true } }, { insert: '\n', attributes: { list: 'bullet', indent: 1, 'list-cont': true } },
    { insert: 'cell' }, { insert: '\n', attributes: { table: 'r1', colspan: '2' } },
  ]);
  const view = PlainView.of(ytext);
  splice(ytext, view, 3, 1, '\n'); // the space becomes a line break
  assert.deepEqual(ytext.toDelta(), [
    { insert: 'one', attributes: { italic: true } }, { insert: '\n', attributes: { list: 'bullet', indent: 1, 'list-cont': true } },
    { insert: 'two', attributes: { italic: true } }, { insert: '\n', attributes: { list: 'bullet', indent: 1, 'list-cont': true } },
    { insert: 'cell' }, { insert: '\n', attributes: { table: 'r1', colspan: '2' } },
  ]);
});

test('deleting next to an image keeps it; deleting across it removes it; other formatting is untouched', () => {
  const ytext = rich([{ insert: 'ab', attributes: { bold: true } }, { insert: IMG, attributes: { width: '20' } }, { insert: 'cd', attributes: { underline: true } }, { insert: '\n', attributes: { align: 'center' } }]);
  const view = PlainView.of(ytext);
  splice(ytext, view, 1, 1, ''); // "b"
  splice(ytext, view, 1, 1, ''); // "c"
  assert.deepEqual(ytext.toDelta(), [
    { insert: 'a', attributes: { bold: true } }, { insert: IMG, attributes: { width: '20' } },
    { insert: 'd', attributes: { underline: true } }, { insert: '\n', attributes: { align: 'center' } },
  ]);
  splice(ytext, view, 1, 0, 'X'); // between "a" and the image: before the image, bold like "a"
  assert.deepEqual((ytext.toDelta() as YDeltaOp[]).slice(0, 2), [{ insert: 'aX', attributes: { bold: true } }, { insert: IMG, attributes: { width: '20' } }]);
  splice(ytext, view, 0, 3, 'Q'); // "aXd" and the image between them
  assert.deepEqual(ytext.toDelta(), [{ insert: 'Q' }, { insert: '\n', attributes: { align: 'center' } }]);
  assert.equal(view.text, 'Q\n');
  assert.equal(view.yLength, ytext.length);
});

test('deleting a break embed as a line break removes the embed only', () => {
  const ytext = rich([{ insert: 'a' }, { insert: { break: true } }, { insert: 'b' }, { insert: '\n', attributes: { blockquote: true } }]);
  const view = PlainView.of(ytext);
  assert.equal(view.text, 'a\nb\n');
  splice(ytext, view, 1, 1, '');
  assert.deepEqual(ytext.toDelta(), [{ insert: 'ab' }, { insert: '\n', attributes: { blockquote: true } }]);
  assert.equal(view.text, 'ab\n');
});

test('a reset re-applies plain-text patches onto a rich text at mapped positions, keeping embeds and formats', () => {
  const ytext = rich([{ insert: 'ab', attributes: { bold: true } }, { insert: IMG }, { insert: 'cd' }, { insert: '\n', attributes: { header: 2 } }]);
  const base = plainText(ytext);
  assert.equal(base, 'abcd\n');
  const patches = captureEdits(base, 'abcdY\n')!;
  ytext.doc!.transact(() => writeDifference(ytext, applyEdits(patches, plainText(ytext))));
  assert.deepEqual(ytext.toDelta(), [
    { insert: 'ab', attributes: { bold: true } }, { insert: IMG }, { insert: 'cdY' }, { insert: '\n', attributes: { header: 2 } },
  ]);
});

test('[RT-T2] Enter in a table cell makes a second paragraph of that cell, not one more cell in its row', () => {
  const ytext = rich([
    { insert: 'ab' }, { insert: '\n', attributes: { table: 'r1', colspan: '2' } },
    { insert: 'cd' }, { insert: '\n', attributes: { table: 'r1' } },
  ]);
  const view = PlainView.of(ytext);
  splice(ytext, view, 1, 0, '\n');
  const delta = ytext.toDelta() as YDeltaOp[];
  const cell = delta[1]!.attributes!.cell;
  assert.equal(typeof cell, 'string');
  assert.deepEqual(delta, [
    { insert: 'a' }, { insert: '\n', attributes: { table: 'r1', colspan: '2', cell } },
    { insert: 'b' }, { insert: '\n', attributes: { table: 'r1', colspan: '2', cell } },
    { insert: 'cd' }, { insert: '\n', attributes: { table: 'r1' } },
  ]);
  // A cell that already has paragraphs keeps its id.
  splice(ytext, view, 2, 0, '\n');
  const cells = (ytext.toDelta() as YDeltaOp[]).flatMap((op) => [...(op.insert as string)].filter((c) => c === '\n').map(() => op.attributes?.cell));
  assert.deepEqual(cells, [cell, cell, cell, undefined]);
});
