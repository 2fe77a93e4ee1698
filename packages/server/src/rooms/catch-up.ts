/**
 * A room's catch-up on what other servers committed. Their updates arrive through the fan-out feed, in commit
 * order, but not always in a state the room can apply: during a store load (the load may or may not contain them),
 * before the document is seeded here, or after a gap (a server died between its commit and its publish, or stream
 * entries were lost) so that they depend on updates this room never received. Such updates are held; the store has
 * every committed update, so a read of it (applied with the `REMOTE` origin: relayed to the peers, not stored again)
 * followed by the held ones brings the room up to date. Applying an update twice changes nothing.
 */
import * as Y from 'yjs';
import type { DocKey, Store } from '../store/types.js';
import type { FanoutEvent } from '../fanout/types.js';
import type { Logger } from '../log.js';
import { REMOTE, describeDoc, dropPending } from './origins.js';

/** The room as catch-up sees it: its document and session, read at each use. */
export interface CatchUpRoom {
  readonly key: DocKey;
  readonly doc: Y.Doc;
  readonly epoch: number;
  readonly seeded: boolean;
  readonly closed: boolean;
}

export interface CatchUpOptions {
  room: CatchUpRoom;
  store: Store;
  log: Logger;
  /** Applies one update with the `REMOTE` origin; what it changed is relayed once it applied (`Room.applyOne`). */
  applyRemote: (update: Uint8Array) => void;
  /** Presence another server relayed (`Presence.applyRemote`). */
  applyAwareness: (update: Uint8Array) => void;
  /** Counts an update received from another server (metrics). */
  counted: () => void;
  /** A newer epoch exists: the session ended under the room (`Room.sessionEnded`). */
  sessionEnded: () => void;
  /** The room is not seeded here: re-read the session, and load the document if it was seeded elsewhere. */
  refresh: () => void;
  /** Runs a catch-up in the room's tracked work (logged on failure, awaited on close). */
  track: (run: Promise<void>, what: string) => void;
}

/** Store reads one catch-up makes at most before it gives up on updates that still do not integrate. */
const MAX_ROUNDS = 5;

export class CatchUp {
  /** Remote updates received while a store load is under way (or before the seed): applied after it. */
  private held: Uint8Array[] = [];
  private running: Promise<void> | undefined;
  private again = false;

  constructor(private readonly opts: CatchUpOptions) {}

  /** A catch-up is under way: remote updates wait for it. */
  private get busy(): boolean {
    return this.running !== undefined;
  }

  /** Handles what the fan-out delivers for this document (`DocFeed.start`). */
  readonly receive = (event: FanoutEvent): void => {
    const { room } = this.opts;
    if (room.closed) return;
    switch (event.kind) {
      case 'update':
        if (event.epoch < room.epoch) return; // from a session that has ended
        if (event.epoch > room.epoch) return this.opts.sessionEnded();
        this.opts.counted();
        if (!room.seeded || this.busy) {
          this.held.push(event.update);
          if (!room.seeded) this.opts.refresh();
          return;
        }
        return this.apply(event.update);
      case 'seeded':
        if (event.epoch > room.epoch) return this.opts.sessionEnded();
        if (event.epoch === room.epoch && !room.seeded) this.opts.refresh();
        return;
      case 'session':
        if (event.epoch > room.epoch) this.opts.sessionEnded();
        return;
      case 'awareness':
        return this.opts.applyAwareness(event.update);
      case 'gap':
        if (room.seeded) this.start();
        else this.opts.refresh();
        return;
    }
  };

  /** After a store load: applies the held updates, and catches up from the store if some do not integrate. */
  resume(): void {
    if (this.applyHeld()) this.start();
  }

  /** Forgets the held updates: a store load that starts now contains every one published so far. */
  clear(): void {
    this.held = [];
  }

  /**
   * Applies an update another server committed. One that does not integrate depends on updates this room has not
   * received: they are in the store, so the room catches up from there and applies this one again after.
   */
  private apply(update: Uint8Array): void {
    const { room, log } = this.opts;
    try {
      this.opts.applyRemote(update);
    } catch (error) {
      dropPending(room.doc);
      log.error(`an update from another server for ${describeDoc(room.key)} does not decode; dropped`, error);
      return;
    }
    if (!dropPending(room.doc)) return;
    this.held.push(update);
    this.start();
  }

  /**
   * Applies the held remote updates. True when some still do not integrate: they stay held for the next store
   * read (their dependencies were committed after the last one began).
   */
  private applyHeld(): boolean {
    const held = this.held;
    this.held = [];
    if (held.length === 0) return false;
    const doc = this.opts.room.doc;
    doc.transact(() => {
      for (const update of held) Y.applyUpdate(doc, update, REMOTE);
    }, REMOTE);
    if (!dropPending(doc)) return false;
    this.held = held;
    return true;
  }

  private start(): void {
    this.opts.track(this.run(), 'catching up from the store');
  }

  /**
   * Applies every stored update of the epoch with the `REMOTE` origin (what this room lacked is relayed to its
   * peers), then the held ones. Serialised; a request during a run schedules one more run.
   */
  private run(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const { room, store, log } = this.opts;
    const rounds = async (): Promise<void> => {
      // Bounded: a new run is only requested by a gap or a non-integrating update during this one.
      for (let round = 0; round < MAX_ROUNDS && !room.closed; round++) {
        this.again = false;
        const stored = await store.loadDocument(room.key, room.epoch);
        if (room.closed) return;
        room.doc.transact(() => {
          for (const update of stored.updates) Y.applyUpdate(room.doc, update, REMOTE);
        }, REMOTE);
        dropPending(room.doc);
        if (this.applyHeld()) this.again = true;
        if (!this.again) return;
      }
    };
    this.running = rounds().finally(() => {
      this.running = undefined;
      if (room.closed || !this.applyHeld()) return;
      // Five store reads did not bring their dependencies: a broken server; the store has what was committed.
      log.warn(`updates from another server for ${describeDoc(room.key)} do not integrate; dropped`);
      this.held = [];
    });
    return this.running;
  }
}
