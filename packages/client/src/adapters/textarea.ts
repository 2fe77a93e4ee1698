/**
 * `app: 'text'` — a plain `<textarea>` bound to a `Y.Text`, which may be a rich document: the textarea shows its
 * plain view (plain-view.ts: one line per line, a break as a line break, an image as nothing) and every index goes
 * through that view's mapping.
 *
 * Local edits: on `input`, the new value is diffed against `shadow` (the value both sides last agreed on) and
 * written as one splice at the mapped positions, placed at the caret when ambiguous. Remote edits: the Yjs delta is
 * mapped to a plain change, and each of its ops is applied with
 * `setRangeText(…, 'preserve')`, which keeps the local caret and selection on the same characters and does not
 * scroll. IME: while a composition is open, remote deltas are queued (writing into the textarea would cancel the
 * composition); at `compositionend` the composed text is written, then the queued changes are shown.
 * Undo: the textarea's own history would revert remote edits too, so its keys and `beforeinput` history requests are
 * taken over and sent to the session's undo manager, which tracks this adapter's writes only.
 */
import * as Y from 'yjs';
import { invalidConfig } from '../core/errors.js';
import type { LocalUndo } from '../core/undo.js';
import { caretAfterHistory, historyInput, historyKey, type HistoryAction } from './history-keys.js';
import { replaceText } from './replace.js';
import { diffAtCursor, mapIndex } from './text-diff.js';
import { PlainView, writeSplice, type PlainOp, type YDeltaOp } from '../core/plain-view.js';
import { TEXT_TYPE } from 'wave-protocol';
import type { AdapterFactory, EditorAdapter } from './types.js';
import { textareaPresence } from '../presence/host-textarea.js';
import type { PresenceHost } from '../presence/types.js';

export const createTextareaAdapter: AdapterFactory = (editor) => {
  if (typeof HTMLTextAreaElement === 'undefined' || !(editor instanceof HTMLTextAreaElement)) {
    throw invalidConfig('editor', "a <textarea> element for app 'text'", editor);
  }
  return new TextareaAdapter(editor);
};

class TextareaAdapter implements EditorAdapter {
  readonly kind = 'text' as const;
  readonly textName = TEXT_TYPE;
  private ytext: Y.Text | null = null;
  /** The plain view of `ytext`, always current with it (also during a composition, when the textarea is not). */
  private view = new PlainView();
  /** The textarea value that matches `view` as of the last reconciliation. */
  private shadow = '';
  private composing = false;
  /** Remote changes (of the plain text) received during a composition, oldest first. */
  private queued: PlainOp[][] = [];
  private undo: LocalUndo | null = null;
  private untrack: (() => void) | null = null;

  constructor(private readonly el: HTMLTextAreaElement) {}

  setReadOnly(readOnly: boolean): void {
    this.el.readOnly = readOnly;
  }

  get container(): HTMLElement {
    return this.el;
  }

  createPresence(): PresenceHost {
    return textareaPresence(this.el, {
      toY: (index) => this.view.toY(index, 'after-shown'),
      toEditor: (y) => this.view.toPlain(y),
    });
  }

  seed(doc: Y.Doc): void {
    doc.getText(TEXT_TYPE).insert(0, this.el.value);
  }

  replaceContent(doc: Y.Doc, content: unknown): void {
    replaceText(doc, content, this.kind);
  }

  bind(doc: Y.Doc, _awareness?: unknown, undo?: LocalUndo): void {
    this.unbind();
    const ytext = doc.getText(TEXT_TYPE);
    this.ytext = ytext;
    this.view = PlainView.of(ytext);
    this.replaceValue(this.view.text);
    ytext.observe(this.onRemote);
    this.el.addEventListener('input', this.onInput);
    this.el.addEventListener('compositionstart', this.onCompositionStart);
    this.el.addEventListener('compositionend', this.onCompositionEnd);
    if (undo) {
      this.undo = undo;
      this.untrack = undo.track(this);
      this.el.addEventListener('keydown', this.onKeyDown);
      this.el.addEventListener('beforeinput', this.onBeforeInput);
    }
  }

