/**
 * `DocHolder` (rooms/doc-holder.ts): an idle doc is held in compact form and rebuilt on its next use without
 * emitting an update; joins are answered from the compact form as from the live doc; a reply that adds nothing is
 * recognised without a rebuild; a doc over the struct cap stays live. A stored row is held as it is until the doc
 * is built after the first sync.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as Y from 'yjs';
import { DocHolder } from '../src/rooms/doc-holder.js';

type Emitted = Array<{ update: Uint8Array; origin: unknown }>;

/** A holder whose `update` listener records what it gets; compacted on request only (`idleMs: 0`, no waiting). */
function holder(options: { idleMs?: number; maxStructs?: number; compacted?: () => void } = {}): { holder: DocHolder; emitted: Emitted } {
  const emitted: Emitted = [];
  const h = new DocHolder({
    idleMs: options.idleMs ?? 0,
    ...(options.maxStructs !== undefined ? { maxStructs: options.maxStructs } : {}),
    listener: (update, origin) => emitted.push({ update, origin }),
    ...(options.compacted ? { compacted: options.compacted } : {}),
  });
  return { holder: h, emitted };
}

/** Typing, a deletion and a formatted range from two clients: a delete set and several structs per client. */
function write(doc: Y.Doc): void {
  const text = doc.getText('text');
  text.insert(0, 'hello world, a document of a few words');
  text.delete(5, 6);
  text.format(0, 5, { bold: true });
  const other = new Y.Doc();
  Y.applyUpdate(other, Y.encodeStateAsUpdate(doc));
  other.getText('text').insert(3, 'XYZ');
  other.getText('text').delete(10, 4);
  Y.applyUpdate(doc, Y.encodeStateAsUpdate(other, Y.encodeStateVector(doc)));
  other.destroy();
}

function replica(update: Uint8Array, base?: Uint8Array): Y.Doc {
  const doc = new Y.Doc();
  if (base) Y.applyUpdate(doc, base);
  Y.applyUpdate(doc, update);
  return doc;
}

