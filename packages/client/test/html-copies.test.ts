// Two users who move the same block at the same time each write a copy of it (Yjs has no move); the user with the
// higher client ID drops theirs (copies.ts). DOM-free: Y.Docs with fixed client IDs, updates exchanged by hand, the
// binding's steps (note the write, note the peer's blocks, drop the pairs) run by an observer as the binding does.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as Y from 'yjs';
import { normalizeDocument } from '../src/adapters/html/normalize.ts';
import { Copies, dropCopies } from '../src/adapters/html/copies.ts';
import type { MElement } from '../src/adapters/html/model.ts';
import { frag, h, list, load, show, sync, t, write } from './helpers/ydocs.ts';

/** A doc with client ID `id` whose writes (origin 'local') and peers' transactions go through `Copies`. */
function deduping(id: number): { doc: Y.Doc; dropped: number[] } {
  const doc = new Y.Doc();
  doc.clientID = id;
  const copies = new Copies(() => doc.clientID);
  const dropped: number[] = [];
  frag(doc).observeDeep((_events, tr) => {
    if (tr.origin === 'local') copies.noteWrite(tr);
    else if (!tr.local) copies.noteRemote(tr);
    else return;
    const pairs = copies.pairs();
    if (pairs.length > 0) doc.transact(() => dropped.push(dropCopies(pairs)), 'copies');
  });
  return { doc, dropped };
}

const count = (html: string, text: string) => html.split(text).length - 1;
const indented = list([t('first'), h('ul', {}, h('li', {}, t('hello world')))]);
const seed = () => list([t('first')], [t('hello world')]);

/** Ann and Bob (client IDs `annId`, `bobId`) holding `content`, in sync. */
function pair(content: MElement[], annId = 1, bobId = 2): { ann: ReturnType<typeof deduping>; bob: ReturnType<typeof deduping> } {
  const ann = deduping(annId);
  const bob = deduping(bobId);
  load(ann.doc, content);
  sync(ann.doc, bob.doc);
  return { ann, bob };
}

/** Both indent "hello world" at once; Bob then writes `bobAfter` (if given) before they sync (twice: drops travel too). */
function indentRace(annId: number, bobId: number, bobAfter?: MElement[]): ReturnType<typeof pair> {
  const both = pair(seed(), annId, bobId);
  write(both.ann.doc, indented);
  write(both.bob.doc, indented);
  if (bobAfter) write(both.bob.doc, bobAfter);
  sync(both.ann.doc, both.bob.doc);
  sync(both.ann.doc, both.bob.doc);
  return both;
}

describe('concurrent copies of a moved block', () => {
  it('without the rule, two concurrent indents of one item leave it twice (the case this is for)', () => {
    const ann = new Y.Doc();
    const bob = new Y.Doc();
    load(ann, seed());
    sync(ann, bob);
    write(ann, indented);
    write(bob, indented);
    sync(ann, bob);
    assert.equal(count(show(ann), 'hello world'), 2, show(ann));
  });

  for (const [annId, bobId] of [
    [1, 2],
    [2, 1],
  ] as const) {
    it(`two concurrent indents of one item leave it once, nested (Ann ${annId}, Bob ${bobId}: the higher drops its copy)`, () => {
      const { ann, bob } = indentRace(annId, bobId);
      assert.equal(show(ann.doc), '<ul><li>first<ul><li>hello world</li></ul></li></ul>');
      assert.equal(show(bob.doc), show(ann.doc));
      const higher = annId > bobId ? ann : bob;
      const lower = annId > bobId ? bob : ann;
      assert.deepEqual(higher.dropped, [1], 'the higher client deleted one element: its new nested list, with its item');
      assert.deepEqual(lower.dropped, [], 'the lower client deleted nothing');
    });
  }

  it('one item moved to two places at once stays in the lower client\'s place', () => {
    const { ann, bob } = pair(seed());
    write(ann.doc, indented);
    // Bob takes the item out of the list, as a paragraph after it.
    write(bob.doc, [...list([t('first')]), ...normalizeDocument([h('p', {}, t('hello world'))])]);
    sync(ann.doc, bob.doc);
    sync(ann.doc, bob.doc);
    assert.equal(show(ann.doc), '<ul><li>first<ul><li>hello world</li></ul></li></ul>');
    assert.equal(show(bob.doc), show(ann.doc));
  });

  it('a copy its author typed into after the move is never dropped: both stay, with every character', () => {
    const { ann, bob } = indentRace(1, 2, list([t('first'), h('ul', {}, h('li', {}, t('hello world!')))]));
    assert.equal(show(bob.doc), show(ann.doc));
    assert.ok(show(ann.doc).includes('hello world!'), show(ann.doc));
    assert.deepEqual(bob.dropped, []);
  });

  it('a copy that has since received a nested list the other copy lacks is never dropped (its nested list would go with it)', () => {
    const { ann, bob } = indentRace(1, 2, list([t('first'), h('ul', {}, h('li', {}, t('hello world'), h('ul', {}, h('li', {}, t('a child of it')))))]));
    assert.equal(show(bob.doc), show(ann.doc));
    assert.ok(show(ann.doc).includes('a child of it'), show(ann.doc));
    assert.deepEqual(bob.dropped, []);
  });

  it('moves one after the other are not concurrent: the second is kept as written', () => {
    const { ann, bob } = pair(seed());
    write(bob.doc, indented);
    sync(ann.doc, bob.doc);
    // Ann, having seen Bob's indent, takes the item back out.
    write(ann.doc, seed());
    sync(ann.doc, bob.doc);
    assert.equal(show(ann.doc), '<ul><li>first</li><li>hello world</li></ul>');
    assert.equal(show(bob.doc), show(ann.doc));
    assert.deepEqual([...ann.dropped, ...bob.dropped], []);
  });

  it('a peer\'s paragraph that only has the same text as a block this user did not move is left alone', () => {
    const { ann, bob } = pair(normalizeDocument([h('p', {}, t('same words'))]));
    write(bob.doc, normalizeDocument([h('p', {}, t('same words')), h('p', {}, t('other'))]));
    write(ann.doc, normalizeDocument([h('p', {}, t('same words')), h('p', {}, t('same words'))]));
    sync(ann.doc, bob.doc);
    sync(ann.doc, bob.doc);
    assert.equal(count(show(ann.doc), 'same words'), 2, show(ann.doc));
    assert.deepEqual([...ann.dropped, ...bob.dropped], []);
  });
});
