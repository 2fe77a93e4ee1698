/**
 * Puts characters back where the node they were in was, when a peer's write deleted that node without having seen
 * them and wrote nothing they could go into.
 *
 * Yjs integrates an insertion into a deleted parent as deleted (yjs `src/structs/Item.js` `integrate`), so typing, or
 * text an undo restored, inside a block that a peer concurrently removed (Backspace in what the peer saw as an empty
 * list item, a paste over a range holding it) is gone on every replica. Where an editor built on operational
 * transformation would keep a concurrent insertion at the place of the deleted range, this module writes a new copy
 * of the deleted block right after its tombstone: the same elements from the topmost deleted one down to the text,
 * with their attributes, holding only the given characters with their formatting. Sibling content of the deleted
 * block is not copied: the peer meant to delete it. Table parts are not copied (a row or cell out of place would change
 * the table's shape): inside a table the characters go into a paragraph where the whole table was, when a paragraph can
 * stand there, and are otherwise left deleted. A text deleted alone from an element that stays (a list item's line
 * before its nested list) goes back in its place.
 *
 * DOM-free; reads Yjs internals (`_item`, `_map`) that the public API does not expose for deleted types. Call it inside
 * a transaction, from an observer of the transaction that deleted the nodes (before Yjs collects their content).
 */
import * as Y from 'yjs';
import { contentOf } from './schema.js';

/** Formatting attributes of one character (Yjs text attributes: mark name → its attributes). */
export type CharAttrs = Record<string, unknown>;

/** Characters of one deleted `Y.XmlText` to put back, one `attrs` entry per UTF-16 unit of `chars`. */
export interface Orphan {
  text: Y.XmlText;
  chars: string;
  attrs: readonly CharAttrs[];
}

const TABLE_PARTS = new Set(['table', 'thead', 'tbody', 'tfoot', 'tr', 'td', 'th', 'colgroup', 'col']);

type Parent = Y.XmlFragment | Y.XmlElement;
/** Any shared type (Yjs types its content parameter per kind; a parent walk meets every kind). */
type AnyType = Y.AbstractType<any>;

/** Inserts units `from`..`to` of `chars` into `text` at `at`, each run of equal attributes (by identity) in one insert. */
export function insertRuns(text: Y.XmlText, at: number, chars: string, attrs: readonly CharAttrs[], from: number, to: number): void {
  for (let k = from; k < to; ) {
    let end = k + 1;
    while (end < to && attrs[end] === attrs[k]) end++;
    text.insert(at + k - from, chars.slice(k, end), { ...attrs[k] });
    k = end;
  }
}

/** The type an item belongs to. */
function parentOf(type: AnyType): AnyType | null {
  return (type._item?.parent as AnyType | undefined) ?? null;
}

/** The attributes element `el` had before the transaction `liveBefore` describes (deleted ones included). */
function attributesOf(el: Y.XmlElement, liveBefore: (item: Y.Item) => boolean): Record<string, string> {
  const attrs: Record<string, string> = {};
  const map = (el as unknown as { _map: Map<string, Y.Item> })._map;
  for (const [key, last] of map) {
    // Each key's entry is its newest item; an older one (left of it) may be the value the element had before.
    for (let item: Y.Item | null = last; item; item = item.left as Y.Item | null) {
      if (!liveBefore(item)) continue;
      const value = item.content.getContent()[item.length - 1];
      if (typeof value === 'string') attrs[key] = value;
      break;
    }
  }
  return attrs;
}

/** The nearest live sibling of a deleted item on one side (`left` or `right`), or null. */
function liveSibling(item: Y.Item, side: 'left' | 'right'): Y.Item | null {
  for (let next = item[side] as Y.Item | null; next; next = next[side] as Y.Item | null) if (!next.deleted) return next;
  return null;
}

/**
 * Puts an orphan whose text alone was deleted from a live element (a list item's line before its nested blocks) back
 * where that text was: into the live text next to it, at the joint, or else into a text of its own in its place (two
 * texts side by side are not a normal document). Returns the text that holds the characters.
 */
