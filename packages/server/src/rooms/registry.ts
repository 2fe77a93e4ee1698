/**
 * The rooms loaded on this server, by document. Loading and unloading of one document are serialised: a room being
 * unloaded finishes (its commits flushed) before a new one for the same document loads, so two `Y.Doc`s never
 * serve one document in one process.
 */
import type { CommitQueue } from '../store/commit-queue.js';
import type { DocKey, KeyRecord, Store } from '../store/types.js';
import type { Logger } from '../log.js';
import { JoinRefused } from './peer.js';
import type { JoinRequest, RoomPeer } from './peer.js';
import { Room } from './room.js';
import { describeDoc } from './origins.js';
import { SessionTouches } from './session-touches.js';
import type { RoomOptions } from './room.js';
import type { RoomEvents } from '../webhooks/events.js';

export interface RegistryOptions extends Omit<RoomOptions, 'persistent' | 'onIdle' | 'sessions'> {
  /**
   * How long a room without peers stays loaded. A reload costs a store read and a rebuild of the doc; 1 s absorbs
   * page reloads and reconnects without keeping idle documents in memory (RELIABILITY.md S14).
   */
  unloadDelayMs: number;
  /** Peers per document when the key sets no `maxUsers`. */
  maxUsersPerDoc: number;
  log: Logger;
  /** Webhook events of joins, leaves and ended sessions (webhooks/events.ts); none when absent. */
  events?: RoomEvents;
}

/** Map key of a document: account and docId cannot collide because a docId has no control characters. */
export function roomId(doc: DocKey): string {
  return `${doc.account}\u0000${doc.docId}`;
}

export class RoomRegistry {
  private readonly rooms = new Map<string, Room>();
  /** Tail of the serialised operations per document. */
  private readonly chains = new Map<string, Promise<void>>();
  private readonly unloadTimers = new Map<string, NodeJS.Timeout>();
  private closing = false;
  /** The user each peer joined as, for user.left. */
  private readonly users = new WeakMap<RoomPeer, JoinRequest['user']>();

  /** Keeps the sessions of the rooms with peers alive: one store call per sweep for all of them. */
  private readonly sessions: SessionTouches;

  constructor(
    private readonly store: Store,
    private readonly queue: CommitQueue,
    private readonly opts: RegistryOptions,
  ) {
    this.sessions = new SessionTouches(store, opts.graceMs, opts.log);
  }

  /** Rooms currently loaded. */
  get size(): number {
    return this.rooms.size;
  }

  /** Rooms whose document is held in compact form (`Room.compact`); counted when read, for /metrics. */
  get compactCount(): number {
    let count = 0;
    for (const room of this.rooms.values()) if (room.compact) count++;
    return count;
  }

  get(doc: DocKey): Room | undefined {
    return this.rooms.get(roomId(doc));
  }

  /** The document's live room, loaded from the store when absent or stale. Runs inside `serialize(id)`. */
  private async loaded(id: string, doc: DocKey, key: KeyRecord): Promise<Room> {
    this.cancelUnload(id);
    let room = this.rooms.get(id);
    if (room && (room.stale || (room.size === 0 && !(await room.revalidate())))) {
      await this.dispose(id, room);
      room = undefined;
    }
    if (!room) {
      room = await Room.load(doc, this.store, this.queue, {
        ...this.opts,
        persistent: key.persistent,
        sessions: this.sessions,
        onIdle: (idle) => this.scheduleUnload(id, idle),
        onLeft: (peer) => {
          const user = this.users.get(peer);
          if (user !== undefined && room) this.opts.events?.userLeft(doc, room.epoch, user);
        },
      });
      this.rooms.set(id, room);
    }
    return room;
  }

  /**
   * Loads the document's room when needed and adds the peer to it. Throws `JoinRefused` (session full, closing).
   */
  join(doc: DocKey, key: KeyRecord, peer: RoomPeer, request: JoinRequest): Promise<Room> {
    const id = roomId(doc);
    return this.serialize(id, async () => {
      if (this.closing) throw new JoinRefused('server_error', 'the server is shutting down; reconnect');
      const room = await this.loaded(id, doc, key);
      const limit = key.maxUsers ?? this.opts.maxUsersPerDoc;
      if (room.size >= limit) {
        if (room.size === 0) this.scheduleUnload(id, room);
        throw new JoinRefused('session_full', `document ${JSON.stringify(doc.docId)} already has ${limit} connections`);
      }
      if (!peer.open) {
        if (room.size === 0) this.scheduleUnload(id, room);
        throw new JoinRefused('server_error', 'connection closed while joining');
      }
      room.join(peer, request);
      this.users.set(peer, request.user);
      this.opts.events?.userJoined(doc, room.epoch, request.user);
      return room;
    });
  }

  /**
   * Runs `task` on the document's room, loading it when needed (REST PUT) and unloading it afterwards when nobody is
   * connected. Serialised with joins and unloads of the same document.
   */
  withRoom<T>(doc: DocKey, key: KeyRecord, task: (room: Room) => Promise<T>): Promise<T> {
    const id = roomId(doc);
    return this.serialize(id, async () => {
      if (this.closing) throw new JoinRefused('server_error', 'the server is shutting down; retry');
      const room = await this.loaded(id, doc, key);
      try {
        return await task(room);
      } finally {
        if (room.size === 0) this.scheduleUnload(id, room);
      }
    });
  }

  /** Unloads every room (after their peers are gone) and refuses new joins. */
  async close(): Promise<void> {
    this.closing = true;
    for (const timer of this.unloadTimers.values()) clearTimeout(timer);
    this.unloadTimers.clear();
    await Promise.all(
      [...this.rooms].map(([id, room]) => this.serialize(id, () => this.dispose(id, room))),
    );
    await this.sessions.close();
  }

  private scheduleUnload(id: string, room: Room): void {
    if (this.closing) return;
    this.cancelUnload(id);
    const timer = setTimeout(() => {
      this.unloadTimers.delete(id);
      void this.serialize(id, async () => {
        if (this.rooms.get(id) !== room || room.size !== 0) return;
        // Unloaded because its last user left (not a shutdown): the session ended, with this content.
        const ended = room.stale ? undefined : this.opts.events?.sessionEnded(room.key, room.epoch, room.doc);
        await this.dispose(id, room);
        await ended?.write();
      }).catch((error: unknown) => this.opts.log.error(`unloading ${describeDoc(room.key)}`, error));
    }, this.opts.unloadDelayMs);
    timer.unref();
    this.unloadTimers.set(id, timer);
  }

  private cancelUnload(id: string): void {
    const timer = this.unloadTimers.get(id);
    if (timer) clearTimeout(timer);
    this.unloadTimers.delete(id);
  }

  private async dispose(id: string, room: Room): Promise<void> {
    this.cancelUnload(id);
    try {
      await room.close();
    } finally {
      if (this.rooms.get(id) === room) this.rooms.delete(id);
    }
  }

  /** Runs `task` after every earlier task of the same document settled. */
  private serialize<T>(id: string, task: () => Promise<T>): Promise<T> {
    const previous = this.chains.get(id) ?? Promise.resolve();
    const result = previous.then(task);
    const tail = result.then(
      () => {},
      () => {},
    );
    this.chains.set(id, tail);
    void tail.then(() => {
      if (this.chains.get(id) === tail) this.chains.delete(id);
    });
    return result;
  }
}
