import type { EditorKind } from '../../core/config.js';
import type { EditorDialect } from './dom.js';

/** What one editor offers the binding: its contenteditable root, its dialect and its events. */
export interface RichTextHost {
  readonly kind: EditorKind;
  /** The contenteditable element holding the content (TinyMCE: the iframe's body). */
  readonly root: HTMLElement;
  /** Where presence UI is placed. */
  readonly container: HTMLElement;
  readonly dialect: EditorDialect;
  /** Subscribes `onChange` to the editor's change events; returns the unsubscribe function. */
  listen(onChange: () => void): () => void;
  /** Routes the editor's undo and redo (keys, toolbar, commands) to `undo`/`redo`; returns the function that gives them back. */
  takeOverUndo(undo: () => void, redo: () => void, state: UndoState): () => void;
  /** Tells the editor that Wave changed its content (refresh placeholder, toolbar state…). */
  contentUpdated(): void;
  /** The editor's own read-only switch (Froala `edit.off()`, TinyMCE `mode.set('readonly')`). */
  setReadOnly?(readOnly: boolean): void;
}

/** Whether undo and redo have anything to do, for the editor's toolbar buttons. */
export interface UndoState {
  canUndo(): boolean;
  canRedo(): boolean;
}
