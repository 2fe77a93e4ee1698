/**
 * Offline persistence in IndexedDB through y-indexeddb: one database for the server-confirmed copy, one for what
 * the live doc has beyond it (its unconfirmed local updates) and the epoch. Names are scoped by server, apiKey and
 * docId. A remote update is written once, with the confirmed copy (core/persistence.ts).
 */
import * as Y from 'yjs';
import { IndexeddbPersistence } from 'y-indexeddb';
import type { ConfirmedAtOnce, LocalPersistence } from '../core/persistence.js';

const EPOCH_KEY = 'epoch';

/**
 * y-indexeddb's persistence of the live doc without the updates the confirmed copy takes at once. y-indexeddb
 * stores every update of its doc from an `update` listener its constructor registers (`_storeUpdate`, which
 * `destroy` unregisters); this one replaces it by a listener that passes the others on. y-indexeddb's declaration
 * gives that listener Yjs' first two arguments only, hence the cast.
 */
class LocalUpdatesPersistence extends IndexeddbPersistence {
  constructor(name: string, doc: Y.Doc, confirmedAtOnce: ConfirmedAtOnce) {
    super(name, doc);
    const store = this._storeUpdate;
    doc.off('update', store);
    const keep = (update: Uint8Array, origin: unknown, _doc: Y.Doc, transaction: Y.Transaction): void => {
      if (!confirmedAtOnce(origin, transaction)) store(update, origin);
    };
    this._storeUpdate = keep as unknown as IndexeddbPersistence['_storeUpdate'];
    doc.on('update', keep);
  }
}

export class IndexedDbPersistence implements LocalPersistence {
  private live: IndexeddbPersistence | null = null;
  private confirmed: IndexeddbPersistence | null = null;

  constructor(private readonly name: string) {}

  /** True when this browser offers IndexedDB (not in Node, not in some private modes). */
  static available(): boolean {
    return typeof indexedDB !== 'undefined';
  }

  async open(live: Y.Doc, confirmed: Y.Doc, confirmedAtOnce: ConfirmedAtOnce): Promise<number | undefined> {
    this.attach(live, confirmed, confirmedAtOnce);
    const [l, c] = await Promise.all([this.live?.whenSynced, this.confirmed?.whenSynced]);
    // The live doc is what its own store kept plus the confirmed copy. Applied with the live store's own origin, so
    // that store does not write it again (y-indexeddb skips its own origin).
    if (l && c) Y.applyUpdate(live, Y.encodeStateAsUpdate(confirmed), l);
    const epoch: unknown = await l?.get(EPOCH_KEY);
    return typeof epoch === 'number' ? epoch : undefined;
  }

  setEpoch(epoch: number): void {
    void this.live?.set(EPOCH_KEY, epoch);
  }

  async reset(live: Y.Doc, confirmed: Y.Doc, epoch: number, confirmedAtOnce: ConfirmedAtOnce): Promise<void> {
    await this.clear();
    // A new IndexeddbPersistence stores the doc's whole current state first, so edits made meanwhile are kept.
    this.attach(live, confirmed, confirmedAtOnce);
    this.setEpoch(epoch);
  }

  async clear(): Promise<void> {
    const parts = [this.live, this.confirmed];
    this.live = this.confirmed = null;
    await Promise.all(parts.map((p) => p?.clearData()));
  }

  close(): void {
    void this.live?.destroy();
    void this.confirmed?.destroy();
    this.live = this.confirmed = null;
  }

  private attach(live: Y.Doc, confirmed: Y.Doc, confirmedAtOnce: ConfirmedAtOnce): void {
    this.live = new LocalUpdatesPersistence(this.name, live, confirmedAtOnce);
    this.confirmed = new IndexeddbPersistence(`${this.name}#confirmed`, confirmed);
  }
}
