/**
 * The REST replace path (server-side forceSync): a document's content replaced for everyone in one transaction. A
 * seeded document gets the replacement as an edit (relayed to every peer, stored, published, with the meta map's
 * replaced marker so that clients know the content was written by the server); an unseeded session is seeded with
 * it instead, under the seed lease (P5), as a client's seed would be.
 */
import * as Y from 'yjs';
import { META_MAP, META_REPLACED_KEY } from 'wave-protocol';
import type { DocKey, Store } from '../store/types.js';
import { newDoc } from '../new-doc.js';

/** Origin of a REST replacement: relayed to every peer (none of them sent it) and stored. */
const SERVER_WRITE = Symbol('server write');

/** The room as the replace path sees it: its document and session, read at each use. */
export interface ReplaceRoom {
  readonly key: DocKey;
  readonly doc: Y.Doc;
  readonly epoch: number;
  readonly seeded: boolean;
}

export interface ReplaceOptions {
  room: ReplaceRoom;
  store: Store;
  /** `RoomSettings.serverId`: names this server in the seed-lease holder. */
  serverId: string;
  /** `RoomSettings.leaseTtlMs`. */
  leaseTtlMs: number;
  /** Takes a seed the store committed into the room (`Room.adoptSeed`). */
  adoptSeed: (epoch: number, content: Uint8Array) => void;
  /**
   * Runs `change` as one transaction of the room's doc with `origin` and resolves once what it changed is
   * committed; when `change` throws, the room fails (D7) and the error is thrown again.
   */
  transactStored: (change: () => void, origin: unknown, what: string) => Promise<void>;
}

/**
 * Replaces the content (`write` empties and fills the shared types) and resolves once it is committed. Throws a plain
 * `Error` when a client holds the seed lease of the unseeded session right now, or the seed could not be committed.
 */
export async function replaceContent(opts: ReplaceOptions, write: (doc: Y.Doc) => void): Promise<void> {
  const { room, store } = opts;
  if (!room.seeded) {
    const scratch = newDoc();
    scratch.transact(() => write(scratch));
    const content = Y.encodeStateAsUpdate(scratch);
    scratch.destroy();
    const epoch = room.epoch;
    const holder = `rest:${opts.serverId}:${Date.now()}`;
    const now = Date.now();
    if (!(await store.acquireSeedLease(room.key, epoch, holder, now, opts.leaseTtlMs))) {
      throw new Error('a client is seeding this document right now; retry');
    }
    if (!(await store.commitSeed(room.key, epoch, holder, content, Date.now()))) {
      throw new Error('the document could not be seeded; retry');
    }
    opts.adoptSeed(epoch, content);
    return;
  }
  await opts.transactStored(
    () => {
      write(room.doc);
      room.doc.getMap(META_MAP).set(META_REPLACED_KEY, `server:${Date.now()}`);
    },
    SERVER_WRITE,
    'replacing the content',
  );
}
