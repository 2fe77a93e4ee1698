/**
 * A peer's update applied with its bytes kept in the transaction's `meta`, so an observer can read what the update
 * deleted. The transaction's own delete set holds only what was live here: what this user had deleted too is not
 * in it (yjs `src/utils/DeleteSet.js`, `readAndApplyDeleteSet`).
 */
import * as Y from 'yjs';

const UPDATE = Symbol('wave-remote-update');
const DELETES = Symbol('wave-remote-deletes');

export type DeleteSet = ReturnType<typeof Y.createDeleteSet>;

/** `Y.applyUpdate(doc, update, origin)` in a remote (`local: false`) transaction that keeps `update` in its meta. */
export function applyRemoteUpdate(doc: Y.Doc, update: Uint8Array, origin: unknown): void {
  Y.transact(
    doc,
    (tr) => {
      tr.meta.set(UPDATE, update);
      Y.applyUpdate(doc, update, origin);
    },
    origin,
    false,
  );
}

/**
 * The delete set of the update `tr` applied through `applyRemoteUpdate` (decoded once, on first use); else the
 * transaction's own delete set.
 */
export function updateDeleteSet(tr: Y.Transaction): DeleteSet {
  const known = tr.meta.get(DELETES) as DeleteSet | undefined;
  if (known) return known;
  const update = tr.meta.get(UPDATE) as Uint8Array | undefined;
  const ds = update ? Y.decodeUpdate(update).ds : tr.deleteSet;
  tr.meta.set(DELETES, ds);
  return ds;
}
