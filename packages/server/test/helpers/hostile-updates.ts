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
          encoding.writeVarString(out, nestedJson(depth));
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
  const encoder = new Y.UpdateEncoderV1();
  encoding.writeVarUint(encoder.restEncoder, 1); // one client
  encoding.writeVarUint(encoder.restEncoder, 1); // one struct
  encoder.writeClient(client);
  encoding.writeVarUint(encoder.restEncoder, 0); // first clock
  item.write(encoder, 0);
  encoding.writeVarUint(encoder.restEncoder, 0); // empty delete set
  return encoder.toUint8Array();
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
