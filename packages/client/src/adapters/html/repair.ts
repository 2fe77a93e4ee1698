/**
 * Who writes repairs (wave-richtext `repairsOf`): what concurrent edits leave odd (a short table row, invalid list
 * nesting, a missing final `"\n"`) is already shown canonically by every peer; writing it into the document only
 * makes the stored text say what is shown. Invariant: among the clients present in awareness, only the one with
 * the lowest Yjs client id writes, in its own transaction with `REPAIR_ORIGIN` (not undoable: an undo would bring
 * the odd shape back). Repairs are idempotent, so writing them again after each change is harmless; two clients
 * briefly both thinking they are the lowest (awareness in flight) at worst pad a row twice, which the next repair
 * pads the other rows for, never losing a character.
 */
import type * as Y from 'yjs';
import type { Awareness } from 'y-protocols/awareness';
import { applyRepairs, repairsOf } from 'wave-richtext';

export const REPAIR_ORIGIN = Symbol('wave-richtext-repair');

export class RepairWriter {
  private scheduled = false;

  constructor(
    private readonly ytext: Y.Text,
    private readonly awareness: Awareness,
    private readonly readOnly: () => boolean,
    /** Writes the editor's unread edits first, so that showing the repair cannot drop them. */
    private readonly flushLocal: () => void,
  ) {
    awareness.on('change', this.check);
  }

  /** After a change: repairs are written in a microtask, outside the transaction and observers that saw it. */
  readonly check = (): void => {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      const doc = this.ytext.doc;
      if (!doc || this.readOnly() || !this.isWriter(doc.clientID)) return;
      this.flushLocal();
      const list = repairsOf(this.ytext);
      if (list.length > 0) applyRepairs(this.ytext, list, REPAIR_ORIGIN);
    });
  };

  private isWriter(self: number): boolean {
    for (const id of this.awareness.getStates().keys()) if (id < self) return false;
    return true;
  }

  destroy(): void {
    this.awareness.off('change', this.check);
  }
}