describe('DocHolder', () => {
  it('compacts once no transaction touched the doc for the idle time, on its timer', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    let compactions = 0;
    const { holder: h } = holder({ idleMs: 1_000, compacted: () => compactions++ });
    write(h.doc);
    t.mock.timers.tick(600);
    h.doc.getText('text').insert(0, 'again ');
    t.mock.timers.tick(600);
    assert.equal(h.compact, false, 'the transaction at 600 ms restarted the idle time');
    t.mock.timers.tick(400);
    assert.equal(h.compact, true);
    assert.equal(compactions, 1);
    h.doc.getText('text').insert(0, 'rebuilt ');
    t.mock.timers.tick(1_000);
    assert.equal(h.compact, true, 'compacted again after its rebuild');
    assert.equal(compactions, 2);
    h.destroy();
  });

  it('answers step1 and step2 from the compact form as from the live doc', () => {
    const { holder: h } = holder();
    write(h.doc);
    const base = Y.encodeStateAsUpdate(h.doc);
    const peer = replica(base);
    h.doc.getText('text').insert(0, 'later ');
    h.doc.getText('text').delete(12, 2);
    const liveVector = h.stateVector();
    const liveState = h.encodeState();
    const liveDiff = h.encodeState(Y.encodeStateVector(peer));
    const expected = h.doc.getText('text').toDelta() as unknown;

    assert.equal(h.compactIfIdle(), true);
    assert.equal(h.compact, true);
    assert.deepEqual(h.stateVector(), liveVector);
    assert.deepEqual(replica(h.encodeState()).getText('text').toDelta(), expected);
    assert.deepEqual(replica(liveState).getText('text').toDelta(), expected);
    const diff = h.encodeState(Y.encodeStateVector(peer));
    assert.deepEqual(replica(diff, base).getText('text').toDelta(), expected);
    assert.deepEqual(replica(liveDiff, base).getText('text').toDelta(), expected);
    assert.throws(() => h.encodeState(new Uint8Array([0xff, 0xff])));
    assert.equal(h.compact, true, 'answering joins does not rebuild');
    h.destroy();
  });

  it('rebuilds on the next use without emitting an update; the next change is emitted once', () => {
    const { holder: h, emitted } = holder();
    write(h.doc);
    const before = h.doc.getText('text').toDelta() as unknown;
    const count = emitted.length;
    assert.equal(h.compactIfIdle(), true);

    const doc = h.doc;
    assert.equal(h.compact, false);
    assert.deepEqual(doc.getText('text').toDelta(), before);
    assert.equal(emitted.length, count, 'the rebuild emitted nothing');
    assert.equal(h.doc, doc, 'the same live doc until the next compaction');

    const peer = replica(Y.encodeStateAsUpdate(doc));
    peer.getText('text').insert(0, '>');
    const update = Y.encodeStateAsUpdate(peer, Y.encodeStateVector(doc));
    assert.equal(h.compactIfIdle(), true);
    Y.applyUpdate(h.doc, update, 'peer');
    assert.equal(emitted.length, count + 1);
    assert.equal(emitted[count]!.origin, 'peer');
    assert.equal(h.doc.getText('text').toString(), peer.getText('text').toString());
    h.destroy();
  });

  it('recognises a reply that adds nothing without a rebuild', () => {
    const { holder: h } = holder();
    write(h.doc);
    const peer = replica(Y.encodeStateAsUpdate(h.doc));
    const nothing = Y.encodeStateAsUpdate(peer, Y.encodeStateVector(h.doc));
    assert.equal(h.addsNothing(nothing), false, 'a live doc is checked by the room');
    assert.equal(h.compactIfIdle(), true);

    assert.equal(h.addsNothing(nothing), true);
    assert.equal(h.addsNothing(Y.encodeStateAsUpdate(new Y.Doc())), true, 'an empty update');
    peer.getText('text').delete(0, 1);
    assert.equal(h.addsNothing(Y.encodeStateAsUpdate(peer, h.stateVector())), false, 'deletes live content');
    const inserted = replica(Y.encodeStateAsUpdate(peer));
    inserted.getText('text').insert(0, 'x');
    assert.equal(h.addsNothing(Y.encodeStateAsUpdate(inserted, h.stateVector())), false, 'a new struct');
    assert.equal(h.addsNothing(new Uint8Array([0, 0, 7])), false, 'bytes after its end');
    assert.equal(h.addsNothing(new Uint8Array([5])), false, 'does not decode');
    assert.equal(h.compact, true);
    h.destroy();
  });

  it('holds a stored row as it is: joins answered from it as from the live doc, the doc built on the next turn', async () => {
    const source = new Y.Doc();
    write(source);
    const base = Y.encodeStateAsUpdate(source);
    const peer = replica(base);
    source.getText('text').insert(0, 'later ');
    const stored = Y.encodeStateAsUpdate(source);
    const expected = source.getText('text').toDelta() as unknown;

    const { holder: h, emitted } = holder();
    assert.equal(h.holdStored(stored), true);
    assert.equal(h.compact, true);
    assert.deepEqual(h.stateVector(), Y.encodeStateVector(source));
    assert.equal(h.encodeState(), stored, 'the first sync sends the row as stored');
    assert.deepEqual(replica(h.encodeState(Y.encodeStateVector(peer)), base).getText('text').toDelta(), expected);
    assert.throws(() => h.encodeState(new Uint8Array([0xff, 0xff])));
    assert.equal(h.addsNothing(Y.encodeStateAsUpdate(peer, h.stateVector())), true, 'a reply that adds nothing');
    const deleting = replica(stored);
    deleting.getText('text').delete(0, 1);
    assert.equal(h.addsNothing(Y.encodeStateAsUpdate(deleting, h.stateVector())), false, 'deletes live content');
    assert.equal(h.compact, true, 'nothing so far built the doc');

    h.buildSoon();
    h.buildSoon();
    assert.equal(h.compact, true, 'not within this turn');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(h.compact, false);
    assert.deepEqual(h.doc.getText('text').toDelta(), expected);
    assert.equal(emitted.length, 0, 'building emitted nothing');
    Y.applyUpdate(h.doc, Y.encodeStateAsUpdate(deleting, h.stateVector()), 'peer');
    assert.equal(emitted.length, 1);
    assert.equal(h.holdStored(base), false, 'only into an empty doc');
    h.destroy();
    source.destroy();
  });

  it('builds a held row on its first use when that comes first; buildSoon leaves an idle compact form alone', async () => {
    const source = new Y.Doc();
    write(source);
    const { holder: h } = holder();
    assert.equal(h.holdStored(Y.encodeStateAsUpdate(source)), true);
    h.buildSoon();
    assert.equal(h.doc.getText('text').toString(), source.getText('text').toString());
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(h.compact, false);

    assert.equal(h.compactIfIdle(), true);
    h.buildSoon();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(h.compact, true, 'an idle document is rebuilt on its next use only');
    h.destroy();
    source.destroy();
  });

  it('keeps a doc with more structs than the cap live, and one used within the idle time', () => {
    const { holder: big } = holder({ maxStructs: 3 });
    write(big.doc);
    assert.equal(big.compactIfIdle(), false);
    assert.equal(big.compact, false);
    big.destroy();

    const { holder: busy } = holder({ idleMs: 60_000 });
    write(busy.doc);
    assert.equal(busy.compactIfIdle(), false);
    busy.destroy();
  });

  it('destroy stops the timer and drops the document', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    let compactions = 0;
    const { holder: h } = holder({ idleMs: 10, compacted: () => compactions++ });
    write(h.doc);
    h.destroy();
    t.mock.timers.tick(100);
    assert.equal(compactions, 0);
    assert.equal(h.compactIfIdle(), false);
  });
});
