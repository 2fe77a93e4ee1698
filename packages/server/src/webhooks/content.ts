/** The `data` of a webhook body: the document as the REST API renders it, read from the store. */
import * as Y from 'yjs';
import { renderContent } from '../rest-render.js';
import type { DocKey, OutboxEvent, Store } from '../store/types.js';
import { newDoc } from '../new-doc.js';

export interface EventData {
  docId: string;
  epoch: number;
  /** The document's version when the data was read; the content is at least that version's. */
  version: number;
  text?: string;
  delta?: unknown[];
  html?: string;
  [extra: string]: unknown;
}

/** Content of `doc` as stored now, or `undefined` when it has no session (deleted). */
export async function storedContent(store: Store, doc: DocKey): Promise<{ epoch: number; text: string; delta: unknown[]; html: string } | undefined> {
  const session = await store.getSession(doc);
  if (!session) return undefined;
  const stored = await store.loadDocument(doc, session.epoch);
  const ydoc = newDoc();
  try {
    ydoc.transact(() => {
      for (const update of stored.updates) Y.applyUpdate(ydoc, update);
    });
    return { epoch: session.epoch, ...renderContent(ydoc) };
  } finally {
    ydoc.destroy();
  }
}

/**
 * Builds the data of `event` at delivery time. The version is read BEFORE the content, so the content is at least
 * as new as the version says: a receiver that keeps the highest version never keeps older content.
 * - doc.deleted: `{ docId, epoch, version }` (no content).
 * - session.ended: the content the session ended with (written with the event), the version of that time.
 * - doc.changed, user.joined, user.left: the stored content now (user.*: plus `user`).
 */
export async function eventData(store: Store, event: OutboxEvent): Promise<EventData> {
  const change = await store.docChange(event.doc);
  const base = { docId: event.doc.docId, epoch: change?.epoch ?? 0, version: change?.version ?? 0 };
  if (event.type === 'doc.deleted') return base;
  if (event.type === 'session.ended' && event.payload !== null) return { ...base, ...event.payload };
  const content = await storedContent(store, event.doc);
  if (!content) return base;
  return { ...base, ...content, ...(event.payload ?? {}) };
}
