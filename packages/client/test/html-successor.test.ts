// Typing that a peer's restructuring write deleted along with its node is put back by its author, in the node that
// received the text (DOM-free: two Y.Docs, updates exchanged by hand, the binding's rescue step run by an observer).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as Y from 'yjs';
import { normalizeDocument, type RawNode } from '../src/adapters/html/normalize.ts';
import { toHtml, type MElement } from '../src/adapters/html/model.ts';
import { documentOfY, syncChildren } from '../src/adapters/html/ydoc.ts';
import { Removal } from '../src/adapters/html/successor.ts';
import { frag, h, load, send, show, sync, t, write, list } from './helpers/ydocs.ts';

/**
 * A doc whose remote transactions run the binding's rescue step. `rescued` collects how many units each rescue put back.
 * `recent` tells which of this doc's own items its peers may not have seen yet (the binding's `ownRecent`).
 */
function rescuing(doc = new Y.Doc(), recent?: (id: Y.ID) => boolean): { doc: Y.Doc; rescued: number[] } {
  const rescued: number[] = [];
  frag(doc).observeDeep((events, tr) => {
    if (tr.local) return;
    const removal = Removal.of(events, tr, doc.clientID, recent);
    if (removal?.lostAny) doc.transact(() => rescued.push(removal.rescue()), 'rescue');
  });
  return { doc, rescued };
}

