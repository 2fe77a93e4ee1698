/**
 * The nesting limits of the update check (rooms/depth-check.ts through `checkUpdate`): values are counted in arrays
 * and objects; a type's level is found whether the update names its parent, or only a neighbour that is in the
 * document or in the update itself.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as Y from 'yjs';
import { valueDepth } from '../src/rooms/depth-check.js';
import { UpdateRejected, checkUpdate } from '../src/rooms/update-check.js';

const MAX_STRUCTS = 20_000;
const LIMITS = { maxValueDepth: 4, maxTypeDepth: 3 };

function refused(doc: Y.Doc, update: Uint8Array): string | undefined {
  try {
    checkUpdate(doc, update, MAX_STRUCTS, LIMITS);
    return undefined;
  } catch (error) {
    assert.ok(error instanceof UpdateRejected, String(error));
    return error.message;
  }
}

/** Applies `change` to a replica of `server` and returns the update it makes. */
function edit(server: Y.Doc, change: (replica: Y.Doc) => void): Uint8Array {
  const replica = new Y.Doc();
  Y.applyUpdate(replica, Y.encodeStateAsUpdate(server));
  const before = Y.encodeStateVector(replica);
  change(replica);
  return Y.encodeStateAsUpdate(replica, before);
}

/** Checks and applies, as a room does. */
function take(server: Y.Doc, update: Uint8Array): void {
  assert.equal(refused(server, update), undefined);
  Y.applyUpdate(server, update);
}

describe('depth check', () => {
  it('counts arrays and objects, not scalars or binaries, and stops past the limit', () => {
    assert.equal(valueDepth('x', 10), 0);
    assert.equal(valueDepth(new Uint8Array(3), 10), 0);
    assert.equal(valueDepth([], 10), 1);
    assert.equal(valueDepth({ img: { src: 'a' } }, 10), 2);
    assert.equal(valueDepth([1, [2, [3]], { a: [] }], 10), 3);
    assert.equal(valueDepth(JSON.parse('['.repeat(100_000) + ']'.repeat(100_000)), 10), 11);
  });

  it('refuses embeds, format values and JSON content past the value limit, and takes them at it', () => {
    const server = new Y.Doc();
    take(server, edit(server, (d) => d.getText('text').insert(0, 'ab')));
    take(server, edit(server, (d) => d.getText('text').insertEmbed(0, { a: { b: { c: {} } } })));
    assert.match(refused(server, edit(server, (d) => d.getText('text').insertEmbed(0, { a: { b: { c: { d: {} } } } })))!, /value nested deeper than 4/);
    assert.match(refused(server, edit(server, (d) => d.getText('text').format(0, 1, { link: [[[[[1]]]]] })))!, /value nested deeper than 4/);
    assert.match(refused(server, edit(server, (d) => d.getMap('m').set('k', [[[[[]]]]])))!, /value nested deeper than 4/);
  });

  it('finds a type level through a parent in the document, a left or right neighbour in the document, or in the update', () => {
    const server = new Y.Doc();
    // root fragment (0) > ul (1) > li (2): one level left under the limit of 3.
    take(server, edit(server, (d) => {
      const ul = new Y.XmlElement('ul');
      d.getXmlFragment('html').insert(0, [ul]);
      ul.insert(0, [new Y.XmlElement('li')]);
    }));
    const li = (d: Y.Doc): Y.XmlElement => (d.getXmlFragment('html').get(0) as Y.XmlElement).get(0) as Y.XmlElement;
    // Parent in the document: li gets a p (level 3).
    take(server, edit(server, (d) => li(d).insert(0, [new Y.XmlElement('p')])));
    // Left neighbour in the document: a second p after the first, then one more level inside it is refused.
    take(server, edit(server, (d) => li(d).insert(1, [new Y.XmlElement('p')])));
    assert.match(refused(server, edit(server, (d) => (li(d).get(1) as Y.XmlElement).insert(0, [new Y.XmlElement('b')])))!, /deeper than 3/);
    // Right neighbour in the document: inserted before the first p, with something inside in the same update.
    assert.match(
      refused(server, edit(server, (d) => {
        const p = new Y.XmlElement('p');
        li(d).insert(0, [p]);
        p.insert(0, [new Y.XmlElement('b')]);
      }))!,
      /deeper than 3/,
    );
    // A sibling chain in the update whose first item names the document's li: all at level 3, accepted.
    take(server, edit(server, (d) => li(d).insert(0, [new Y.XmlElement('p'), new Y.XmlElement('p'), new Y.XmlElement('p')])));
    // Only ever one level per type: text inside a level-3 element would be level 4.
    assert.match(refused(server, edit(server, (d) => (li(d).get(0) as Y.XmlElement).insert(0, [new Y.XmlText('x')])))!, /deeper than 3/);
  });
});
