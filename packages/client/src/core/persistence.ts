import * as Y from 'yjs';

/**
 * True for an update of the live doc that the session puts into its confirmed copy in the same turn (a remote
 * update, the seed): `update` listener arguments (Yjs `Doc.on('update')`).
 */
export type ConfirmedAtOnce = (origin: unknown, transaction: Y.Transaction) => boolean;

/**
 * Where a session keeps its document between page loads, so that edits made offline survive a closed tab
 * (RELIABILITY.md R3). The browser implementation uses IndexedDB; the core only sees this interface.
 *
 * What is kept of the live doc is what its confirmed copy lacks: an update for which `confirmedAtOnce` holds is kept
 * with the copy only, and loading applies the copy's state to the live doc. The live doc is the union of the two,
 * so a remote update costs one write, not two.
 */
export interface LocalPersistence {
  /**
   * Attaches to `live` (the session's doc) and `confirmed` (its server-confirmed copy), first loading what was kept
   * into them (the live doc gets the copy's state too). Resolves with the session epoch the kept state belongs to
   * (undefined when nothing was kept).
   */
  open(live: Y.Doc, confirmed: Y.Doc, confirmedAtOnce: ConfirmedAtOnce): Promise<number | undefined>;
  /** Records the epoch of the attached docs. */
  setEpoch(epoch: number): void;
  /** Drops what was kept and attaches to new docs (a session reset replaced them), keeping their whole states. */
  reset(live: Y.Doc, confirmed: Y.Doc, epoch: number, confirmedAtOnce: ConfirmedAtOnce): Promise<void>;
  /** Drops what was kept (everything is stored on the server) and detaches. */
  clear(): Promise<void>;
  /** Detaches, keeping what was kept. */
  close(): void;
}

/** `persistence.open`; storage that fails to open (private mode, quota) is no storage: a warning, and nothing kept. */
export async function openKept(persistence: LocalPersistence, live: Y.Doc, confirmed: Y.Doc, confirmedAtOnce: ConfirmedAtOnce): Promise<number | undefined> {
  try {
    return await persistence.open(live, confirmed, confirmedAtOnce);
  } catch (err) {
    console.warn('[wave] offline storage unavailable:', err);
    return undefined;
  }
}

/** Whether two docs hold the same state (their encoded states are equal byte for byte). */
export function sameState(a: Y.Doc, b: Y.Doc): boolean {
  const x = Y.encodeStateAsUpdate(a);
  const y = Y.encodeStateAsUpdate(b);
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}
