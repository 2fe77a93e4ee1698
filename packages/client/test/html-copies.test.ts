// Two users who move the same block at the same time each write a copy of it (Yjs has no move); the user with the
// higher client ID drops theirs (copies.ts). DOM-free: Y.Docs with fixed client IDs, updates exchanged by hand, the
// binding's steps (note the write, note the peer's blocks, drop the pairs) run by an observer as the binding does.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as Y from 'yjs';
import { normalizeDocument } from '../src/adapters/html/normalize.ts';
import { Copies, dropCopies } from '../src/adapters/html/copies.ts';
import { dropChars, TextCopies } from '../src/adapters/html/textcopies.ts';
import { applyRemoteUpdate, updateDeleteSet } from '../src/core/remote-update.ts';
import { LocalUndo } from '../src/core/undo.ts';
import type { MElement } from '../src/adapters/html/model.ts';
import { frag, h, list, load, show, sync, t, write } from './helpers/ydocs.ts';

/**
 * A doc with client ID `id` whose writes (origin 'local') and peers' transactions go through `Copies` and
 * `TextCopies`; `dropped` counts the elements, `droppedChars` the characters each drop deleted.
 */
function deduping(id: number): { doc: Y.Doc; dropped: number[]; droppedChars: number[]; texts: TextCopies } {
  const doc = new Y.Doc();
  doc.clientID = id;
  const copies = new Copies(() => doc.clientID);
  const texts = new TextCopies(() => doc.clientID);
  const dropped: number[] = [];
  const droppedChars: number[] = [];
  frag(doc).observeDeep((_events, tr) => {
    if (tr.origin === 'local') {
      copies.noteWrite(tr);
      texts.noteWrite(tr);
    } else if (!tr.local) {
      copies.noteRemote(tr);
      texts.noteRemote(tr, () => updateDeleteSet(tr));
    } else return;
    const pairs = copies.pairs();
    if (pairs.length > 0) doc.transact(() => dropped.push(dropCopies(pairs)), 'copies');
    const chars = texts.drops(doc);
    if (chars.length > 0) doc.transact(() => droppedChars.push(dropChars(doc, chars)), 'copies');
  });
  return { doc, dropped, droppedChars, texts };
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
    assert.deepEqual([...bob.dropped, ...bob.droppedChars, ...ann.dropped, ...ann.droppedChars], []);
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

describe('concurrent copies of moved text (characters two concurrent splits both moved)', () => {
  const p = (text: string) => h('p', {}, t(text));
  const li = (text: string) => h('li', {}, t(text));
  const base = normalizeDocument([p('one two three four five'), p('end')]);
  // Ann pastes a list after "two": the rest of the line goes into its second item.
  const annPaste = normalizeDocument([p('one two'), h('ul', {}, li('PASTE'), li('three four five')), p('end')]);
  // Bob begins a list before "four": the rest of the line goes into its item.
  const bobList = normalizeDocument([p('one two three'), h('ul', {}, li('four five')), p('end')]);

  /** Ann writes `annBlocks`, Bob `bobBlocks`, each unseen by the other; Bob then writes `bobAfter` if given; they sync twice. */
  function splitRace(annId: number, bobId: number, annBlocks: MElement[], bobBlocks: MElement[], bobAfter?: MElement[]) {
    const both = pair(base, annId, bobId);
    write(both.ann.doc, annBlocks);
    write(both.bob.doc, bobBlocks);
    if (bobAfter) write(both.bob.doc, bobAfter);
    sync(both.ann.doc, both.bob.doc);
    sync(both.ann.doc, both.bob.doc);
    assert.equal(show(both.bob.doc), show(both.ann.doc));
    return both;
  }

  it('without the rule, "four five" is there twice (the case this is for)', () => {
    const ann = new Y.Doc();
    const bob = new Y.Doc();
    load(ann, base);
    sync(ann, bob);
    write(ann, annPaste);
    write(bob, bobList);
    sync(ann, bob);
    assert.equal(count(show(ann), 'four five'), 2, show(ann));
  });

  for (const [annId, bobId] of [
    [1, 2],
    [2, 1],
  ] as const) {
    it(`the characters both moved stay in the copy farther from where they came from, so the text reads in order (Ann ${annId}, Bob ${bobId})`, () => {
      const { ann, bob } = splitRace(annId, bobId, annPaste, bobList);
      // Yjs puts the two new lists in client ID order: the farther copy is Bob's when Ann's list comes first (his
      // characters stay, hers go: three parts in order), Ann's when his comes first (his go, with his emptied list).
      const expected = annId < bobId ? '<p>one two</p><ul><li>PASTE</li><li>three&nbsp;</li></ul><ul><li>four five</li></ul><p>end</p>' : '<p>one two</p><ul><li>PASTE</li><li>three four five</li></ul><p>end</p>';
      assert.equal(show(ann.doc), expected);
      // Bob received Ann's write first, with its deletions, and acted; Ann then saw her copy's characters gone already.
      assert.deepEqual(bob.droppedChars, ['four five'.length], 'Bob deleted one copy of "four five"');
      assert.deepEqual(ann.droppedChars, [], 'Ann deleted nothing');
    });
  }

  /**
   * Ann's and Bob's concurrent writes relayed through a server document as the Wave server does (each update as the
   * server's document emitted it), `first` reaching it first; then the drops travel the same way.
   */
  function relayed(annId: number, bobId: number, first: 'ann' | 'bob') {
    const both = pair(base, annId, bobId);
    const server = new Y.Doc();
    sync(both.ann.doc, server);
    const updates: Uint8Array[] = [];
    server.on('update', (update: Uint8Array) => updates.push(update));
    const fromAnn = encodeWrite(both.ann.doc, annPaste);
    const annF = charOf(both.ann.doc, annId, 'four five');
    const fromBob = encodeWrite(both.bob.doc, bobList);
    for (const u of first === 'ann' ? [fromAnn, fromBob] : [fromBob, fromAnn]) Y.applyUpdate(server, u);
    const [relayedFirst, relayedSecond] = updates;
    // Each receives the other's write as the server relayed it.
    const [toAnn, toBob] = first === 'ann' ? [relayedSecond!, relayedFirst!] : [relayedFirst!, relayedSecond!];
    applyRemoteUpdate(both.ann.doc, toAnn, 'remote');
    applyRemoteUpdate(both.bob.doc, toBob, 'remote');
    sync(both.ann.doc, both.bob.doc);
    sync(both.ann.doc, both.bob.doc);
    assert.equal(show(both.bob.doc), show(both.ann.doc));
    return { ...both, annF };
  }

  /** The ID of the first character of `str` in an item of `client` (live or deleted) that holds it; null when none. */
  function charOf(doc: Y.Doc, client: number, str: string): Y.ID | null {
    for (const s of doc.store.clients.get(client) ?? []) {
      const at = s instanceof Y.Item && s.content instanceof Y.ContentString ? s.content.str.indexOf(str) : -1;
      if (at >= 0) return Y.createID(client, s.id.clock + at);
    }
    return null;
  }

  /** `blocks` written as a local write of `doc`, and that write's update. */
  function encodeWrite(doc: Y.Doc, blocks: MElement[]): Uint8Array {
    const sv = Y.encodeStateVector(doc);
    write(doc, blocks);
    return Y.encodeStateAsUpdate(doc, sv);
  }

  for (const first of ['ann', 'bob'] as const) {
    it(`through the server, whichever write reaches it first, the user who sees both deletions acts, once (${first} first)`, () => {
      const { ann, bob, annF } = relayed(1, 2, first);
      assert.equal(show(ann.doc), '<p>one two</p><ul><li>PASTE</li><li>three&nbsp;</li></ul><ul><li>four five</li></ul><p>end</p>');
      // The write that reached the server second is relayed without the deletions the first had made already.
      const acted = first === 'ann' ? bob : ann;
      const other = first === 'ann' ? ann : bob;
      assert.deepEqual(acted.droppedChars, ['four five'.length]);
      assert.deepEqual(other.droppedChars, []);
      // Ann's copy went (Bob's list is the farther). Her caret at its "f" goes to the "f" that stays, also when Bob
      // deleted it (Ann first): the update relayed to her did not show he had deleted the same characters.
      assert.ok(annF, "Ann's copy of \"four five\" is among her items");
      const place = ann.texts.keptPlace(ann.doc, annF);
      assert.equal(place && `${place.text.toString()}@${place.index}`, 'four five@0');
    });
  }

  it('when both see both deletions at once (a reconnection), both decide alike: the text is there once, whole', () => {
    const both = pair(base, 1, 2);
    const fromAnn = encodeWrite(both.ann.doc, annPaste);
    const fromBob = encodeWrite(both.bob.doc, bobList);
    applyRemoteUpdate(both.ann.doc, fromBob, 'remote');
    applyRemoteUpdate(both.bob.doc, fromAnn, 'remote');
    assert.deepEqual([...both.ann.droppedChars, ...both.bob.droppedChars], ['four five'.length, 'four five'.length]);
    sync(both.ann.doc, both.bob.doc);
    sync(both.ann.doc, both.bob.doc);
    assert.equal(show(both.ann.doc), '<p>one two</p><ul><li>PASTE</li><li>three&nbsp;</li></ul><ul><li>four five</li></ul><p>end</p>');
    assert.equal(show(both.bob.doc), show(both.ann.doc));
  });

  it('what a user typed into their copy after the split stays, with no character twice', () => {
    const bobTyped = normalizeDocument([p('one two three'), h('ul', {}, li('four five!')), p('end')]);
    const { ann } = splitRace(1, 2, annPaste, bobList, bobTyped);
    assert.equal(show(ann.doc), '<p>one two</p><ul><li>PASTE</li><li>three&nbsp;</li></ul><ul><li>four five!</li></ul><p>end</p>');
  });

  it('two Enters in the second half of one paragraph leave three paragraphs in order (each moved its tail)', () => {
    const both = pair(normalizeDocument([p('the first words of it and then more, the tail of it')]), 1, 2);
    write(both.ann.doc, normalizeDocument([p('the first words of it and then more,'), p('the tail of it')]));
    write(both.bob.doc, normalizeDocument([p('the first words of it and then more, the tail'), p('of it')]));
    sync(both.ann.doc, both.bob.doc);
    sync(both.ann.doc, both.bob.doc);
    assert.equal(show(both.ann.doc), '<p>the first words of it and then more,</p><p>the tail&nbsp;</p><p>of it</p>');
    assert.equal(show(both.bob.doc), show(both.ann.doc));
  });

  it('a copy the lower client has since deleted leaves the other copy alone (the text stays once)', () => {
    const both = pair(base, 1, 2);
    write(both.ann.doc, annPaste);
    write(both.ann.doc, normalizeDocument([p('one two'), h('ul', {}, li('PASTE'), li('three ')), p('end')]));
    write(both.bob.doc, bobList);
    sync(both.ann.doc, both.bob.doc);
    sync(both.ann.doc, both.bob.doc);
    assert.equal(show(both.bob.doc), show(both.ann.doc));
    assert.equal(count(show(both.ann.doc), 'four five'), 1, show(both.ann.doc));
    assert.deepEqual(both.bob.droppedChars, []);
  });

  it('splits one after the other are not concurrent: nothing is dropped', () => {
    const { ann, bob } = pair(base);
    write(bob.doc, bobList);
    sync(ann.doc, bob.doc);
    write(ann.doc, normalizeDocument([p('one two'), h('ul', {}, li('PASTE'), li('three')), h('ul', {}, li('four five')), p('end')]));
    sync(ann.doc, bob.doc);
    assert.equal(show(ann.doc), '<p>one two</p><ul><li>PASTE</li><li>three</li></ul><ul><li>four five</li></ul><p>end</p>');
    assert.equal(show(bob.doc), show(ann.doc));
    assert.deepEqual([...ann.droppedChars, ...bob.droppedChars], []);
  });

  it('fewer than four characters are a copy only when they are all that was deleted there: a retyped short word is not', () => {
    // Both delete "two three" and write "two" into a new paragraph: part of what they deleted, too short to be a move.
    const mk = () => normalizeDocument([p('one four five'), p('two'), p('end')]);
    const retyped = splitRace(1, 2, mk(), mk());
    assert.equal(count(show(retyped.ann.doc), '<p>two</p>'), 2, show(retyped.ann.doc));
    assert.deepEqual([...retyped.ann.droppedChars, ...retyped.bob.droppedChars], []);
    // Both cut "two" (between spaces) and paste it into a new paragraph: that is a move, kept once.
    const cut = () => normalizeDocument([p('one  three four five'), p('two'), p('end')]);
    const moved = splitRace(1, 2, cut(), cut());
    assert.equal(count(show(moved.ann.doc), '<p>two</p>'), 1, show(moved.ann.doc));
    assert.deepEqual(moved.bob.droppedChars, [3]);
  });
});

describe("an undo of a move whose copy a peer has moved on since (Yjs's undo would restore the text a second time)", () => {
  const p = (text: string) => h('p', {}, t(text));
  const li = (text: string) => h('li', {}, t(text));
  const base = normalizeDocument([p('alpha bravo charlie delta echo'), p('end')]);
  // Bob begins a list before "charlie": the rest of the line moves into its item (deleted in the paragraph, copied).
  const bobList = normalizeDocument([p('alpha bravo'), h('ul', {}, li('charlie delta echo')), p('end')]);
  // Cid, having seen it, presses Enter after "charlie": his write moves "charlie" on into a new item before.
  const cidSplit = normalizeDocument([p('alpha bravo'), h('ul', {}, li('charlie'), li('delta echo')), p('end')]);
  const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'end'];

  /** Bob (client 2, his writes undoable) and Cid (3) on `base`: Bob's list, then Cid's `cidBlocks`, then Bob's undo. */
  function undoAfter(cidBlocks: MElement[], withRule: boolean): { bob: Y.Doc; drops: number } {
    const bob = deduping(2);
    const cid = deduping(3);
    load(bob.doc, base);
    sync(bob.doc, cid.doc);
    const undo = new LocalUndo(bob.doc);
    undo.track('local');
    write(bob.doc, bobList);
    sync(bob.doc, cid.doc);
    write(cid.doc, cidBlocks);
    sync(bob.doc, cid.doc);
    const step = undo.manager.undoStack[undo.manager.undoStack.length - 1]!;
    assert.ok(undo.undo(), 'Bob had a step to undo');
    const drops = bob.texts.restoredMovedOn(bob.doc, step.deletions);
    if (withRule) bob.doc.transact(() => dropChars(bob.doc, drops), 'copies');
    sync(bob.doc, cid.doc);
    assert.equal(show(cid.doc), show(bob.doc));
    return { bob: bob.doc, drops: drops.length };
  }

  it('without the rule, the word Cid moved on is there twice (the case this is for)', () => {
    const html = show(undoAfter(cidSplit, false).bob);
    assert.equal(count(html, 'charlie'), 2, html);
  });

  it('the restored characters the peer moved on are deleted again: every word once, the moved one where Cid put it', () => {
    const { bob, drops } = undoAfter(cidSplit, true);
    const html = show(bob);
    for (const w of words) assert.equal(count(html, w), 1, `${w}: ${html}`);
    assert.match(html, /<li>charlie<\/li>/, html);
    assert.equal(drops, 'charlie'.length, html);
  });

  it('a copy the peer deleted without writing it again is restored by the undo as usual', () => {
    const { bob, drops } = undoAfter(normalizeDocument([p('alpha bravo'), h('ul', {}, li('delta echo')), p('end')]), true);
    assert.equal(drops, 0);
    assert.match(show(bob), /<p>alpha bravo charlie delta echo<\/p>/);
  });
});