describe('typing into a node a peer re-created', () => {
  it('a list item indented by a peer keeps the characters typed into it meanwhile', () => {
    const ann = new Y.Doc();
    const bob = rescuing();
    load(ann, list([t('first')], [t('hello wor')]));
    sync(ann, bob.doc);
    // Ann indents the second item (TinyMCE's Tab): Yjs has no move, so its text is deleted and re-inserted nested.
    write(ann, list([t('first'), h('ul', {}, h('li', {}, t('hello wor')))]));
    write(bob.doc, list([t('first')], [t('hello world')]));
    sync(ann, bob.doc);
    assert.equal(show(bob.doc), '<ul><li>first<ul><li>hello world</li></ul></li></ul>');
    assert.deepEqual(bob.rescued, [2]);
    sync(ann, bob.doc);
    assert.equal(show(ann), show(bob.doc), 'the rescue reaches the peer');
  });

  it('a merge that deleted the text a collaborator was typing in keeps the word (the session-7 fuzz case without a caret hint)', () => {
    const ann = new Y.Doc();
    const bob = rescuing();
    const item = (...children: RawNode[]) => normalizeDocument([h('ul', {}, h('li', {}, ...children))]);
    load(ann, item(t('ab cdef '), h('ul', {}, h('li', {}, t('x'))), t('gh ijklmn')));
    sync(ann, bob.doc);
    write(bob.doc, item(t('Bob ab cdef '), h('ul', {}, h('li', {}, t('x'))), t('gh ijklmn')));
    write(ann, item(t('ab ijklmn')));
    sync(ann, bob.doc);
    sync(ann, bob.doc);
    assert.equal(show(bob.doc), '<ul><li>Bob ab ijklmn</li></ul>');
    assert.equal(show(ann), show(bob.doc));
  });

  it('keeps the formatting of the characters it puts back', () => {
    const ann = new Y.Doc();
    const bob = rescuing();
    load(ann, list([t('first')], [t('hello wor')]));
    sync(ann, bob.doc);
    write(ann, list([t('first'), h('ul', {}, h('li', {}, t('hello wor')))]));
    write(bob.doc, list([t('first')], [t('hello wor'), h('strong', {}, t('ld'))]));
    sync(ann, bob.doc);
    assert.equal(show(bob.doc), '<ul><li>first<ul><li>hello wor<strong>ld</strong></li></ul></li></ul>');
  });

  it('puts back nothing the peer had already seen: no text twice', () => {
    const ann = new Y.Doc();
    const bob = rescuing();
    load(ann, list([t('first')], [t('hello ')]));
    sync(ann, bob.doc);
    write(bob.doc, list([t('first')], [t('hello ann')]));
    sync(ann, bob.doc);
    // Ann saw "ann" but not the "1" typed after it.
    write(bob.doc, list([t('first')], [t('hello ann1')]));
    write(ann, list([t('first'), h('ul', {}, h('li', {}, t('hello ann')))]));
    sync(ann, bob.doc);
    sync(ann, bob.doc);
    assert.equal(show(bob.doc), '<ul><li>first<ul><li>hello ann1</li></ul></li></ul>');
    assert.equal(show(ann), show(bob.doc));
  });

  it('puts back nothing the peer moved into another node of the same write: a split text is not one receiver short (the TinyMCE fuzz: "cid201q" twice)', () => {
    // Bob's write turns the paragraph into a list, its two parts into two items: the text is deleted and each part
    // copied. Cid's "cid201q " is in the second item, not in the first (which shares more with the old text).
    const bob = new Y.Doc();
    const cid = rescuing();
    load(bob, normalizeDocument([h('p', {}, t('bob202q  '))]));
    sync(bob, cid.doc);
    write(cid.doc, normalizeDocument([h('p', {}, t('bob202q  cid201q '))]));
    sync(bob, cid.doc);
    write(bob, normalizeDocument([h('ul', {}, h('li', {}, t('bob202q  ')), h('li', {}, t('cid201q ')))]));
    sync(bob, cid.doc);
    sync(bob, cid.doc);
    assert.equal(show(cid.doc), '<ul><li>bob202q &nbsp;</li><li>cid201q&nbsp;</li></ul>');
    assert.equal(show(bob), show(cid.doc));
    assert.equal(cid.rescued.reduce((a, b) => a + b, 0), 0, 'nothing put back');
  });

  it("puts typing back into the copy of this user's own text (the TinyMCE fuzz: 'bob120q bob121q' pasted before 'bob75q' was lost)", () => {
    // Every character of the item is Bob's: the peer saw "bob75q" and copied it, not what Bob pasted meanwhile.
    const bob = rescuing();
    const ann = new Y.Doc();
    load(bob.doc, list([t('first')], [t('bob75q')]));
    sync(bob.doc, ann);
    write(ann, list([t('first'), h('ul', {}, h('li', {}, t('bob75q')))]));
    write(bob.doc, list([t('first')], [t('bob120q bob121qbob75q')]));
    sync(ann, bob.doc);
    assert.equal(show(bob.doc), '<ul><li>first<ul><li>bob120q bob121qbob75q</li></ul></li></ul>');
    assert.deepEqual(bob.rescued, [15]);
    sync(ann, bob.doc);
    assert.equal(show(ann), show(bob.doc));
  });

  it("puts typing back into its own text's copy, not another copy sharing more of its words, and whole (the TinyMCE fuzz)", () => {
    // The document holds "bob54q" and "bob55q" twice; Ann's indent copies both items. Diffed against its own copy,
    // "bob54q bob68q bob69qbob55q" aligns "bob" of Bob's paste with "bob55q": the edit is slid to the word boundary.
    const ann = new Y.Doc();
    const bob = rescuing();
    const a = 'cid49q bob54q bob58q bob59q bob60qbob55q';
    load(ann, list([t('first')], [t(a)], [t('bob54q bob55q')]));
    sync(ann, bob.doc);
    write(ann, list([t('first'), h('ul', {}, h('li', {}, t(a)), h('li', {}, t('bob54q bob55q')))]));
    write(bob.doc, list([t('first')], [t(a)], [t('bob54q bob68q bob69qbob55q')]));
    sync(ann, bob.doc);
    assert.equal(show(bob.doc), `<ul><li>first<ul><li>${a}</li><li>bob54q bob68q bob69qbob55q</li></ul></li></ul>`);
    sync(ann, bob.doc);
    assert.equal(show(ann), show(bob.doc));
  });

  it('puts typing back after one kept character at the start of the text (the TinyMCE fuzz lost "ann164q")', () => {
    const ann = new Y.Doc();
    const bob = rescuing();
    load(ann, list([t('first')], [t(' cid177q cid178q')]));
    sync(ann, bob.doc);
    write(ann, list([t('first'), h('ul', {}, h('li', {}, t(' cid177q cid178q')))]));
    write(bob.doc, list([t('first')], [t('  bob164qcid177q cid178q')]));
    sync(ann, bob.doc);
    assert.equal(show(bob.doc), '<ul><li>first<ul><li>&nbsp; bob164qcid177q cid178q</li></ul></li></ul>');
    assert.deepEqual(bob.rescued, [8]);
  });

  it('stranded typing one character into the part a split moved goes with it, and the caret at its end follows (the TinyMCE fuzz)', () => {
    // Ann splits after "…here "; Bob typed "cid35q" after the second space, which moved with the (shorter) tail.
    const ann = new Y.Doc();
    const bob = new Y.Doc();
    load(ann, normalizeDocument([h('p', {}, t('long head text here  cid22q cid23q'))]));
    sync(ann, bob);
    const old = (frag(bob).get(0) as Y.XmlElement).get(0) as Y.XmlText;
    const located: Array<{ text: Y.XmlText; index: number } | null> = [];
    frag(bob).observeDeep((events, tr) => {
      if (tr.local) return;
      const removal = Removal.of(events, tr, bob.clientID);
      if (removal?.lostAny) bob.transact(() => removal.rescue(), 'rescue');
      located.push(removal?.locate(old, 27) ?? null);
    });
    write(ann, normalizeDocument([h('p', {}, t('long head text here ')), h('p', {}, t(' cid22q cid23q'))]));
    write(bob, normalizeDocument([h('p', {}, t('long head text here  cid35qcid22q cid23q'))]));
    send(ann, bob);
    assert.equal(show(bob), '<p>long head text here&nbsp;</p><p>&nbsp;cid35qcid22q cid23q</p>');
    const [at] = located;
    assert.ok(at, 'the caret after "cid35q" moves with it');
    assert.equal(at.text.toString().slice(0, at.index), ' cid35q');
  });

  it("does not put this user's unseen text into a copy that only shares a word's beginning with it", () => {
    const bob = rescuing();
    const ann = new Y.Doc();
    load(ann, list([t('first'), h('ul', {}, h('li', {}, t('bob1q x')))]));
    sync(ann, bob.doc);
    // Bob adds an item to the nested list while Ann outdents its item (the nested list is deleted, its text copied).
    write(bob.doc, list([t('first'), h('ul', {}, h('li', {}, t('bob1q x')), h('li', {}, t('bob10q bob19q')))]));
    write(ann, list([t('first')], [t('bob1q x')]));
    sync(ann, bob.doc);
    // Ann's copy is left as she wrote it. Bob's item, which no text received, goes back into a copy of the nested
    // list where that list was (recreate.ts).
    assert.equal(show(bob.doc), '<ul><li>first<ul><li>bob10q bob19q</li></ul></li><li>bob1q x</li></ul>');
    assert.deepEqual(bob.rescued, [13]);
  });

  it('brings back only what the peer had not seen when it deleted the block (no text received it), where the block was', () => {
    const ann = new Y.Doc();
    const bob = rescuing();
    load(ann, normalizeDocument([h('p', {}, t('keep this')), h('p', {}, t('drop me'))]));
    sync(ann, bob.doc);
    write(bob.doc, normalizeDocument([h('p', {}, t('keep this')), h('p', {}, t('drop me now'))]));
    write(ann, normalizeDocument([h('p', {}, t('keep this'))]));
    sync(ann, bob.doc);
    assert.equal(show(bob.doc), '<p>keep this</p><p>&nbsp;now</p>');
    assert.deepEqual(bob.rescued, [4]);
  });

  it('white space the same write put elsewhere does not make a receiver (the fuzz: an undo put "3" into "ann1q")', () => {
    const ann = new Y.Doc();
    const bob = rescuing();
    load(ann, normalizeDocument([h('p', {}, t('seed ann1q')), h('p', {}, t('xyz'))]));
    sync(ann, bob.doc);
    write(bob.doc, normalizeDocument([h('p', {}, t('seed ann1q')), h('p', {}, t('xyz ann31q'))]));
    sync(ann, bob.doc);
    // Ann has seen Bob's word; her write deletes its paragraph and puts a space before "ann1q".
    write(ann, normalizeDocument([h('p', {}, t('seed  ann1q'))]));
    sync(ann, bob.doc);
    assert.equal(show(bob.doc), '<p>seed &nbsp;ann1q</p>');
    assert.deepEqual(bob.rescued, [0]);
  });

  it('brings nothing back when the peer had seen the typing and replaced the document (forceSync)', () => {
    const ann = new Y.Doc();
    const bob = rescuing();
    load(ann, normalizeDocument([h('p', {}, t('draft one'))]));
    sync(ann, bob.doc);
    write(bob.doc, normalizeDocument([h('p', {}, t('draft one by bob'))]));
    sync(ann, bob.doc);
    ann.transact(() => {
      frag(ann).delete(0, frag(ann).length);
      load(ann, normalizeDocument([h('h2', {}, t('Restored')), h('p', {}, t('draft two by you'))]));
    });
    sync(ann, bob.doc);
    // The new text shares runs with Bob's ("draft ", " by "), but his "bob" sits where Ann wrote "you".
    assert.equal(show(bob.doc), '<h2>Restored</h2><p>draft two by you</p>');
    assert.deepEqual(bob.rescued, [0]);
  });

  it("a split that moves a paragraph's tail into a new one takes along what was typed in the tail meanwhile", () => {
    // Seen in the TinyMCE fuzz: Ann pasted paragraphs in the middle of one; the tail after her paste moved into a new
    // paragraph while Bob typed in it, and the keys Ann had not seen yet stayed behind in the first paragraph.
    const ann = new Y.Doc();
    const bob = rescuing();
    // The head is the longer part: Ann's write keeps the paragraph's node for it and moves the tail.
    const head = 'the head of this paragraph, the longer part';
    load(ann, normalizeDocument([h('p', {}, t(`${head} tail bo Bob`))]));
    sync(ann, bob.doc);
    write(ann, normalizeDocument([h('p', {}, t(head)), h('p', {}, t('pasted')), h('p', {}, t(' tail bo Bob'))]));
    write(bob.doc, normalizeDocument([h('p', {}, t(`${head} tail bob7q Bob`))]));
    sync(ann, bob.doc);
    sync(ann, bob.doc);
    assert.equal(show(bob.doc), `<p>${head}</p><p>pasted</p><p>&nbsp;tail bob7q Bob</p>`);
    assert.equal(show(ann), show(bob.doc));
  });

  it('puts stranded typing back whole when it starts like the text after it (the fuzz: "ann18q" before "ann8q")', () => {
    // TinyMCE fuzz, session 11: Bob typed "ann18q " in front of "ann8q" while Ann's paste after "ann8q" moved the
    // head of the paragraph into a new one. Diffed together with the text around it, "ann18q ann8q" against "ann8q"
    // aligned as "ann" + "18q ann" + "8q": "18q " went into the middle of "ann8q", "ann" stayed behind.
    const ann = new Y.Doc();
    const bob = rescuing();
    const tail = ' bob8q bob6q ann16q bob4q ann9q, the tail, the longer part';
    load(ann, normalizeDocument([h('p', {}, t(`cid9q ann8q${tail}`))]));
    sync(ann, bob.doc);
    write(ann, normalizeDocument([h('p', {}, t('cid9q ann8q')), h('p', {}, t('pasted')), h('p', {}, t(tail))]));
    write(bob.doc, normalizeDocument([h('p', {}, t(`cid9q ann18q ann8q${tail}`))]));
    sync(ann, bob.doc);
    sync(ann, bob.doc);
    assert.equal(show(bob.doc), `<p>cid9q ann18q ann8q</p><p>pasted</p><p>&nbsp;${tail.slice(1)}</p>`);
    assert.equal(show(ann), show(bob.doc));
  });

  it('puts stranded typing next to text a paste replaced into the part that moved', () => {
    // Ann selects "XYZ " and pastes paragraphs over it; the paragraph keeps its node for the longer head, "def" moves.
    // Bob, meanwhile, typed "bob1q " between "XYZ " and "def".
    const ann = new Y.Doc();
    const bob = rescuing();
    const head = 'the head of this paragraph, the longer part ';
    load(ann, normalizeDocument([h('p', {}, t(`${head}XYZ def`))]));
    sync(ann, bob.doc);
    write(ann, normalizeDocument([h('p', {}, t(head)), h('p', {}, t('pasted')), h('p', {}, t('def'))]));
    write(bob.doc, normalizeDocument([h('p', {}, t(`${head}XYZ bob1q def`))]));
    sync(ann, bob.doc);
    sync(ann, bob.doc);
    assert.equal(show(bob.doc), `<p>${head.trimEnd()}&nbsp;</p><p>pasted</p><p>bob1q def</p>`);
    assert.equal(show(ann), show(bob.doc));
  });

  it('puts stranded typing back after one kept character when the paste took a space before it (the Froala fuzz: "c" + "id41q")', () => {
    // Froala fuzz, session 15: Cid typed "id41q" after the "c" Ann had seen, while Ann's paste replaced one of three
    // spaces before "c" and moved the tail into a new paragraph. The diff kept "  " + (" " deleted) + "cann17q…": one
    // character of context right before the run, the rest beyond the deleted space. "id41q" stayed in the head.
    const ann = new Y.Doc();
    const cid = rescuing();
    const head = 'the head of this paragraph, the longer part cid38q';
    load(ann, normalizeDocument([h('p', {}, t(`${head}   cann17q ann14q`))]));
    sync(ann, cid.doc);
    write(ann, normalizeDocument([h('p', {}, t(head)), h('p', {}, t('pasted')), h('p', {}, t('  cann17q ann14q'))]));
    write(cid.doc, normalizeDocument([h('p', {}, t(`${head}   cid41qann17q ann14q`))]));
    sync(ann, cid.doc);
    sync(ann, cid.doc);
    assert.equal(show(cid.doc), `<p>${head}</p><p>pasted</p><p>&nbsp; cid41qann17q ann14q</p>`);
    assert.equal(show(ann), show(cid.doc));
  });

  it("leaves this user's own text before a split where it is (the fuzz: a split moved a whole head along)", () => {
    const ann = new Y.Doc();
    const bob = rescuing();
    load(ann, normalizeDocument([h('p', {}, t('x'))]));
    sync(ann, bob.doc);
    // Bob wrote the paragraph; Ann, who has seen all of it, splits its last word off into a new paragraph.
    write(bob.doc, normalizeDocument([h('p', {}, t('bob141q bob175q bob142q bob143q'))]));
    sync(ann, bob.doc);
    write(ann, normalizeDocument([h('p', {}, t('bob141q bob175q bob142q ')), h('p', {}, t('bob143q'))]));
    sync(ann, bob.doc);
    assert.equal(show(bob.doc), '<p>bob141q bob175q bob142q&nbsp;</p><p>bob143q</p>');
  });

  it("leaves this user's text after a split where it is when the peer moved the part before it (CI, presence test)", () => {
    // Ada wrote the paragraph; Bob typed a line at its start and pressed Enter. His write kept the paragraph's node for
    // the longer part (Ada's text) and moved his own line into a new paragraph: Ada's text is not stranded.
    const bob = new Y.Doc();
    const ada = rescuing();
    load(ada.doc, normalizeDocument([h('p', {}, t('r1z lorem ipsum dolor sit amet'))]));
    sync(bob, ada.doc);
    write(bob, normalizeDocument([h('p', {}, t('Bob writes abover1z lorem ipsum dolor sit amet'))]));
    sync(bob, ada.doc);
    write(bob, normalizeDocument([h('p', {}, t('Bob writes above')), h('p', {}, t('r1z lorem ipsum dolor sit amet'))]));
    sync(bob, ada.doc);
    assert.equal(show(ada.doc), '<p>Bob writes above</p><p>r1z lorem ipsum dolor sit amet</p>');
    assert.deepEqual(ada.rescued, []);
  });

  it('leaves typing where it is when the text around it was deleted, not moved', () => {
    const ann = new Y.Doc();
    const bob = rescuing();
    load(ann, normalizeDocument([h('p', {}, t('keep this drop that keep'))]));
    sync(ann, bob.doc);
    write(ann, normalizeDocument([h('p', {}, t('keep this  keep'))]));
    write(bob.doc, normalizeDocument([h('p', {}, t('keep this dropXY that keep'))]));
    sync(ann, bob.doc);
    sync(ann, bob.doc);
    assert.equal(show(bob.doc), '<p>keep this XY keep</p>');
    assert.deepEqual(bob.rescued, [0]);
  });

  it("typing just written after a word a peer's Enter moved into a new paragraph goes with the word (the Froala fuzz: \"ann11\" moved, \"q \" stayed)", () => {
    // `recent` tells which of this user's characters the peer may not have seen yet (the binding: written in the last
    // 1.5 s). An edge run goes along only when all of it is that new.
    const run = (knowsRecent: boolean) => {
      const ann = new Y.Doc();
      const bob = new Y.Doc();
      let typedFrom = Infinity;
      const { rescued } = rescuing(ann, (id) => knowsRecent && id.client === ann.clientID && id.clock >= typedFrom);
      load(ann, normalizeDocument([h('p', {}, t('seed1w0 seed1w1  ann11'))]));
      sync(ann, bob);
      typedFrom = Y.getState(ann.store, ann.clientID);
      // Bob presses Enter before "ann11" while Ann types its last letter and a space.
      write(bob, normalizeDocument([h('p', {}, t('seed1w0 seed1w1  ')), h('p', {}, t('ann11'))]));
      write(ann, normalizeDocument([h('p', {}, t('seed1w0 seed1w1  ann11q '))]));
      sync(ann, bob);
      sync(ann, bob);
      return { html: show(ann), peer: show(bob), rescued };
    };
    const old = run(false);
    assert.equal(old.html, '<p>seed1w0 seed1w1 &nbsp;q&nbsp;</p><p>ann11</p>', 'not known to be new: "q " stays (it could be older text)');
    const fresh = run(true);
    assert.equal(fresh.html, '<p>seed1w0 seed1w1 &nbsp;</p><p>ann11q&nbsp;</p>');
    assert.equal(fresh.peer, fresh.html, 'the rescue reaches the peer');
    assert.deepEqual(fresh.rescued, [2]);
  });

  it("typing just written after two letters a peer's Enter moved into a new paragraph goes with them (the TinyMCE fuzz: \"ci\" moved, \"d8q\" stayed)", () => {
    const cid = new Y.Doc();
    const ann = new Y.Doc();
    let typedFrom = Infinity;
    const { rescued } = rescuing(cid, (id) => id.client === cid.clientID && id.clock >= typedFrom);
    load(cid, normalizeDocument([h('p', {}, t('seed0w0 ann3q ci'))]));
    sync(cid, ann);
    typedFrom = Y.getState(cid.store, cid.clientID);
    // Ann presses Enter before the "ci" Cid has just typed, while he types the rest of his word.
    write(ann, normalizeDocument([h('p', {}, t('seed0w0 ann3q ')), h('p', {}, t('ci'))]));
    write(cid, normalizeDocument([h('p', {}, t('seed0w0 ann3q cid8q'))]));
    sync(cid, ann);
    sync(cid, ann);
    assert.equal(show(cid), '<p>seed0w0 ann3q&nbsp;</p><p>cid8q</p>');
    assert.equal(show(ann), show(cid), 'the rescue reaches the peer');
    assert.deepEqual(rescued, [3]);
  });

  it("typing just written between the two characters a peer's Enter moved goes with them (the TinyMCE fuzz, CI's seed, session 21: \"c\" and a space moved, \"id21q\" stayed)", () => {
    const cid = new Y.Doc();
    const ann = new Y.Doc();
    let typedFrom = Infinity;
    const { rescued } = rescuing(cid, (id) => id.client === cid.clientID && id.clock >= typedFrom);
    load(cid, normalizeDocument([h('p', {}, t('ann6q cid14q c '))]));
    sync(cid, ann);
    typedFrom = Y.getState(cid.store, cid.clientID);
    // Ann presses Enter before the "c" Cid has just typed (and the space after it), while he types the rest of his word.
    write(ann, normalizeDocument([h('p', {}, t('ann6q cid14q ')), h('p', {}, t('c '))]));
    write(cid, normalizeDocument([h('p', {}, t('ann6q cid14q cid21q '))]));
    sync(cid, ann);
    sync(cid, ann);
    assert.equal(show(cid), '<p>ann6q cid14q&nbsp;</p><p>cid21q&nbsp;</p>');
    assert.equal(show(ann), show(cid), 'the rescue reaches the peer');
    assert.deepEqual(rescued, [5]);
  });

  it("leaves new typing that only met the moved text at the same place (two users typing a line at a paragraph's start, then Enter)", () => {
    // Both client orders: Yjs orders two insertions at one place by client ID, so Bob's line lands before or after Ann's.
    for (const [annId, bobId] of [[1, 2], [2, 1]] as const) {
      const bob = new Y.Doc();
      const ann = new Y.Doc();
      ann.clientID = annId;
      bob.clientID = bobId;
      let typedFrom = Infinity;
      rescuing(bob, (id) => id.client === bob.clientID && id.clock >= typedFrom);
      load(ann, normalizeDocument([h('p', {}, t('target lorem ipsum'))]));
      sync(ann, bob);
      typedFrom = Y.getState(bob.store, bob.clientID);
      // Both type a line at the start; Bob sees Ann's, she has not seen his yet.
      write(bob, normalizeDocument([h('p', {}, t('bob too target lorem ipsum'))]));
      write(ann, normalizeDocument([h('p', {}, t('ann writes abovetarget lorem ipsum'))]));
      send(ann, bob);
      // Ann presses Enter: her line moves into a new paragraph, the node stays with the tail, where Bob's caret is
      // (binding `heldIn`).
      const old = frag(ann).get(0);
      const split = normalizeDocument([h('p', {}, t('ann writes above')), h('p', {}, t('target lorem ipsum'))]);
      ann.transact(() => syncChildren(frag(ann), 'root', split, { heldIn: (y) => (y === old ? [20] : []) }), 'local');
      sync(ann, bob);
      sync(ann, bob);
      assert.deepEqual(documentOfY(frag(bob)).map((b) => toHtml([b])), ['<p>ann writes above</p>', '<p>bob too target lorem ipsum</p>'], `clients ${annId}, ${bobId}`);
    }
  });

  it("puts typing back whole next to the text that went with it, not into a like word the receiver already held (the TinyMCE fuzz: \"ann2q\" became \"ann12q\")", () => {
    const ann = rescuing();
    const bob = new Y.Doc();
    load(bob, normalizeDocument([h('p', {}, t('seed0w0 ann2q ann4q cid11q')), h('p', {}, t('seed0w1 cid5q'))]));
    sync(bob, ann.doc);
    // Ann types a word at the start of the second paragraph while Bob merges that paragraph into the first.
    write(ann.doc, normalizeDocument([h('p', {}, t('seed0w0 ann2q ann4q cid11q')), h('p', {}, t('ann12q seed0w1 cid5q'))]));
    write(bob, normalizeDocument([h('p', {}, t('seed0w0 ann2q ann4q cid11q seed0w1 cid5q'))]));
    sync(bob, ann.doc);
    // Its space lines up with the one Bob's merge put before "seed0w1": the word goes in right before that.
    assert.equal(show(ann.doc), '<p>seed0w0 ann2q ann4q cid11qann12q seed0w1 cid5q</p>');
    assert.deepEqual(ann.rescued, [6]);
  });

  it("maps an offset of the deleted text into the text that received it (the caret's new place)", () => {
    const ann = new Y.Doc();
    const bob = new Y.Doc();
    load(ann, list([t('first')], [t('hello world')]));
    sync(ann, bob);
    const old = ((frag(bob).get(0) as Y.XmlElement).get(1) as Y.XmlElement).get(0) as Y.XmlText;
    let located: { text: Y.XmlText; index: number } | null = null;
    frag(bob).observeDeep((events, tr) => {
      located = Removal.of(events, tr, -1)?.locate(old, 6) ?? null;
    });
    write(ann, list([t('first'), h('ul', {}, h('li', {}, t('hello world')))]));
    send(ann, bob);
    assert.ok(located, 'located');
    const { text, index } = located as { text: Y.XmlText; index: number };
    assert.notEqual(text, old);
    assert.equal(text.toString().slice(index), 'world');
  });
  it('maps an offset in text a split moved away into the new paragraph', () => {
    const ann = new Y.Doc();
    const bob = new Y.Doc();
    load(ann, normalizeDocument([h('p', {}, t('head text|tail text'))]));
    sync(ann, bob);
    const old = frag(bob).get(0) as Y.XmlElement;
    const text = old.get(0) as Y.XmlText;
    const located: Array<{ text: Y.XmlText; index: number } | null> = [];
    frag(bob).observeDeep((events, tr) => {
      const removal = Removal.of(events, tr, -1);
      located.push(removal?.locate(text, 14) ?? null, removal?.locate(text, 4) ?? null);
    });
    write(ann, normalizeDocument([h('p', {}, t('head text|')), h('p', {}, t('tail text'))]));
    send(ann, bob);
    const [inTail, inHead] = located;
    assert.ok(inTail, 'the caret in the tail moves');
    assert.equal(inTail.text.toString().slice(inTail.index), ' text');
    assert.equal(inHead, null, 'the caret in the head stays');
  });
});

