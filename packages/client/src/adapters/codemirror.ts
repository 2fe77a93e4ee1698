/**
 * `app: 'editorB'` (alias `codemirror`) — CodeMirror 5 bound to the shared `Y.Text`, which may be a rich document:
 * CodeMirror shows its plain view (plain-view.ts: one line per line, a break as a line break, an image as nothing),
 * and every index goes through that view's mapping. The adapter is the transaction origin of the edits it writes.
 *
 * Local changes: CodeMirror's `changes` event lists an operation's changes in order, each with positions in the
 * document as it was just before it; each is written as one splice at its mapped place (an operation with several
 * changes, like Enter with auto-indent or a multi-cursor edit, is never turned into one diff of the text between them,
 * which would delete and re-insert a collaborator's concurrent edit there). Remote changes: the Yjs delta is mapped to
 * a plain change and applied with `replaceRange`, inside one operation; a collapsed local caret stays before text a
 * remote user inserts at it.
 *
 * Undo: the session's undo manager tracks this adapter's writes only. Ctrl/Cmd+Z, Ctrl/Cmd+Shift+Z and Ctrl/Cmd+Y go
 * to it, and so do `cm.undo()`/`cm.redo()` (the "undo" command, the context menu, a host's toolbar): CodeMirror's own
 * history records remote edits too. After an undo or redo the caret goes to the change, as after CodeMirror's own.
 *
 * y-codemirror is not used: it indexes the `Y.Text` as plain text (its positions drift past an embed, and it would
 * insert an embed's object into CodeMirror).
 */
import type * as Y from 'yjs';
import { invalidConfig } from '../core/errors.js';
import type { LocalUndo } from '../core/undo.js';
import { TEXT_TYPE } from 'wave-protocol';
import type { AdapterFactory, EditorAdapter } from './types.js';
import { replaceText } from './replace.js';
import { caretAfterHistory } from './history-keys.js';
import { mapIndex } from './text-diff.js';
import { PlainView, writeSplice, type PlainOp, type YDeltaOp } from '../core/plain-view.js';
import { codemirrorPresence, type CodeMirrorForPresence } from '../presence/host-codemirror.js';
import type { PresenceHost } from '../presence/types.js';

/** A position in a CodeMirror 5 document. */
interface Pos {
  line: number;
  ch: number;
}

/** One entry of CodeMirror 5's `changes` event: `from`/`to` are positions in the document as it was just before it. */
interface CmChange {
  from: Pos;
  to: Pos;
  text: string[];
  origin?: string;
}

/** The part of CodeMirror 5's editor API used here (codemirror 5.65). */
interface CodeMirrorLike {
  getValue(): string;
  setValue(value: string): void;
  replaceRange(text: string, from: Pos, to?: Pos, origin?: string): void;
  posFromIndex(index: number): Pos;
  indexFromPos(pos: Pos): number;
  getCursor(which: 'anchor' | 'head'): Pos;
  setSelection(anchor: Pos, head: Pos, options?: { scroll?: boolean }): void;
  operation<T>(fn: () => T): T;
  addKeyMap(map: object): void;
  setOption(name: string, value: unknown): void;
  getDoc(): unknown;
  on(name: string, fn: (...args: never[]) => void): void;
  off(name: string, fn: (...args: never[]) => void): void;
  getWrapperElement(): HTMLElement;
  removeKeyMap(map: object): void;
  clearHistory(): void;
  undo(): void;
  redo(): void;
  startOperation(): void;
  endOperation(): void;
  /** The operation in progress (a key handler or command runs inside one), null otherwise. */
  curOp: unknown;
}

function isCodeMirror(editor: unknown): editor is CodeMirrorLike {
  const cm = editor as Partial<CodeMirrorLike> | null;
  return (
    typeof cm === 'object' && cm !== null &&
    typeof cm.getValue === 'function' && typeof cm.getDoc === 'function' &&
    typeof cm.on === 'function' && typeof cm.getWrapperElement === 'function'
  );
}

