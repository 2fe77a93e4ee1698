/**
 * The server's anchor check (rooms/anchor-check.ts) through `checkUpdate`: updates whose items name no place their
 * creator saw are refused; honest concurrent editing, delivered in any order, never is.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as Y from 'yjs';
import * as encoding from 'lib0/encoding';
import { AnchorCheck } from '../src/rooms/anchor-check.js';
import { UpdateRejected, checkUpdate } from '../src/rooms/update-check.js';

const MAX_STRUCTS = 20_000;

/** An update holding one string item with the given anchors, encoded as Yjs' v1 format (no delete set). */
function crafted(client: number, clock: number, text: string, origin: Y.ID | null, rightOrigin: Y.ID | null, parent = 'text'): Uint8Array {
  const item = new Y.Item(Y.createID(client, clock), null, origin, null, rightOrigin, parent as unknown as Y.AbstractType<unknown>, null, new Y.ContentString(text));
  const encoder = new Y.UpdateEncoderV1();
  encoding.writeVarUint(encoder.restEncoder, 1); // one client
  encoding.writeVarUint(encoder.restEncoder, 1); // one struct
  encoder.writeClient(client);
  encoding.writeVarUint(encoder.restEncoder, clock);
  item.write(encoder, 0);
  encoding.writeVarUint(encoder.restEncoder, 0); // empty delete set
  return encoder.toUint8Array();
}

/** A document with "abc" typed by client 1 and then "xyz" typed after it by client 2: "abcxyz". */
function abcxyz(): Y.Doc {
  const doc = new Y.Doc();
  const a = new Y.Doc();
  a.clientID = 1;
  a.getText('text').insert(0, 'abc');
  Y.applyUpdate(doc, Y.encodeStateAsUpdate(a));
  const b = new Y.Doc();
  b.clientID = 2;
  Y.applyUpdate(b, Y.encodeStateAsUpdate(doc));
  b.getText('text').insert(3, 'xyz');
  Y.applyUpdate(doc, Y.encodeStateAsUpdate(b));
  return doc;
}

const refusedFor = (doc: Y.Doc, update: Uint8Array): string => {
  try {
    checkUpdate(doc, update, MAX_STRUCTS);
  } catch (error) {
    assert.ok(error instanceof UpdateRejected, String(error));
    return error.message;
  }
  assert.fail('the update was accepted');
};