describe('a text a collaborator types in, emptied by a write', () => {
  // The TinyMCE fuzz, session 16 (seed 1789580499): Cid's Enter (TinyMCE's own, which drops the text after the caret
  // in a list item followed by a nested list) emptied the item's line while Bob typed "bob154q" at its end. The
  // write deleted the line's text node, and Bob's keys, concurrent with it, went with the node.
  const tail = t(' bob114q bob141q cid128q');
  const before = () => list([t('first')], [h('strong', {}, t(' ann68q ')), h('ul', {}, h('li', {}, t('nested'))), tail]);
  const emptied = () => list([t('first')], [h('strong', {}, t(' '))], [h('ul', {}, h('li', {}, t('nested'))), tail]);
  for (const held of [true, false]) {
    it(held ? 'is kept, emptied, when their caret is in it: their concurrent typing stays' : 'is deleted when no caret is in it (the case above, without the caret)', () => {
      const ann = new Y.Doc();
      const bob = new Y.Doc();
      load(ann, before());
      sync(ann, bob);
      write(bob, list([t('first')], [h('strong', {}, t(' ann68q bob154q')), h('ul', {}, h('li', {}, t('nested'))), tail]));
      const line = ((frag(ann).get(0) as Y.XmlElement).get(1) as Y.XmlElement).get(0);
      ann.transact(() => syncChildren(frag(ann), 'root', emptied(), { heldIn: (y) => (held && y === line ? [8] : []) }), 'local');
      sync(ann, bob);
      assert.equal(show(ann), show(bob));
      assert.equal(show(ann).includes('bob154q'), held, show(ann));
      assert.ok(!show(ann).includes('ann68q'), 'what the write removed stays removed');
    });
  }
});