  unbind(): void {
    if (!this.ytext) return;
    this.ytext.unobserve(this.onRemote);
    this.el.removeEventListener('input', this.onInput);
    this.el.removeEventListener('compositionstart', this.onCompositionStart);
    this.el.removeEventListener('compositionend', this.onCompositionEnd);
    this.el.removeEventListener('keydown', this.onKeyDown);
    this.el.removeEventListener('beforeinput', this.onBeforeInput);
    this.untrack?.();
    this.untrack = null;
    this.undo = null;
    this.ytext = null;
    this.composing = false;
    this.queued = [];
  }

  destroy(): void {
    this.unbind();
  }

  private readonly onInput = (): void => {
    if (!this.composing) this.writeLocal([]);
  };

  private readonly onKeyDown = (event: KeyboardEvent): void => {
    const action = historyKey(event);
    if (action) this.runHistory(action, event);
  };

  private readonly onBeforeInput = (event: InputEvent): void => {
    const action = historyInput(event);
    if (action) this.runHistory(action, event);
  };

  /** Undo/redo through the session's undo manager; the native history never runs. */
  private runHistory(action: HistoryAction, event: Event): void {
    event.preventDefault();
    const undo = this.undo;
    // During a composition the IME owns the text; its own undo would not reach Yjs, so nothing happens.
    if (!undo || this.composing) return;
    if (action === 'undo') undo.undo();
    else undo.redo();
  }

  private readonly onCompositionStart = (): void => {
    this.composing = true;
  };

  private readonly onCompositionEnd = (): void => {
    this.composing = false;
    const queued = this.queued;
    this.queued = [];
    this.writeLocal(queued);
  };

  /**
   * Writes the difference between `shadow` and the textarea into `ytext`. `missed` are remote changes that
   * `view` has but the textarea does not show yet (queued during a composition): the local splice is moved
   * through them, then the textarea is brought up to `view`.
   */
  private writeLocal(missed: PlainOp[][]): void {
    const ytext = this.ytext;
    if (!ytext) return;
    const value = this.el.value;
    if (value !== this.shadow) {
      const splice = diffAtCursor(this.shadow, value, this.el.selectionEnd);
      let start = splice.index;
      let end = splice.index + splice.remove;
      for (const delta of missed) {
        start = mapIndex(start, delta, false);
        end = mapIndex(end, delta, false);
      }
      ytext.doc?.transact(() => writeSplice(ytext, this.view, start, end - start, splice.insert), this);
      if (missed.length === 0) {
        this.shadow = value;
        return;
      }
      const caret = start + splice.insert.length;
      this.replaceValue(this.view.text);
      this.el.setSelectionRange(caret, caret);
      return;
    }
    if (missed.length > 0) for (const delta of missed) this.applyDelta(delta);
  }

  private readonly onRemote = (event: Y.YTextEvent, tr: Y.Transaction): void => {
    // Our own writes moved `view` as they were made (writeSplice).
    if (tr.origin === this) return;
    const delta = this.view.apply(event.delta as YDeltaOp[]);
    if (this.composing) {
      this.queued.push(delta);
      return;
    }
    // Anything typed but not yet seen by `input` (should not happen: input fires synchronously) is written first.
    if (this.el.value !== this.shadow) {
      this.writeLocal([delta]);
      return;
    }
    this.applyDelta(delta);
    if (this.undo?.isOwn(tr.origin)) {
      // Our own undo/redo: the caret goes to the change, as after the textarea's native undo.
      const caret = caretAfterHistory(event.delta as YDeltaOp[]);
      if (caret !== null) {
        const at = this.view.toPlain(caret);
        this.el.setSelectionRange(at, at);
      }
    }
  };

  private applyDelta(delta: readonly PlainOp[]): void {
    let index = 0;
    for (const op of delta) {
      if (op.retain !== undefined) index += op.retain;
      else if (op.insert !== undefined) {
        this.el.setRangeText(op.insert, index, index, 'preserve');
        index += op.insert.length;
      } else if (op.delete !== undefined) {
        this.el.setRangeText('', index, index + op.delete, 'preserve');
      }
    }
    this.shadow = this.el.value;
  }

  /** Sets the textarea to `next` by replacing only the part that differs, keeping the selection where it can. */
  private replaceValue(next: string): void {
    const current = this.el.value;
    if (current !== next) {
      const splice = diffAtCursor(current, next, -1);
      this.el.setRangeText(splice.insert, splice.index, splice.index + splice.remove, 'preserve');
    }
    this.shadow = this.el.value;
  }
}
