import type * as Y from 'yjs';
import type { DocBinding } from '../core/session.js';
import type { EditorKind } from '../core/config.js';
import type { PresenceHost } from '../presence/types.js';

/**
 * One editor kind's translation layer (STYLE.md §3: adapters translate, they do not decide). The session tells
 * it when to seed and when to bind; the adapter moves content between the editor and the shared Yjs type, and
 * is the transaction origin of every change it writes.
 */
export interface EditorAdapter extends DocBinding {
  readonly kind: EditorKind;
  /** The element the editor draws its content in; presence UI is placed relative to it. */
  readonly container: HTMLElement;
  /**
   * Settles when the adapter can bind (e.g. its binding library, loaded on demand, has arrived); `start()` waits
   * for it before connecting. Absent: ready at once.
   */
  readonly ready?: Promise<void>;
  /**
   * `forceSync(content)`: empties the shared type of `doc` and writes `content`, given in the editor's own format
   * (string for text and B, Delta or HTML for C, HTML for A and D). Throws `invalid_config` for a wrong format.
   */
  replaceContent?(doc: Y.Doc, content: unknown): void;
  /** The editor's side of the presence UI (caret rectangles, local selection, pointer surface). */
  createPresence?(): PresenceHost;
  /** Removes every listener; called once when the session object lets go of the editor. */
  destroy(): void;
}

/** Creates the adapter for `editor`, or throws `CoeditError('invalid_config')` naming `editor` when it does not fit. */
export type AdapterFactory = (editor: unknown) => EditorAdapter;