describe('a block a peer deleted without having seen what this user had just put into it', () => {
  const li = (s: string) => (s ? h('li', {}, t(s)) : h('li', {}));
  const ul = (...items: string[]) => h('ul', {}, ...items.map(li));

  /**
   * The TinyMCE fuzz (seed 1789580499, session 18): Ann's undo put "bob6q cid19q cid21q" back into a list item while
   * Bob, who saw the item empty, removed it (Backspace). `relayed`: Bob's update is encoded after Ann's undo reached
   * him (a whole-state update, as in a sync reply after a reconnection), its delete set holding her restored characters
   * as well. (A server relays a client's update as it was sent: wave-server `rooms/room.ts` `onDocUpdate`.)
   */
  const undoIntoRemovedItem = (relayed: boolean) => {
    const ann = new Y.Doc();
    const bob = new Y.Doc();
    // Every one of Ann's characters counts as just written: what decides is the delete set of Bob's update.
    const { rescued } = rescuing(ann, (id) => id.client === ann.clientID);
    load(ann, normalizeDocument([ul('a one', 'bob6q cid19q cid21q', 'end')]));
    sync(ann, bob);
    const undo = new Y.UndoManager(frag(ann), { trackedOrigins: new Set(['local']) });
    write(ann, normalizeDocument([ul('a one', '', 'end')]));
    sync(ann, bob);
    undo.undo();
    write(bob, normalizeDocument([ul('a one', 'end')]));
    if (relayed) send(ann, bob);
    sync(bob, ann);
    sync(bob, ann);
    return { html: show(ann), peer: show(bob), rescued };
  };

  it("goes back where the block was, in a copy of it: text an undo restored into a list item a peer removed (the TinyMCE fuzz: \"bob6q\", \"cid19q\", \"cid21q\")", () => {
    const { html, peer, rescued } = undoIntoRemovedItem(false);
    assert.equal(html, '<ul><li>a one</li><li>bob6q cid19q cid21q</li><li>end</li></ul>');
    assert.equal(peer, html, 'the copy reaches the peer');
    assert.deepEqual(rescued, [19]);
  });

  it('stays deleted when the update deleting the block deletes it as well: the peer may have seen it (a gap when the peer encoded its update after it received them, as in a sync reply)', () => {
    const { html, rescued } = undoIntoRemovedItem(true);
    assert.equal(html, '<ul><li>a one</li><li>end</li></ul>');
    assert.deepEqual(rescued, [0]);
  });

  it('stays deleted when the peer had seen it: a paragraph a peer deleted on purpose is not brought back', () => {
    const ann = new Y.Doc();
    const bob = new Y.Doc();
    let typedFrom = Infinity;
    const { rescued } = rescuing(ann, (id) => id.client === ann.clientID && id.clock >= typedFrom);
    load(ann, normalizeDocument([h('p', {}, t('keep')), h('p', {}, t('ann1q ann2q')), h('p', {}, t('end'))]));
    sync(ann, bob);
    typedFrom = Y.getState(ann.store, ann.clientID);
    write(bob, normalizeDocument([h('p', {}, t('keep')), h('p', {}, t('end'))]));
    sync(bob, ann);
    assert.equal(show(ann), '<p>keep</p><p>end</p>');
    assert.deepEqual(rescued, [0], 'looked at, and nothing put back');
  });

  it("stays deleted when the peer had seen it and its write's new text shares a few characters with it by chance (the TinyMCE fuzz, seed rescue-matched-by-chance: \"cid80q\" cut)", () => {
    const cid = rescuing();
    const ann = new Y.Doc();
    load(cid.doc, normalizeDocument([h('p', {}, t('ann70q')), h('p', {}, t('cid86q cid87q cid88q'))]));
    sync(cid.doc, ann);
    // Ann selects from the end of the first paragraph to the end of Cid's and pastes over it: his paragraph, all of
    // which she saw, is deleted, and her pasted text shares "q cid8" with it. It went nowhere: nothing comes back
    // (on the old code "cid86q " came back between her words, glued to "ann70q").
    write(ann, normalizeDocument([h('p', {}, t('ann70q cid80q bob3q'))]));
    sync(ann, cid.doc);
    assert.equal(show(cid.doc), '<p>ann70q cid80q bob3q</p>');
    assert.deepEqual(cid.rescued, [0], 'looked at, and nothing put back');
    sync(ann, cid.doc);
    assert.equal(show(ann), show(cid.doc));
  });

  it('keeps the elements around the text and their attributes, and the formatting of the characters, not the peer\'s other content', () => {
    const ann = new Y.Doc();
    const bob = new Y.Doc();
    let typedFrom = Infinity;
    const { rescued } = rescuing(ann, (id) => id.client === ann.clientID && id.clock >= typedFrom);
    const nested = (inner: RawNode[]) => normalizeDocument([h('p', {}, t('above')), h('ol', { start: '3' }, h('li', {}, t('old item'), h('ul', {}, h('li', {}, ...inner)))), h('p', {}, t('below'))]);
    load(ann, nested([t('x')]));
    sync(ann, bob);
    typedFrom = Y.getState(ann.store, ann.clientID);
    // Ann types a bold word into the nested item while Bob deletes the whole list.
    write(ann, nested([t('x '), h('strong', {}, t('ann7q'))]));
    write(bob, normalizeDocument([h('p', {}, t('above')), h('p', {}, t('below'))]));
    sync(bob, ann);
    sync(bob, ann);
    assert.equal(show(ann), '<p>above</p><ol start="3"><li><ul><li>&nbsp;<strong>ann7q</strong></li></ul></li></ol><p>below</p>');
    assert.equal(show(bob), show(ann));
    assert.deepEqual(rescued, [6]);
  });

  it("goes back in its place when the text alone was deleted from an element that stays (the TinyMCE fuzz: \"seed2w2\" pasted into a list item's line that a peer emptied)", () => {
    const ann = new Y.Doc();
    const bob = new Y.Doc();
    let typedFrom = Infinity;
    const { rescued } = rescuing(bob, (id) => id.client === bob.clientID && id.clock >= typedFrom);
    const item = (line: string) => list([t('first')], [...(line ? [t(line)] : []), h('ul', {}, h('li', {}, t('nested')))]);
    load(ann, item('old words'));
    sync(ann, bob);
    typedFrom = Y.getState(bob.store, bob.clientID);
    // Bob writes at the start of the line while Ann deletes the line's words: its text node goes, the item stays.
    write(bob, item('bob5q old words'));
    write(ann, item(''));
    sync(ann, bob);
    sync(ann, bob);
    assert.equal(show(bob), '<ul><li>first</li><li>bob5q&nbsp;<ul><li>nested</li></ul></li></ul>');
    assert.equal(show(ann), show(bob));
    assert.deepEqual(rescued, [6]);
  });

  it("goes back where it was when the peer's copy of the block only looks like it: a list pasted into an item a peer turned into a paragraph (the TinyMCE fuzz, CI's seed, session 21: \"cid138q\" … \"cid142q\")", () => {
    const ann = new Y.Doc();
    const cid = new Y.Doc();
    let typedFrom = Infinity;
    const { rescued } = rescuing(cid, (id) => id.client === cid.clientID && id.clock >= typedFrom);
    load(ann, normalizeDocument([ul('start cid116q cid107q')]));
    sync(ann, cid);
    typedFrom = Y.getState(cid.store, cid.clientID);
    // Cid pastes a list into the item; Ann, who never sees it, turns the item into a paragraph (deletes the list,
    // writes a copy of its text). The copy shares "q cid1" with Cid's first two pasted items, by chance only.
    const pasted = h('ul', {}, li('cid138q cid139q cid140q'), li('cid141q cid142q'), li('cid143q'));
    write(cid, normalizeDocument([h('ul', {}, h('li', {}, t('start'), pasted, t('cid116q cid107q')))]));
    write(ann, normalizeDocument([h('p', {}, t('start cid116q cid107q'))]));
    sync(ann, cid);
    sync(ann, cid);
    const html = show(cid);
    for (const word of ['start', 'cid116q', 'cid107q', 'cid138q', 'cid139q', 'cid140q', 'cid141q', 'cid142q', 'cid143q']) {
      assert.equal(html.split(word).length - 1, 1, `${word} once in ${html}`);
    }
    assert.equal(show(ann), html, 'the peer has the same');
    assert.ok(rescued.some((n) => n > 0), 'put back by a rescue');
  });

  it('goes into a paragraph where a whole table was, and is left deleted in a row a peer removed from a table that stays', () => {
    const table = (rows: string[][]) => h('table', {}, h('tbody', {}, ...rows.map((cells) => h('tr', {}, ...cells.map((c) => h('td', {}, t(c)))))));
    for (const [bobWrote, expected] of [
      [[h('p', {}, t('above'))], '<p>above</p><p>&nbsp;ann3q</p>'],
      [[h('p', {}, t('above')), table([['a1', 'a2']])], null],
    ] as const) {
      const ann = new Y.Doc();
      const bob = new Y.Doc();
      let typedFrom = Infinity;
      rescuing(ann, (id) => id.client === ann.clientID && id.clock >= typedFrom);
      load(ann, normalizeDocument([h('p', {}, t('above')), table([['a1', 'a2'], ['b1', 'b2']])]));
      sync(ann, bob);
      typedFrom = Y.getState(ann.store, ann.clientID);
      write(ann, normalizeDocument([h('p', {}, t('above')), table([['a1', 'a2'], ['b1 ann3q', 'b2']])]));
      write(bob, normalizeDocument([...bobWrote]));
      sync(bob, ann);
      sync(bob, ann);
      const before = show(bob);
      assert.equal(show(ann), show(bob));
      if (expected) assert.equal(show(ann), expected);
      else assert.ok(!show(ann).includes('ann3q') && show(ann) === before, show(ann));
    }
  });
});
