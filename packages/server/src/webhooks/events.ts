/**
 * Room lifecycle events for webhooks: user.joined, user.left and session.ended are written to the store's outbox
 * (changes and deletions are written by the store itself, in their transactions). Writing is best effort from the
 * room's point of view: a store error is logged and never fails a join or an unload.
 */
import type * as Y from 'yjs';
import { sanitizeUser } from 'wave-protocol';
import type { Logger } from '../log.js';
import { renderContent } from '../rest-render.js';
import type { DocKey, Store, WebhookEventType } from '../store/types.js';
import type { JoinRequest } from '../rooms/peer.js';

export interface RoomEvents {
  userJoined(doc: DocKey, epoch: number, user: JoinRequest['user']): void;
  userLeft(doc: DocKey, epoch: number, user: JoinRequest['user']): void;
  /**
   * The last peer left and the room unloaded: the natural save point. `ydoc` is the room's document, read at once
   * (the event carries this content, so a receiver gets it even after the stored session ends).
   */
  sessionEnded(doc: DocKey, epoch: number, ydoc: Y.Doc): { write(): Promise<void> };
}

export function storeRoomEvents(store: Store, log: Logger): RoomEvents {
  const write = (doc: DocKey, type: WebhookEventType, payload: Record<string, unknown>): Promise<void> =>
    store.enqueueEvent(doc, type, payload, Date.now()).then(
      () => {},
      (error: unknown) => log.error(`webhook event ${type}`, error),
    );
  // The identity the room shows to other users (name, email, id, avatar), sanitised the same way.
  const user = (u: JoinRequest['user']) => ({ ...sanitizeUser(u) });
  return {
    userJoined: (doc, epoch, u) => void write(doc, 'user.joined', { user: user(u), epoch }),
    userLeft: (doc, epoch, u) => void write(doc, 'user.left', { user: user(u), epoch }),
    sessionEnded: (doc, epoch, ydoc) => {
      const payload = { epoch, ...renderContent(ydoc) };
      return { write: () => write(doc, 'session.ended', payload) };
    },
  };
}
