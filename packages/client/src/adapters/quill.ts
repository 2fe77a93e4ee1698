/**
 * `app: 'editorC'` — Quill 2, through `QuillSync` (quill-sync.ts: Delta ↔ `Y.Text` with formatting attributes, the
 * shared text's line-break embed translated). The binding is the transaction origin of the edits it writes.
 *
 * Undo: Quill's history module would undo remote edits too (its stack records every change). While bound, its
 * `change()` — where its keys, its `beforeinput` history requests and `quill.history.undo()/redo()` (toolbar
 * handlers) all end — goes to the session's undo manager instead, which tracks the binding's writes only, and its
 * own stack stays empty. The keys are taken before Quill's keyboard module sees them, so that they are the same in
 * every editor: Quill binds Ctrl+Y only on Windows.
 */
import type * as Y from 'yjs';
import { invalidConfig } from '../core/errors.js';
import type { LocalUndo } from '../core/undo.js';
import { caretAfterHistory, historyKey } from './history-keys.js';
import { replaceDelta } from './replace.js';
import { fromQuill, QuillSync, type QuillForSync, type QuillOp } from './quill-sync.js';
import { TEXT_TYPE } from 'wave-protocol';
import type { AdapterFactory, EditorAdapter } from './types.js';
import { quillPresence, type QuillForPresence } from '../presence/host-quill.js';
import type { PresenceHost } from '../presence/types.js';

/** The part of Quill's API used here (quill 2.0). */
interface QuillLike {
  root: HTMLElement;
  container: HTMLElement;
  getContents(): { ops: Array<Record<string, unknown>> };
  setContents(delta: unknown, source?: unknown): unknown;
  on(name: string, fn: (...args: unknown[]) => void): unknown;
  off(name: string, fn: (...args: unknown[]) => void): unknown;
  getModule(name: string): unknown;
  setSelection(index: number, length: number, source?: string): void;
  clipboard: { convert(input: { html?: string; text?: string }): { ops: Array<Record<string, unknown>> } };
  enable(enabled?: boolean): void;
}

/** The part of Quill's history module (quill 2.0 `modules/history.js`) that is rerouted while bound. */
interface QuillHistory {
  change(source: 'undo' | 'redo', dest: 'undo' | 'redo'): void;
  record(change: unknown, before: unknown): void;
  clear(): void;
}

function isQuill(editor: unknown): editor is QuillLike {
  const q = editor as Partial<QuillLike> | null;
  return (
    typeof q === 'object' && q !== null &&
    typeof q.getContents === 'function' && typeof q.setContents === 'function' &&
    typeof q.on === 'function' && typeof q.getModule === 'function' &&
    typeof HTMLElement !== 'undefined' && q.root instanceof HTMLElement
  );
}

export const createQuillAdapter: AdapterFactory = (editor) => {
  if (!isQuill(editor)) throw invalidConfig('editor', "a Quill 2 instance (new Quill(...)) for app 'editorC'", editor);
  return new QuillAdapter(editor);
};

class QuillAdapter implements EditorAdapter {
  readonly kind = 'editorC' as const;
  readonly textName = TEXT_TYPE;
  private binding: QuillSync | null = null;
  private ytext: Y.Text | null = null;
  private undo: LocalUndo | null = null;
  private untrack: (() => void) | null = null;
  private history: QuillHistory | null = null;

  constructor(private readonly quill: QuillLike) {}

  setReadOnly(readOnly: boolean): void {
    this.quill.enable(!readOnly);
  }

  get container(): HTMLElement {
    return this.quill.container;
  }

  createPresence(): PresenceHost {
    return quillPresence(this.quill as unknown as QuillForPresence);
  }

  seed(doc: Y.Doc): void {
    doc.getText(TEXT_TYPE).applyDelta(fromQuill(this.quill.getContents().ops as QuillOp[]));
  }

  /** A Delta (`{ ops }`) as is, or an HTML string through Quill's own clipboard conversion. */
  replaceContent(doc: Y.Doc, content: unknown): void {
    let ops: unknown = (content as { ops?: unknown } | null)?.ops;
    if (typeof content === 'string') ops = this.quill.clipboard.convert({ html: content }).ops;
    if (!Array.isArray(ops)) throw invalidConfig('forceSync(content)', "a Quill Delta ({ ops }) or an HTML string for app 'editorC'", content);
    replaceDelta(doc, fromQuill(ops as QuillOp[]) as Array<Record<string, unknown>>);
  }

  bind(doc: Y.Doc, _awareness?: unknown, undo?: LocalUndo): void {
    this.unbind();
    const ytext = doc.getText(TEXT_TYPE);
    const binding = new QuillSync(ytext, this.quill as unknown as QuillForSync);
    this.binding = binding;
    if (!undo) return;
    this.undo = undo;
    this.untrack = undo.track(binding);
    this.ytext = ytext;
    // Registered after the binding's observer: the editor already shows the change when the caret is placed.
    ytext.observe(this.onHistoryApplied);
    // Capture: before Quill's keyboard module, which skips events whose default was prevented.
    this.quill.root.addEventListener('keydown', this.onKeyDown, true);
    const history = this.quill.getModule('history') as QuillHistory | undefined;
    if (history && typeof history.change === 'function') {
      history.clear();
      history.change = (source) => {
        if (source === 'undo') undo.undo();
        else undo.redo();
      };
      history.record = () => {};
      this.history = history;
    }
  }

  unbind(): void {
    this.binding?.destroy();
    this.binding = null;
    this.ytext?.unobserve(this.onHistoryApplied);
    this.ytext = null;
    this.quill.root.removeEventListener('keydown', this.onKeyDown, true);
    this.untrack?.();
    this.untrack = null;
    this.undo = null;
    const history = this.history;
    if (history) {
      // The prototype's methods come back; the stack starts empty (it never saw the session's edits).
      delete (history as Partial<QuillHistory>).change;
      delete (history as Partial<QuillHistory>).record;
      history.clear();
      this.history = null;
    }
  }

  private readonly onKeyDown = (event: KeyboardEvent): void => {
    const action = historyKey(event);
    const undo = this.undo;
    if (!action || !undo) return;
    event.preventDefault();
    if (action === 'undo') undo.undo();
    else undo.redo();
  };

  /** After our own undo/redo, the caret goes to the change, as after Quill's native undo. */
  private readonly onHistoryApplied = (event: Y.YTextEvent, tr: Y.Transaction): void => {
    if (!this.undo?.isOwn(tr.origin)) return;
    const caret = caretAfterHistory(event.delta as Parameters<typeof caretAfterHistory>[0]);
    if (caret !== null) this.quill.setSelection(caret, 0, 'user');
  };

  destroy(): void {
    this.unbind();
  }
}
