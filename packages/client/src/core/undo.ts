/**
 * Undo that undoes only this user's own edits (DESIGN.md, STYLE.md §11): one `Y.UndoManager` per shared `Y.Doc`,
 * created by the session and handed to the adapter in `bind`. It tracks only the origins the bound adapter declares
 * with `track()` (its own transactions), so remote updates, the seed (SEED_ORIGIN) and edits re-applied after a
 * session reset are never undone. A new doc (session reset) gets a new, empty manager: old stacks cannot apply to it.
 */
import * as Y from 'yjs';

/** A Yjs delete set (the structs an undo step restored). */
type DeleteSet = ReturnType<typeof Y.createDeleteSet>;

/**
 * Edits less than this far apart form one undo step. 500 ms is Yjs's default: about the pause between words while
 * typing, so Ctrl+Z removes a burst of typing, not one character (CodeMirror groups 1250 ms, Quill 1000 ms).
 */
const CAPTURE_TIMEOUT_MS = 500;

export class LocalUndo {
  /** The manager itself, for code that drives it directly. */
  readonly manager: Y.UndoManager;

  constructor(doc: Y.Doc) {
    // The whole doc is in scope: every adapter writes one root type, and only tracked origins count anyway.
    this.manager = new Y.UndoManager(doc, { trackedOrigins: new Set(), captureTimeout: CAPTURE_TIMEOUT_MS });
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
