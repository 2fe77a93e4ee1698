/**
 * Applying a document's stored rows (a snapshot, or the seed, then the updates stored after it) to a room's doc.
 */
import * as Y from 'yjs';
import { LOADED } from './origins.js';

type UpdateListener = (update: Uint8Array, origin: unknown) => void;

/**
 * Applies `rows` with the `LOADED` origin. The room's `update` listener is detached meanwhile: with a listener Yjs
 * encodes every transaction's update, here the whole loaded document, which the room ignores anyway.
 */
export function applyStored(doc: Y.Doc, rows: readonly Uint8Array[], listener: UpdateListener): void {
  doc.off('update', listener);
  try {
    doc.transact(() => {
      for (const row of rows) Y.applyUpdate(doc, row, LOADED);
    }, LOADED);
  } finally {
    doc.on('update', listener);
  }
}
