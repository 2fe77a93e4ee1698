/**
 * Undo that undoes only this user's own edits (DESIGN.md, STYLE.md §11): one `Y.UndoManager` per shared `Y.Doc`,
 * created by the session and handed to the adapter in `bind`. It tracks only the origins the bound adapter declares
 * with `track()` (its own transactions), so remote updates, the seed (SEED_ORIGIN) and edits re-applied after a
 * session reset are never undone. A new doc (session reset) gets a new, empty manager: old stacks cannot apply to it.
 */
import * as Y from 'yjs';
import type { DeleteSet } from './remote-update.js';

/**
 * Edits less than this far apart form one undo step. 500 ms is Yjs's default: about the pause between words while
 * typing, so Ctrl+Z removes a burst of typing, not one character (CodeMirror groups 1250 ms, Quill 1000 ms).
 */
const CAPTURE_TIMEOUT_MS = 500;

/**
 * Whether `item` is a node (a `Y.XmlElement` or `Y.XmlText`) that still holds content: the `deleteFilter` of the
 * manager keeps such a node when an undo would delete it. An undo deletes what this user's undone step inserted; a
 * paragraph this user made, that a collaborator has typed into since, would take the collaborator's words with it
 * (deleting a type deletes its children: yjs `src/structs/ContentType.js` `delete`). With the filter the undo
 * removes this user's own characters and leaves the node with the collaborator's. Yjs filters the items of one undo
 * children before parents (`src/utils/UndoManager.js`, `popStackItem`), so what a node still holds at that moment
 * is what the undo leaves; an emptied node is deleted as before. Plain `Y.Text` (Quill, CodeMirror, textarea) holds
 * no nodes: nothing changes there.
 */
function holdsContent(item: Y.Item): boolean {
  if (!(item.content instanceof Y.ContentType)) return false;
  for (let child = item.content.type._start; child !== null; child = child.right) if (child.countable && !child.deleted) return true;
  return false;
}

export class LocalUndo {
  /** The manager itself, for code that drives it directly. */
  readonly manager: Y.UndoManager;

  constructor(doc: Y.Doc) {
    // The whole doc is in scope: every adapter writes one root type, and only tracked origins count anyway.
    this.manager = new Y.UndoManager(doc, { trackedOrigins: new Set(), captureTimeout: CAPTURE_TIMEOUT_MS, deleteFilter: (item) => !holdsContent(item) });
  }

  /** Makes transactions whose origin is `origin` undoable (the adapter's own writes); returns the function that stops it. */
  track(origin: unknown): () => void {
    this.manager.trackedOrigins.add(origin);
    return () => {
      this.manager.trackedOrigins.delete(origin);
    };
  }

  /** True when `origin` is this manager, i.e. a transaction is an undo or a redo of ours. */
  isOwn(origin: unknown): boolean {
    return origin === this.manager;
  }

  /** Reverts this user's last undo step; false when there was none. */
  undo(): boolean {
    return this.undoStep() !== null;
  }

  /**
   * Reverts this user's last undo step like `undo()`; returns what that step had deleted (the Yjs stack item's
   * `deletions`, which the undo restored), or null when there was no step.
   */
  undoStep(): { deletions: DeleteSet } | null {
    const step = this.manager.undo();
    return step ? { deletions: step.deletions } : null;
  }

  /** Re-applies the last undone step; false when there was none. */
  redo(): boolean {
    return this.manager.redo() !== null;
  }

  /** Starts a new undo step at the next edit (after a paste, say), whatever the capture timeout. */
  stopCapturing(): void {
    this.manager.stopCapturing();
  }

  get canUndo(): boolean {
    return this.manager.undoStack.length > 0;
  }

  get canRedo(): boolean {
    return this.manager.redoStack.length > 0;
  }

  destroy(): void {
    this.manager.destroy();
  }
}
