/**
 * Applying a document's stored rows (a snapshot, or the seed, then the updates stored after it) to a room's doc.
 */
import * as Y from 'yjs';
import { LOADED } from './origins.js';

type UpdateListener = (update: Uint8Array, origin: unknown) => void;

/**
 * Applies `rows` with the `LOADED` origin. The room's `update` listener is detached meanwhile: with a listener Yjs
 * encodes every transaction's update, here the whole loaded document, which the room ignores anyway. Returns the
 * single row when the doc was empty and that row alone is now the whole document (nothing pending), so that the
 * first sync can send it as it is instead of encoding what was just decoded; otherwise `undefined`.
 */
export function applyStored(doc: Y.Doc, rows: readonly Uint8Array[], listener: UpdateListener): Uint8Array | undefined {
  const empty = doc.store.clients.size === 0;
  doc.off('update', listener);
  try {
    doc.transact(() => {
      for (const row of rows) Y.applyUpdate(doc, row, LOADED);
    }, LOADED);
  } finally {
    doc.on('update', listener);
  }
  const whole = empty && rows.length === 1 && doc.store.pendingStructs === null && doc.store.pendingDs === null;
  return whole ? rows[0] : undefined;
}
