import * as Y from 'yjs';

/**
 * Where a session keeps its document between page loads, so that edits made offline survive a closed tab
 * (RELIABILITY.md R3). The browser implementation uses IndexedDB; the core only sees this interface.
 */
export interface LocalPersistence {
  /**
   * Attaches to `live` (the session's doc) and `confirmed` (its server-confirmed copy), first loading what was kept
   * into them. Resolves with the session epoch the kept state belongs to (undefined when nothing was kept).
   */
  open(live: Y.Doc, confirmed: Y.Doc): Promise<number | undefined>;
  /** Records the epoch of the attached docs. */
  setEpoch(epoch: number): void;
  /** Drops what was kept and attaches to new docs (a session reset replaced them). */
  reset(live: Y.Doc, confirmed: Y.Doc, epoch: number): Promise<void>;
  /** Drops what was kept (everything is stored on the server) and detaches. */
  clear(): Promise<void>;
  /** Detaches, keeping what was kept. */
  close(): void;
}

/** `persistence.open`; storage that fails to open (private mode, quota) is no storage: a warning, and nothing kept. */
export async function openKept(persistence: LocalPersistence, live: Y.Doc, confirmed: Y.Doc): Promise<number | undefined> {
  try {
    return await persistence.open(live, confirmed);
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