export const createCodemirrorAdapter: AdapterFactory = (editor) => {
  if (!isCodeMirror(editor)) {
    throw invalidConfig('editor', "a CodeMirror 5 editor (the instance CodeMirror(...) or CodeMirror.fromTextArea(...) returns) for app 'editorB'", editor);
  }
  return new CodemirrorAdapter(editor);
};

class CodemirrorAdapter implements EditorAdapter {
  readonly kind = 'editorB' as const;
  readonly textName = TEXT_TYPE;
  private ytext: Y.Text | null = null;
  /** The plain view of `ytext`; CodeMirror's document equals `view.text` whenever no change is being applied. */
  private view = new PlainView();
  private undo: LocalUndo | null = null;
  private untrack: (() => void) | null = null;
  /** True while this adapter changes CodeMirror's document itself: its `changes` are not local edits. */
  private applying = false;
  private keyMap: object | null = null;
  private reroutedHistory = false;

  constructor(private readonly cm: CodeMirrorLike) {}

  setReadOnly(readOnly: boolean): void {
    this.cm.setOption('readOnly', readOnly);
  }

  get container(): HTMLElement {
    return this.cm.getWrapperElement();
  }

  createPresence(): PresenceHost {
    return codemirrorPresence(this.cm as unknown as CodeMirrorForPresence, {
      toY: (index) => this.view.toY(index, 'after-shown'),
      toEditor: (y) => this.view.toPlain(y),
    });
  }

  seed(doc: Y.Doc): void {
    doc.getText(TEXT_TYPE).insert(0, this.cm.getValue());
  }

  replaceContent(doc: Y.Doc, content: unknown): void {
    replaceText(doc, content, this.kind);
  }

  bind(doc: Y.Doc, _awareness?: unknown, undo?: LocalUndo): void {
    this.unbind();
    const cm = this.cm;
    const ytext = doc.getText(TEXT_TYPE);
    this.ytext = ytext;
    this.view = PlainView.of(ytext);
    if (cm.getValue() !== this.view.text) this.withoutEcho(() => cm.setValue(this.view.text));
    ytext.observe(this.onRemote);
    cm.on('changes', this.onChanges);
    if (undo) {
      this.undo = undo;
      this.untrack = undo.track(this);
      const run = (action: 'undo' | 'redo') => (): void => this.outsideOperation(() => (action === 'undo' ? undo.undo() : undo.redo()));
      this.keyMap = {
        'Ctrl-Z': run('undo'), 'Shift-Ctrl-Z': run('redo'), 'Ctrl-Y': run('redo'),
        'Cmd-Z': run('undo'), 'Shift-Cmd-Z': run('redo'), 'Cmd-Y': run('redo'),
      };
      cm.addKeyMap(this.keyMap);
      cm.undo = run('undo');
      cm.redo = run('redo');
      this.reroutedHistory = true;
    }
    // What CodeMirror recorded so far (the host's content, the value set above) is not this user's to undo.
    cm.clearHistory();
  }

  unbind(): void {
    const ytext = this.ytext;
    if (!ytext) return;
    ytext.unobserve(this.onRemote);
    this.cm.off('changes', this.onChanges);
    this.ytext = null;
    this.untrack?.();
    this.untrack = null;
    this.undo = null;
    if (this.keyMap) this.cm.removeKeyMap(this.keyMap);
    this.keyMap = null;
    if (this.reroutedHistory) {
      // The prototype's undo/redo come back, on an empty history: it holds collaborators' edits from the session.
      delete (this.cm as Partial<CodeMirrorLike>).undo;
      delete (this.cm as Partial<CodeMirrorLike>).redo;
      this.reroutedHistory = false;
    }
    this.cm.clearHistory();
  }

  destroy(): void {
    this.unbind();
  }

