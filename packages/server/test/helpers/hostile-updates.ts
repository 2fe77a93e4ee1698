/**
 * Updates a hostile client could send that an honest Yjs client cannot produce (its own encoder would overflow the
 * stack first): one item whose JSON-like value is nested `depth` deep, written byte by byte in Yjs' v1 encoding; and
 * element trees nested `depth` deep, built with Yjs itself.
 */
import * as Y from 'yjs';
import * as encoding from 'lib0/encoding';

export type NestedValueKind = 'embed' | 'format' | 'json' | 'any';

/** Yjs' content refs (yjs src/structs/Item.js `contentRefs`). */
const CONTENT_REF: Record<NestedValueKind, number> = { json: 2, embed: 5, format: 6, any: 8 };

/** `'['×depth + ']'×depth` as JSON text. */
export function nestedJson(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

/**
 * An update holding one new item (client `client`, clock 0) at the start of the root type `parent`, whose content
 * carries an array nested `depth` deep: an embed, a format attribute value, a `ContentJSON` entry or a `ContentAny`
 * entry. Valid v1 encoding, no delete set.
 */
export function nestedValueUpdate(kind: NestedValueKind, depth: number, client: number, parent = 'text'): Uint8Array {
  const content = {
    getRef: () => CONTENT_REF[kind],
    getLength: () => 1,
    isCountable: () => kind !== 'format',
    write(encoder: Y.UpdateEncoderV1) {
      const out = encoder.restEncoder;
      switch (kind) {
        case 'embed':
          // An embed is an object (update-check.ts): the arrays go inside one.
          encoding.writeVarString(out, depth <= 1 ? '{}' : `{"deep":${nestedJson(depth - 1)}}`);
          break;
        case 'format':
          encoding.writeVarString(out, 'bold');
          encoding.writeVarString(out, nestedJson(depth));
          break;
        case 'json':
          encoding.writeVarUint(out, 1);
          encoding.writeVarString(out, nestedJson(depth));
          break;
        case 'any':
          encoding.writeVarUint(out, 1);
          // lib0 `writeAny`: 117 = array, then its length.
          for (let i = 0; i < depth - 1; i++) {
            encoding.writeUint8(out, 117);
            encoding.writeVarUint(out, 1);
          }
          encoding.writeUint8(out, 117);
          encoding.writeVarUint(out, 0);
          break;
      }
    },
  };
  const item = new Y.Item(
    Y.createID(client, 0),
    null,
    null,
    null,
    null,
    parent as unknown as Y.AbstractType<unknown>,
    null,
    content as unknown as Y.ContentAny,
  );
  return itemsUpdate(client, [item]);
}

/**
 * An update that appends `depth` nested `Y.XmlElement`s (`blockquote`) holding the text `inner` to the fragment
 * `html` of a copy of `base`: what `base`'s owner would send.
 */
export function nestedElementsUpdate(base: Y.Doc, depth: number, inner = 'deep'): Uint8Array {
  const copy = new Y.Doc();
  Y.applyUpdate(copy, Y.encodeStateAsUpdate(base));
  const before = Y.encodeStateVector(copy);
  copy.transact(() => {
    let parent: Y.XmlFragment | Y.XmlElement = copy.getXmlFragment('html');
    for (let i = 0; i < depth; i++) {
      const element = new Y.XmlElement('blockquote');
      parent.insert(parent.length, [element]);
      parent = element;
    }
    parent.insert(0, [new Y.XmlText(inner)]);
  });
  const update = Y.encodeStateAsUpdate(copy, before);
  copy.destroy();
  return update;
}

/** `update` followed by `extra` bytes that are not part of it. */
export function withTrailingBytes(update: Uint8Array, extra: readonly number[] = [0x01, 0x02, 0x03]): Uint8Array {
  const out = new Uint8Array(update.length + extra.length);
  out.set(update);
  out.set(extra, update.length);
  return out;
}

/**
 * An update of two new items by `client` (a new client: clocks 0 and 1–2) at the end of `base`'s text `text`: `a`,
 * then `bc`, whose `reference` (its origin, rightOrigin or parent) names clock 2 of the same client, a character of
 * that item itself. Yjs looks up an item's references to its own client without checking they are there (yjs
 * `Item.getMissing`): it throws while integrating the second item, after the first is in the document.
 */
export function ownFutureUpdate(base: Y.Doc, client: number, reference: 'origin' | 'rightOrigin' | 'parent' = 'origin'): Uint8Array {
  const last = lastItemOf(base.getText('text'));
  const root = 'text' as unknown as Y.AbstractType<unknown>;
  const first = new Y.Item(Y.createID(client, 0), null, last, null, null, last ? null : root, null, new Y.ContentString('a'));
  const ahead = Y.createID(client, 2);
  const second = new Y.Item(
    Y.createID(client, 1),
    null,
    reference === 'origin' ? ahead : null,
    null,
    reference === 'rightOrigin' ? ahead : null,
    reference === 'parent' ? (ahead as unknown as Y.AbstractType<unknown>) : null,
    null,
    new Y.ContentString('bc'),
  );
  return itemsUpdate(client, [first, second]);
}

/** The ID of the last character of `text`, or null when it is empty. */
function lastItemOf(text: Y.Text): Y.ID | null {
  let item = text._start;
  let last: Y.ID | null = null;
  for (; item !== null; item = item.right) if (!item.deleted) last = Y.createID(item.id.client, item.id.clock + item.length - 1);
  return last;
}

/** An update of one new item by `client` at the end of `base`'s text `text`: an embed holding `embed` (any JSON). */
export function embedUpdate(base: Y.Doc, client: number, embed: unknown): Uint8Array {
  const last = lastItemOf(base.getText('text'));
  const root = 'text' as unknown as Y.AbstractType<unknown>;
  const item = new Y.Item(Y.createID(client, 0), null, last, null, null, last ? null : root, null, new Y.ContentEmbed(embed as object));
  return itemsUpdate(client, [item]);
}

/**
 * Yjs' v1 encoding of `items`, all of `client` and consecutive from clock 0, written as they are (anchors, parent
 * and content unchecked), with an empty delete set.
 */
function itemsUpdate(client: number, items: readonly Y.Item[]): Uint8Array {
  const encoder = new Y.UpdateEncoderV1();
  encoding.writeVarUint(encoder.restEncoder, 1); // one client
  encoding.writeVarUint(encoder.restEncoder, items.length);
  encoder.writeClient(client);
  encoding.writeVarUint(encoder.restEncoder, 0); // first clock
  for (const item of items) item.write(encoder, 0);
  encoding.writeVarUint(encoder.restEncoder, 0); // empty delete set
  return encoder.toUint8Array();
}

/**
 * An update with no structs and one delete range of `len` clocks of `client` from `clock` (Yjs' v1 encoding). An
 * empty range (`len` 0) is one no Yjs encoder writes.
 */
export function deleteRangeUpdate(client: number, clock: number, len: number): Uint8Array {
  const encoder = encoding.createEncoder();
  encoding.writeVarUint(encoder, 0); // no struct sections
  encoding.writeVarUint(encoder, 1); // one client in the delete set
  encoding.writeVarUint(encoder, client);
  encoding.writeVarUint(encoder, 1); // one range
  encoding.writeVarUint(encoder, clock);
  encoding.writeVarUint(encoder, len);
  return encoding.toUint8Array(encoder);
}
