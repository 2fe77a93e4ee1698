/**
 * `app: 'editorB'` (alias `codemirror`) — CodeMirror 5, through y-codemirror's `CodemirrorBinding` (the CodeMirror
 * document ↔ `Y.Text`, line breaks as "\n"). The binding is the transaction origin of the edits it writes.
 *
 * Undo: the binding is given the session's undo manager (`yUndoManager`): it tracks its own writes there, maps
 * Ctrl/Cmd+Z, Ctrl/Cmd+Shift+Z and Ctrl/Cmd+Y to it and restores the selection each step had. CodeMirror's own
 * history records remote edits too, so `cm.undo()`/`cm.redo()` (the "undo" command, the context menu, a host's
 * toolbar) are sent to the same manager while bound.
 *
 * Local changes: y-codemirror 3.0.1 writes an operation with several changes (Enter with auto-indent, a multi-cursor
 * edit) as one diff of the whole text, which deletes and re-inserts the text between the changes: a peer's
 * concurrent edit there is lost, or the text doubles when two users do it at once (e2e/tests/fuzz.test.ts).
 * The adapter replaces that listener with one that replays each change at its own position.
 *
 * y-codemirror imports the `codemirror` package at its top level, which touches `navigator` and `document` when it
 * loads: it is loaded on demand (`ready`, awaited by `start()`), so that importing wave-client outside a browser
 * (Node tests, server-side rendering) works. The CDN bundle resolves `codemirror` to the page's `window.CodeMirror`.
 */
import type * as Y from 'yjs';
import { CoeditError, invalidConfig } from '../core/errors.js';
import type { LocalUndo } from '../core/undo.js';
import { TEXT_TYPE } from 'wave-protocol';
import type { AdapterFactory, EditorAdapter } from './types.js';
import { replaceText } from './replace.js';
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

/** The part of CodeMirror 5's editor API used here and by y-codemirror (codemirror 5.65). */
interface CodeMirrorLike {
  getValue(): string;
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
  state: { keyMaps: object[] };
}

function isCodeMirror(editor: unknown): editor is CodeMirrorLike {
  const cm = editor as Partial<CodeMirrorLike> | null;
  return (
    typeof cm === 'object' && cm !== null &&
    typeof cm.getValue === 'function' && typeof cm.getDoc === 'function' &&
    typeof cm.on === 'function' && typeof cm.getWrapperElement === 'function'
  );
}

type YCodemirror = typeof import('y-codemirror');
/** The binding, with the internals of y-codemirror 3.0.1 (pinned) that the `changes` listener replacement uses. */
type Binding = InstanceType<YCodemirror['CodemirrorBinding']> & {
  _targetObserver: (...args: never[]) => void;
  _mux: (f: () => void) => void;
  yUndoManager: Y.UndoManager | null;
};

let loading: Promise<YCodemirror> | undefined;
let loaded: YCodemirror | undefined;

function loadBinding(): Promise<YCodemirror> {
  loading ??= import('y-codemirror').then(
    (module) => (loaded = module),
    (err: unknown) => {
      loading = undefined; // a later session may try again (a chunk that failed to download)
      throw new CoeditError('server_error', `the CodeMirror binding (y-codemirror) could not be loaded: ${(err as Error)?.message ?? err}`, true);
    },
  );
  return loading;
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
  private loading: Promise<void> | null = null;
  private binding: Binding | null = null;
  private ytext: Y.Text | null = null;
  /** Keymaps the binding added (its undo keys); y-codemirror's destroy() leaves them behind. */
  private keyMaps: object[] = [];
  private reroutedHistory = false;

  constructor(private readonly cm: CodeMirrorLike) {}

  setReadOnly(readOnly: boolean): void {
    this.cm.setOption('readOnly', readOnly);
  }

  /** Loads y-codemirror when the session starts (`start()` awaits this), not when the session object is created. */
  get ready(): Promise<void> {
    this.loading ??= loadBinding().then(
      () => undefined,
      (err: unknown) => {
        this.loading = null; // a later start() tries again
        throw err;
      },
    );
    return this.loading;
  }

  get container(): HTMLElement {
    return this.cm.getWrapperElement();
  }

  createPresence(): PresenceHost {
    return codemirrorPresence(this.cm as unknown as CodeMirrorForPresence);
  }

  seed(doc: Y.Doc): void {
    doc.getText(TEXT_TYPE).insert(0, this.cm.getValue());
  }

  replaceContent(doc: Y.Doc, content: unknown): void {
    replaceText(doc, content, this.kind);
  }

  bind(doc: Y.Doc, _awareness?: unknown, undo?: LocalUndo): void {
    this.unbind();
    if (!loaded) throw new Error('wave: CodemirrorAdapter.bind() before `ready` resolved'); // start() awaits ready
    const cm = this.cm;
    const before = new Set(cm.state.keyMaps);
    // No awareness yet: remote carets need y-codemirror's caret CSS (presence is drawn by Wave's own UI later).
    const ytext = doc.getText(TEXT_TYPE);
    const binding = new loaded.CodemirrorBinding(ytext, cm as never, null, undo ? { yUndoManager: undo.manager } : {}) as Binding;
    this.binding = binding;
    this.ytext = ytext;
    this.keyMaps = cm.state.keyMaps.filter((map) => !before.has(map));
    cm.off('changes', binding._targetObserver);
    cm.on('changes', this.onChanges);
    if (undo) {
      cm.undo = () => this.outsideOperation(() => undo.undo());
      cm.redo = () => this.outsideOperation(() => undo.redo());
      this.reroutedHistory = true;
    }
    // What CodeMirror recorded so far (the host's content, the binding's setValue) is not this user's to undo.
    cm.clearHistory();
  }

  unbind(): void {
    if (!this.binding) return;
    this.cm.off('changes', this.onChanges);
    this.binding.destroy();
    this.binding = null;
    this.ytext = null;
    for (const map of this.keyMaps) this.cm.removeKeyMap(map);
    this.keyMaps = [];
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

  /**
   * Local changes → Y.Text, in place of y-codemirror's listener (see the header). The Y.Text holds the document as it
   * was before this operation, so each change is replayed on a copy of that text at the position it had then.
   * Changes the binding itself applies (remote edits, undo) arrive while its mutex is held and are skipped, as before.
   */
  private readonly onChanges = (_cm: unknown, changes: CmChange[]): void => {
    const binding = this.binding;
    const ytext = this.ytext;
    if (!binding || !ytext) return;
    binding._mux(() => {
      ytext.doc!.transact(() => {
        // A paste is its own undo step (y-codemirror does the same).
        const paste = binding.yUndoManager !== null && changes.some((c) => c.origin === 'paste');
        if (paste) binding.yUndoManager!.stopCapturing();
        let text = ytext.toString();
        for (const change of changes) {
          const start = indexOf(text, change.from);
          const end = indexOf(text, change.to);
          const inserted = change.text.join('\n');
          if (end > start) ytext.delete(start, end - start);
          if (inserted.length > 0) ytext.insert(start, inserted);
          text = text.slice(0, start) + inserted + text.slice(end);
        }
        if (paste) binding.yUndoManager!.stopCapturing();
      }, binding);
    });
  };

  /**
   * Runs an undo/redo outside any CodeMirror operation. Inside one (a key handler, `execCommand`), CodeMirror
   * reports the changes the binding applies only when the operation ends, after the binding's guard is released,
   * and the binding would write them to Yjs a second time. y-codemirror's own undo keys end the operation the same way.
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
