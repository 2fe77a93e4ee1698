/**
 * Quill's Delta ↔ the shared `Y.Text` (the Quill adapter's binding; the binding object is the origin of its writes).
 *
 * The `Y.Text` and Quill's document hold the same Delta, position for position, with one translation: a line break
 * inside a block, `{ break: true }` in the shared text [RT-S3], is `{ 'wave-break': true }` in Quill, an inline embed
 * of length 1 registered here. Quill's own `break` blot is its empty-line placeholder, of length 0, which Quill
 * removes beside other content: holding the shared break in it would put every later Quill index one behind the
 * `Y.Text`'s, and Quill's typing one character early.
 *
 * - Remote → Quill: an event's delta is applied with `updateContents`; every insert names, as `null`, each format
 *   Quill has used that it does not carry, so that Quill never extends a neighbour's format over it.
 * - Quill → remote: each `text-change` Quill makes (whatever its source but this binding) is applied to the `Y.Text`
 *   as the same delta. Formats Quill has no name for (ours, RICHTEXT.md [RT-S2]) are never in Quill's deltas, so
 *   Quill's edits leave them as they are on the characters it did not delete.
 */
import type * as Y from 'yjs';

/** A Delta op, on either side. */
export interface QuillOp {
  insert?: string | Record<string, unknown>;
  retain?: number | Record<string, unknown>;
  delete?: number;
  attributes?: Record<string, unknown>;
}

/** The part of Quill 2's API this binding uses. */
export interface QuillForSync {
  updateContents(delta: { ops: QuillOp[] } | QuillOp[], source?: unknown): unknown;
  setContents(delta: { ops: QuillOp[] } | QuillOp[], source?: unknown): unknown;
  getLength(): number;
  getText(index: number, length: number): string;
  getSelection(): { index: number; length: number } | null;
  setSelection(index: number, length: number, source?: unknown): void;
  on(name: 'editor-change', fn: (...args: unknown[]) => void): unknown;
  off(name: 'editor-change', fn: (...args: unknown[]) => void): unknown;
  scroll: { registry: { query(name: string): unknown; register(...definitions: unknown[]): unknown } };
  constructor: { import(name: 'parchment'): { EmbedBlot: new (...args: never[]) => object } };
}

/** Quill's name of the shared text's `{ break: true }` embed. */
const QUILL_BREAK = 'wave-break';

/** Registers the `wave-break` embed in the registry `quill` uses (the global one, or its own with `formats`). */
function registerBreak(quill: QuillForSync): void {
  const registry = quill.scroll.registry;
  if (registry.query(QUILL_BREAK)) return;
  const { EmbedBlot } = quill.constructor.import('parchment');
  // A `<br>` with a class: the class, looked up before the tag, tells it from Quill's placeholder `<br>`.
  const blot = class extends EmbedBlot {
    static blotName = QUILL_BREAK;
    static tagName = 'BR';
    static className = 'wave-break';
    static value(): true {
      return true;
    }
  };
  registry.register(blot);
}

function isBreak(insert: unknown, key: string): boolean {
  return typeof insert === 'object' && insert !== null && (insert as Record<string, unknown>)[key] === true;
}

/** Shared-text ops → Quill ops. */
export function toQuill(ops: readonly QuillOp[]): QuillOp[] {
  return ops.map((op) => (isBreak(op.insert, 'break') ? { ...op, insert: { [QUILL_BREAK]: true } } : op));
}

/** Quill ops → shared-text ops. */
export function fromQuill(ops: readonly QuillOp[]): QuillOp[] {
  return ops.map((op) => (isBreak(op.insert, QUILL_BREAK) ? { ...op, insert: { break: true } } : op));
}

export class QuillSync {
  /** Every format name Quill has written, each as `null`: added to remote inserts that do not carry it. */
  private readonly unset: Record<string, null> = {};

  constructor(private readonly ytext: Y.Text, private readonly quill: QuillForSync) {
    registerBreak(quill);
    ytext.observe(this.onRemote);
    quill.on('editor-change', this.onQuill);
    quill.setContents(toQuill(ytext.toDelta() as QuillOp[]), this);
  }

  destroy(): void {
    this.ytext.unobserve(this.onRemote);
    this.quill.off('editor-change', this.onQuill);
  }

  private readonly onRemote = (event: Y.YTextEvent, tr: Y.Transaction): void => {
    if (tr.origin === this) return;
    const ops = toQuill(event.delta as QuillOp[]).map((op) =>
      op.insert === undefined ? op : { ...op, attributes: { ...this.unset, ...(op.attributes ?? {}) } },
    );
    this.quill.updateContents(ops, this);
    // Quill's document always ends with a "\n" of its own; it is the shared text's last one when the shared text ends
    // with a "\n" (a Delta document does), else one more (a plain text seeded by a textarea). A remote change that
    // gives the shared text a final "\n" (forceSync with a Delta over a plain text) leaves Quill with both: Quill
    // takes the shared text again, keeping the selection's indices.
    const length = this.quill.getLength();
    if (length === this.ytext.length + 1 && this.quill.getText(length - 2, 1) === '\n') {
      const selection = this.quill.getSelection();
      this.quill.setContents(toQuill(this.ytext.toDelta() as QuillOp[]), this);
      if (selection) this.quill.setSelection(selection.index, selection.length, this);
    }
  };

  private readonly onQuill = (...args: unknown[]): void => {
    const [name, delta, , source] = args as [string, { ops?: QuillOp[] } | undefined, unknown, unknown];
    if (name !== 'text-change' || !delta?.ops) return;
    for (const op of delta.ops) for (const key of Object.keys(op.attributes ?? {})) this.unset[key] = null;
    if (source === this) return;
    const ops = fromQuill(delta.ops);
    this.ytext.doc!.transact(() => this.ytext.applyDelta(ops), this);
  };
}
