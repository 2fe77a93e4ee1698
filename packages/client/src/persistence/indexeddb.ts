/**
 * Offline persistence in IndexedDB through y-indexeddb (one database for the live doc, one for its
 * server-confirmed copy). Names are scoped by server, apiKey and docId.
 */
import type * as Y from 'yjs';
import { IndexeddbPersistence } from 'y-indexeddb';
import type { LocalPersistence } from '../core/persistence.js';

const EPOCH_KEY = 'epoch';

export class IndexedDbPersistence implements LocalPersistence {
  private live: IndexeddbPersistence | null = null;
  private confirmed: IndexeddbPersistence | null = null;

  constructor(private readonly name: string) {}

  /** True when this browser offers IndexedDB (not in Node, not in some private modes). */
  static available(): boolean {
    return typeof indexedDB !== 'undefined';
  }

  async open(live: Y.Doc, confirmed: Y.Doc): Promise<number | undefined> {
    this.attach(live, confirmed);
    const [l] = await Promise.all([this.live?.whenSynced, this.confirmed?.whenSynced]);
    const epoch: unknown = await l?.get(EPOCH_KEY);
    return typeof epoch === 'number' ? epoch : undefined;
  }

  setEpoch(epoch: number): void {
    void this.live?.set(EPOCH_KEY, epoch);
  }

  async reset(live: Y.Doc, confirmed: Y.Doc, epoch: number): Promise<void> {
    await this.clear();
    // A new IndexeddbPersistence stores the doc's whole current state first, so edits made meanwhile are kept.
    this.attach(live, confirmed);
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

  private attach(live: Y.Doc, confirmed: Y.Doc): void {
    this.live = new IndexeddbPersistence(this.name, live);
    this.confirmed = new IndexeddbPersistence(`${this.name}#confirmed`, confirmed);
  }
}
