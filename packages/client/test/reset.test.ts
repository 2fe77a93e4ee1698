// A session reset's re-applying of unsynced edits (core/reset.ts, PROTOCOL.md P8, RELIABILITY.md D3): the edits
// (base → mine) merged into a new content (base → onto) keep every edit of both, duplicate nothing, and are written
// into the Y.Text as whole characters.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as Y from 'yjs';
import { applyEdits, captureEdits, writeDifference, type Edits } from '../src/core/reset.js';
import { seededRandom } from './helpers/random.js';

const merge = (base: string, mine: string, onto: string): string => applyEdits({ base, mine }, onto);

test('no edits captured when the client shows what the server confirmed', () => {
  assert.equal(captureEdits('same\n', 'same\n'), null);
  assert.deepEqual(captureEdits('a\n', 'ab\n'), { base: 'a\n', mine: 'ab\n' } satisfies Edits);
});

test('[D3] edits land on a new content that changed elsewhere (the integration scenarios)', () => {
  // Another user seeded the new session with a line more.
  assert.equal(merge('acked shared base\n', 'acked shared base offline-edit\n', 'acked shared base\nfrom b\n'), 'acked shared base offline-edit\nfrom b\n');
  // The host's copy (fetchDocOnNetworkReconnect) has a line the client never saw.
  assert.equal(merge('title\n', 'draft: title\n', 'title\nhost saved this line\n'), 'draft: title\nhost saved this line\n');
  // Text inserted above moves the edited line far down; the edit follows its words.
  const above = 'x'.repeat(2000) + '\n';
  assert.equal(merge('one two three\n', 'one 2 three\n', above + 'one two three\n'), above + 'one 2 three\n');
});

test('[D3] edits the new content already holds are not written twice', () => {
  const base = 'alpha beta gamma\n';
  const mine = 'alpha BETA gamma delta\n';
  assert.equal(merge(base, mine, mine), mine);
  // The host saved the client's edits and someone changed another word since.
  assert.equal(merge(base, mine, 'ALPHA BETA gamma delta\n'), 'ALPHA BETA gamma delta\n');
});

test('edits at one place: a pure insertion before replaced text, the new content before the client', () => {
  // The client added a letter after a word that the new content replaced: it follows the replacement.
  assert.equal(merge('the cat sat', 'the cats sat', 'the dog sat'), 'the dogs sat');
  // The client added a word before it.
  assert.equal(merge('the cat sat', 'the big cat sat', 'the dog sat'), 'the big dog sat');
  // The client replaced the word, the new content added one before it.
  assert.equal(merge('the cat sat', 'the dog sat', 'the big cat sat'), 'the big dog sat');
  // Both inserted at one place.
  assert.equal(merge('ab', 'aXb', 'aYb'), 'aYXb');
});

test('[D3] an edit inside text the new content deleted is kept; text inserted inside a word the client deleted is kept', () => {
  assert.equal(merge('one. two three. four.', 'one. two and three. four.', 'one. four.'), 'one. and four.');
  assert.equal(merge('one word two', 'one two', 'one wo-rd two'), 'one -two');
});

test('edits merge as concurrent edits: every insertion of both kept once, a base character kept unless one side deleted it, each side\'s order kept (random)', () => {
  // Unique characters (base, onto's insertions and the client's from three ranges) make each one traceable.
  const seed = 20270;
  const rnd = seededRandom(seed);
  for (let i = 0; i < 2000; i++) {
    let next = 0;
    const fresh = (from: number) => String.fromCharCode(from + next++);
    const base = Array.from({ length: Math.floor(rnd() * 30) }, () => fresh(0x100)).join('');
    const edit = (from: number): string => {
      let s = base;
      for (let k = Math.floor(rnd() * 5); k > 0; k--) {
        const at = Math.floor(rnd() * (s.length + 1));
        const del = Math.min(s.length - at, Math.floor(rnd() * 5));
        const ins = Array.from({ length: Math.floor(rnd() * 4) }, () => fresh(from)).join('');
        s = s.slice(0, at) + ins + s.slice(at + del);
      }
      return s;
    };
    const onto = edit(0x400);
    const mine = edit(0x4e00);
    const out = merge(base, mine, onto);
    const what = `seed ${seed} case ${i}: ${JSON.stringify([base, mine, onto, out])}`;
    const has = (s: string) => (c: string) => s.includes(c);
    const expected = new Set([...base].filter((c) => mine.includes(c) && onto.includes(c)));
    for (const c of [...mine, ...onto]) if (!base.includes(c)) expected.add(c);
    assert.equal(out.length, expected.size, `no character twice, none missing: ${what}`);
    for (const c of out) assert.ok(expected.has(c), `${c} belongs: ${what}`);
    assert.equal([...out].filter(has(mine)).join(''), [...mine].filter(has(out)).join(''), `the client's order: ${what}`);
    assert.equal([...out].filter(has(onto)).join(''), [...onto].filter(has(out)).join(''), `the new content's order: ${what}`);
  }
});

test('merging what did not change gives the other side; whole characters only (random, repeated characters and surrogate pairs)', () => {
  const seed = 7;
  const rnd = seededRandom(seed);
  const alphabet = ['a', 'b', ' ', '\n', '😀', '😃', '👍'];
  const str = (n: number) => Array.from({ length: n }, () => alphabet[Math.floor(rnd() * alphabet.length)]).join('');
  const wholePairs = (s: string) => !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);
  for (let i = 0; i < 2000; i++) {
    const [base, mine, onto] = [str(Math.floor(rnd() * 10)), str(Math.floor(rnd() * 10)), str(Math.floor(rnd() * 10))];
    const what = `seed ${seed} case ${i}: ${JSON.stringify([base, mine, onto])}`;
    assert.equal(merge(base, mine, base), mine, `onto = base: ${what}`);
    assert.equal(merge(base, base, onto), onto, `no edits: ${what}`);
    assert.equal(merge(base, mine, mine), mine, `onto holds the edits: ${what}`);
    assert.ok(wholePairs(merge(base, mine, onto)), `whole characters: ${what}`);
  }
});

test('writeDifference writes whole characters: an emoji changed to another that shares its first UTF-16 unit survives an update', () => {
  const doc = new Y.Doc();
  const ytext = doc.getText('text');
  ytext.insert(0, 'a😀b\n');
  doc.transact(() => writeDifference(ytext, 'a😃b\n'));
  const peer = new Y.Doc();
  Y.applyUpdate(peer, Y.encodeStateAsUpdate(doc));
  assert.equal(peer.getText('text').toString(), 'a😃b\n');
});
