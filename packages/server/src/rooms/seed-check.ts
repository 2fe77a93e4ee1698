/** Checks a Seed message's update (P5) before it is stored as a document's first content. */
import * as Y from 'yjs';
import { ProtocolError } from 'wave-protocol';
import { UpdateOverLimit, UpdateRejected, checkUpdate } from './update-check.js';
import type { DepthLimits } from './depth-check.js';
import { newDoc } from '../new-doc.js';

/**
 * Checks a seed update and returns it normalised (one state update without pending parts). Throws `ProtocolError`,
 * or `UpdateOverLimit` for a seed of more than `maxStructs` structs.
 */
export function normalizeSeed(update: Uint8Array, maxStructs: number, depth: DepthLimits): Uint8Array {
  const doc = newDoc();
  try {
    try {
      checkUpdate(doc, update, maxStructs, depth);
    } catch (error) {
      if (error instanceof UpdateOverLimit) throw error;
      if (error instanceof UpdateRejected) throw new ProtocolError(`Seed: ${error.message}`);
      throw error;
    }
    Y.applyUpdate(doc, update);
    if (doc.store.pendingStructs !== null || doc.store.pendingDs !== null) {
      throw new ProtocolError('Seed update is not a complete document state');
    }
    return Y.encodeStateAsUpdate(doc);
  } catch (error) {
    if (error instanceof ProtocolError || error instanceof UpdateOverLimit) throw error;
    throw new ProtocolError('Seed update does not decode');
  } finally {
    doc.destroy();
  }
}