  /** Local changes → Y.Text: each change replayed at its mapped position, in order (see the header). */
  private readonly onChanges = (_cm: unknown, changes: CmChange[]): void => {
    const ytext = this.ytext;
    if (!ytext || this.applying) return;
    ytext.doc!.transact(() => {
      // A paste is its own undo step.
      const paste = this.undo !== null && changes.some((c) => c.origin === 'paste');
      if (paste) this.undo!.stopCapturing();
      for (const change of changes) {
        const text = this.view.text;
        const start = indexOf(text, change.from);
        const end = indexOf(text, change.to);
        writeSplice(ytext, this.view, start, end - start, change.text.join('\n'));
      }
      if (paste) this.undo!.stopCapturing();
    }, this);
  };

  /** Remote changes (and this user's undo/redo) → CodeMirror, through the plain view. */
  private readonly onRemote = (event: Y.YTextEvent, tr: Y.Transaction): void => {
    // Our own writes moved `view` as they were made (writeSplice).
    if (tr.origin === this) return;
    const ops = this.view.apply(event.delta as YDeltaOp[]);
    if (ops.length > 0) this.applyPlain(ops);
    if (this.undo?.isOwn(tr.origin)) {
      const caret = caretAfterHistory(event.delta as YDeltaOp[]);
      if (caret !== null) {
        const pos = this.cm.posFromIndex(this.view.toPlain(caret));
        this.cm.setSelection(pos, pos);
      }
    }
  };

  private applyPlain(ops: readonly PlainOp[]): void {
    const cm = this.cm;
    let anchor = cm.indexFromPos(cm.getCursor('anchor'));
    let head = cm.indexFromPos(cm.getCursor('head'));
    // A collapsed caret stays before a remote insert at it; a selection does not grow by one at either end.
    const collapsed = anchor === head;
    const forward = anchor <= head;
    anchor = mapIndex(anchor, ops, !collapsed && forward);
    head = mapIndex(head, ops, !collapsed && !forward);
    this.withoutEcho(() => cm.operation(() => {
      let index = 0;
      for (const op of ops) {
        if (op.retain !== undefined) index += op.retain;
        else if (op.insert !== undefined) {
          const at = cm.posFromIndex(index);
          cm.replaceRange(op.insert, at, at, 'wave');
          index += op.insert.length;
        } else if (op.delete !== undefined) {
          cm.replaceRange('', cm.posFromIndex(index), cm.posFromIndex(index + op.delete), 'wave');
        }
      }
      cm.setSelection(cm.posFromIndex(anchor), cm.posFromIndex(head), { scroll: false });
    }));
  }

  /** Runs `change` (which changes CodeMirror's document) without writing it back to the Y.Text. */
  private withoutEcho(change: () => void): void {
    // Inside an operation opened elsewhere, CodeMirror would report the change after `applying` is reset.
    this.outsideOperation(() => {
      this.applying = true;
      try {
        change();
      } finally {
        this.applying = false;
      }
    });
  }

  /**
   * Runs `run` outside any CodeMirror operation. Inside one (a key handler, `execCommand`), CodeMirror reports
   * changes only when the operation ends: after the guard that keeps the adapter from writing them back.
   */
  private outsideOperation(run: () => void): void {
    const cm = this.cm;
    if (!cm.curOp) {
      run();
      return;
    }
    cm.endOperation();
    try {
      run();
    } finally {
      cm.startOperation();
    }
  }
}

/** The index of `pos` in `text`, a CodeMirror document joined with "\n" (its default line separator). */
function indexOf(text: string, pos: Pos): number {
  let index = 0;
  for (let line = 0; line < pos.line; line++) {
    const next = text.indexOf('\n', index);
    if (next === -1) return text.length;
    index = next + 1;
  }
  const lineEnd = text.indexOf('\n', index);
  return Math.min(index + pos.ch, lineEnd === -1 ? text.length : lineEnd);
}
