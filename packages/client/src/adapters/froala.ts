/**
 * `app: 'editorA'` — Froala (v4/v5), through the shared HTML core (`./html/`). Integration guide: call
 * `init(config)` inside Froala's `initialized` event handler with `editor: this`.
 *
 * Froala's own markup inside the content never enters the document: selection markers (`.fr-marker`), the
 * "Powered by Froala" paragraph unlicensed copies inject on other hosts (`[data-f-id="pbf"]`), and editing-only
 * classes and attributes. Undo: Froala's history would restore whole-document snapshots (and so undo
 * collaborators' edits); while bound, `editor.undo.run/redo` — the path of its Ctrl+Z, toolbar buttons and
 * commands — go to the session's undo manager, which reverts only this user's edits.
 */
import { invalidConfig } from '../core/errors.js';
import type { AdapterFactory } from './types.js';
import { RichTextBinding, type RichTextHost, type UndoState } from './html/binding.js';
import type { EditorDialect } from './html/dom.js';

/** The part of Froala's editor API used here (froala-editor 4.x/5.x). */
interface FroalaLike {
  el: HTMLElement;
  $box?: ArrayLike<HTMLElement>;
  html: { get(): string; set(html: string): void };
  events: { on(name: string, fn: (...args: unknown[]) => unknown, first?: boolean): unknown };
  undo?: { run(): void; redo(): void; canDo(): boolean; canRedo(): boolean; reset?(): void; saveStep?(): void };
  placeholder?: { refresh?(): void };
  button?: { bulkRefresh?(): void };
  edit?: { on(): void; off(): void };
  /** Froala's image plugin: `get()` is the image in its edit mode (a jQuery-like list), if any. */
  image?: { get?(): ArrayLike<Element> | null | undefined; exitEdit?(force?: boolean): void };
}

function isFroala(editor: unknown): editor is FroalaLike {
  const f = editor as Partial<FroalaLike> | null;
  return (
    typeof f === 'object' && f !== null &&
    typeof f.html?.get === 'function' && typeof f.events?.on === 'function' &&
    typeof f.el === 'object' && f.el !== null && (f.el as Node).nodeType === 1
  );
}

/** Froala's markers and "Powered by" paragraph are skipped by the parser (wave-richtext `EDITOR_DIALECT`). */
export const FROALA_DIALECT: EditorDialect = {
  render: {},
  internalAttr: (name) => name === 'contenteditable' || name === 'draggable' || name === 'id' || name.startsWith('data-'),
};

export const createFroalaAdapter: AdapterFactory = (editor) => {
  if (!isFroala(editor)) {
    throw invalidConfig('editor', "the Froala editor passed to its 'initialized' event handler (this) for app 'editorA'", editor);
  }
  return new RichTextBinding(new FroalaHost(editor));
};

class FroalaHost implements RichTextHost {
  readonly kind = 'editorA' as const;
  readonly dialect = FROALA_DIALECT;
  /** Froala has no way to remove an event handler: the one handler stays registered and calls this when set. */
  private onChange: (() => void) | null = null;
  private listening = false;

  constructor(private readonly editor: FroalaLike) {}

  setReadOnly(readOnly: boolean): void {
    if (readOnly) this.editor.edit?.off();
    else this.editor.edit?.on();
  }

  get root(): HTMLElement {
    return this.editor.el;
  }

  get container(): HTMLElement {
    return this.editor.$box?.[0] ?? this.editor.el;
  }

  listen(onChange: () => void): () => void {
    if (!this.listening) {
      this.listening = true;
      this.editor.events.on('contentChanged', () => this.onChange?.());
    }
    this.onChange = onChange;
    return () => {
      this.onChange = null;
    };
  }

  takeOverUndo(undo: () => void, redo: () => void, can: UndoState): () => void {
    const history = this.editor.undo;
    if (!history) return () => {};
    const own = Object.getOwnPropertyDescriptors(history);
    history.run = () => {
      undo();
      this.refreshButtons();
    };
    history.redo = () => {
      redo();
      this.refreshButtons();
    };
    // Froala asks these to enable its toolbar buttons.
    history.canDo = () => can.canUndo();
    history.canRedo = () => can.canRedo();
    return () => {
      for (const key of ['run', 'redo', 'canDo', 'canRedo'] as const) {
        if (own[key]) Object.defineProperty(history, key, own[key]);
        else delete (history as Partial<typeof history>)[key];
      }
    };
  }

  contentUpdated(): void {
    this.leaveRemovedImage();
    this.editor.placeholder?.refresh?.();
    this.refreshButtons();
  }

  /**
   * Froala's image edit mode holds on to its `<img>` and handles the next keys (Enter, resize) on it. When a
   * change from a collaborator removed or re-rendered that image, the mode is left, as a click elsewhere leaves it;
   * otherwise those keys act on a detached node (Froala's `selectNode` throws) instead of the text.
   */
  private leaveRemovedImage(): void {
    const image = this.editor.image;
    const img = image?.get?.()?.[0];
    if (img && !img.isConnected) image?.exitEdit?.(true);
  }

  private refreshButtons(): void {
    try {
      this.editor.button?.bulkRefresh?.();
    } catch {
      /* toolbar refresh is cosmetic */
    }
  }
}