describe('anchor check', () => {
  it('the crafted items are well-formed Yjs: an honest placement of the same kind is accepted and integrates', () => {
    const doc = abcxyz();
    // Typed between "c" and "x", which were neighbours: what an honest client with this document sends.
    const update = crafted(3, 0, 'Q', Y.createID(1, 2), Y.createID(2, 0));
    assert.equal(checkUpdate(doc, update, MAX_STRUCTS).changes, true);
    Y.applyUpdate(doc, update);
    assert.equal(doc.getText('text').toString(), 'abcQxyz');
    assert.equal(doc.store.pendingStructs, null);
  });

  it('refuses a rightOrigin to the left of the origin (S9)', () => {
    assert.match(refusedFor(abcxyz(), crafted(3, 0, 'Q', Y.createID(2, 1), Y.createID(1, 1))), /rightOrigin is not to the right of its origin/);
    // Both anchors in one item, reversed.
    assert.match(refusedFor(abcxyz(), crafted(3, 0, 'Q', Y.createID(1, 2), Y.createID(1, 0))), /rightOrigin is not to the right of its origin/);
  });

  it('refuses anchors with characters between them that the creator knew', () => {
    // Knowing "z" (2:2) means knowing "x" and "y" (a document holds a client's clocks without gaps).
    assert.match(refusedFor(abcxyz(), crafted(3, 0, 'Q', Y.createID(1, 0), Y.createID(2, 2))), /creator knew lie between/);
    // Inside one item: "a" and "c" were never neighbours.
    assert.match(refusedFor(abcxyz(), crafted(3, 0, 'Q', Y.createID(1, 0), Y.createID(1, 2))), /creator knew lie between/);
  });

  it('refuses typing "at the end" after an origin that its creator had typed past', () => {
    const doc = abcxyz();
    Y.applyUpdate(doc, crafted(3, 0, 'Q', Y.createID(2, 2), null)); // client 3 typed "Q" at the end
    assert.equal(doc.getText('text').toString(), 'abcxyzQ');
    assert.match(refusedFor(doc, crafted(3, 1, 'R', Y.createID(1, 0), null)), /lie after its origin/);
    // From a client that may never have seen "bc…": a consistent history, accepted.
    assert.equal(checkUpdate(doc, crafted(4, 0, 'R', Y.createID(1, 0), null), MAX_STRUCTS).changes, true);
  });

  it('refuses an item without anchors in a list its creator had typed into', () => {
    const doc = abcxyz();
    assert.equal(checkUpdate(doc, crafted(5, 0, 'S', null, null), MAX_STRUCTS).changes, true, 'a creator that saw the text empty');
    Y.applyUpdate(doc, crafted(5, 0, 'S', Y.createID(2, 2), null));
    assert.match(refusedFor(doc, crafted(5, 1, 'T', null, null)), /lie after its origin/);
  });

  it('bounds the walk between anchors: an item whose anchors are further apart than the budget is refused', () => {
    const doc = abcxyz();
    // Five items that client 6 could not have seen, between "c" and "x".
    for (let i = 0; i < 5; i++) Y.applyUpdate(doc, crafted(10 + i, 0, String(i), Y.createID(1, 2), Y.createID(2, 0)));
    const item = Y.decodeUpdate(crafted(6, 0, 'Q', Y.createID(1, 2), Y.createID(2, 0))).structs[0] as Y.Item;
    assert.deepEqual(new AnchorCheck(doc, 10).check(item), { ok: true });
    const verdict = new AnchorCheck(doc, 3).check(item);
    assert.equal(verdict.ok, false);
    assert.match(!verdict.ok ? verdict.reason : '', /more than 3 items apart/);
  });

  it('never refuses honest concurrent editing delivered in any order, and the server document then equals its own state update', () => {
    let seed = 7;
    const rand = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const int = (n: number): number => Math.floor(rand() * n);
    const server = new Y.Doc();
    const users = Array.from({ length: 3 }, (_, i) => {
      const doc = new Y.Doc();
      doc.clientID = 100 + i;
      /** Updates this user made that the server has not received yet, oldest first. */
      const outbox: Uint8Array[] = [];
      doc.on('update', (update: Uint8Array, origin: unknown) => {
        if (origin !== 'server') outbox.push(update);
      });
      return { doc, outbox };
    });
    let checked = 0;
    for (let round = 0; round < 400; round++) {
      const user = users[int(users.length)]!;
      const text = user.doc.getText('text');
      const xml = user.doc.getXmlFragment('xml');
      switch (int(6)) {
        case 0:
        case 1:
          text.insert(int(text.length + 1), 'abcdefgh'.slice(0, 1 + int(4)), rand() < 0.2 ? { bold: true } : undefined);
          break;
        case 2:
          if (text.length > 0) {
            const at = int(text.length);
            text.delete(at, Math.min(1 + int(3), text.length - at));
          }
          break;
        case 3:
          if (text.length > 0) text.format(int(text.length), 1 + int(3), { italic: rand() < 0.5 ? true : null });
          break;
        case 4: {
          const p = new Y.XmlElement('p');
          p.insert(0, [new Y.XmlText('para')]);
          xml.insert(int(xml.length + 1), [p]);
          break;
        }
        default:
          if (xml.length > 0) xml.delete(int(xml.length), 1);
      }
      // Delivery: a random user sends its oldest updates; a random user catches up with the server.
      const sender = users[int(users.length)]!;
      for (let n = int(3); n > 0 && sender.outbox.length > 0; n--) {
        const update = sender.outbox.shift()!;
        checkUpdate(server, update, MAX_STRUCTS);
        checked++;
        Y.applyUpdate(server, update);
      }
      if (rand() < 0.3) {
        const reader = users[int(users.length)]!;
        Y.applyUpdate(reader.doc, Y.encodeStateAsUpdate(server, Y.encodeStateVector(reader.doc)), 'server');
      }
    }
    assert.ok(checked > 300, `${checked} updates checked`);
    const fresh = new Y.Doc();
    Y.applyUpdate(fresh, Y.encodeStateAsUpdate(server));
    assert.equal(fresh.getText('text').toString(), server.getText('text').toString());
    assert.equal(fresh.getXmlFragment('xml').toString(), server.getXmlFragment('xml').toString());
  });
});