function putBackText(orphan: Orphan): Y.XmlText {
  const tombstone = orphan.text._item!;
  const left = liveSibling(tombstone, 'left');
  const right = liveSibling(tombstone, 'right');
  const textOf = (item: Y.Item | null) => (item?.content instanceof Y.ContentType && item.content.type instanceof Y.XmlText ? item.content.type : null);
  const before = textOf(left);
  const after = textOf(right);
  let text: Y.XmlText;
  let at = 0;
  if (before) {
    text = before;
    at = before.length;
  } else if (after) {
    text = after;
  } else {
    text = new Y.XmlText();
    (parentOf(orphan.text) as Parent).insertAfter(orphan.text, [text]);
  }
  insertRuns(text, at, orphan.chars, orphan.attrs, 0, orphan.chars.length);
  return text;
}

/**
 * Writes a copy of each orphan's deleted block after its tombstone (see the module comment). Orphans under the same
 * topmost deleted element share one copy; a text deleted alone from a live element goes back in its place
 * (`putBackText`). `liveBefore` tells items live before the deleting transaction (for the
 * attributes of deleted elements). Returns the new text of each orphan put back (the caret's new place).
 */
export function recreate(orphans: readonly Orphan[], liveBefore: (item: Y.Item) => boolean): Map<Y.XmlText, Y.XmlText> {
  const made = new Map<Y.XmlText, Y.XmlText>();
  const byTop = new Map<Y.XmlElement, Orphan[]>();
  for (const orphan of orphans) {
    let top: AnyType = orphan.text;
    for (let up = parentOf(top); up?._item?.deleted; up = parentOf(up)) top = up;
    if (orphan.chars.length === 0) continue;
    if (top instanceof Y.XmlElement) byTop.set(top, [...(byTop.get(top) ?? []), orphan]);
    else made.set(orphan.text, putBackText(orphan));
  }
  for (const [top, group] of byTop) {
    const parent = parentOf(top) as Parent | null;
    if (!parent) continue;
    const inTable = group.some((o) => {
      for (let up = parentOf(o.text); up && up !== parent; up = parentOf(up)) {
        if (up instanceof Y.XmlElement && TABLE_PARTS.has(up.nodeName)) return true;
      }
      return false;
    });
    const fills: Array<{ orphan: Orphan; text: Y.XmlText }> = [];
    let copies: Y.XmlElement[];
    if (inTable) {
      const holds = parent instanceof Y.XmlElement ? contentOf(parent.nodeName) : 'root';
      if (holds !== 'root' && holds !== 'flow') continue;
      copies = group.map((orphan) => {
        const text = new Y.XmlText();
        fills.push({ orphan, text });
        const p = new Y.XmlElement('p');
        p.insert(0, [text]);
        return p;
      });
    } else {
      // The elements on the way from `top` to each orphan's text.
      const onPath = new Set<AnyType>();
      for (const o of group) for (let up: AnyType | null = o.text; up && up !== parent; up = parentOf(up)) onPath.add(up);
      const copy = (type: AnyType): Y.XmlElement | Y.XmlText => {
        if (type instanceof Y.XmlText) {
          const text = new Y.XmlText();
          fills.push({ orphan: group.find((o) => o.text === type)!, text });
          return text;
        }
        const el = type as Y.XmlElement;
        const out = new Y.XmlElement(el.nodeName);
        for (const [key, value] of Object.entries(attributesOf(el, liveBefore))) out.setAttribute(key, value);
        const children: Array<Y.XmlElement | Y.XmlText> = [];
        for (let item = el._start; item; item = item.right) {
          if (item.content instanceof Y.ContentType && onPath.has(item.content.type)) children.push(copy(item.content.type));
        }
        out.insert(0, children);
        return out;
      };
      copies = [copy(top) as Y.XmlElement];
    }
    parent.insertAfter(top, copies);
    for (const { orphan, text } of fills) {
      insertRuns(text, 0, orphan.chars, orphan.attrs, 0, orphan.chars.length);
      made.set(orphan.text, text);
    }
  }
  return made;
}
