/**
 * `app: 'tinymce'` — TinyMCE 6/7/8 (editor D), through the shared HTML core (`./html/`). Hosts normally use the
 * external plugin `wave` (packages/tinymce-plugin), which creates the session with the editor; hosts without the
 * plugin pass an initialised editor: `init({ app: 'tinymce', editor: tinymce.get(id), … })`.
 *
 * The root is the iframe's body. TinyMCE's own nodes (bookmarks, `data-mce-bogus` wrappers and handles, the
 * caret container) and `data-mce-*` attributes never enter the document. Undo: the
 * `Undo`/`Redo` commands (Ctrl+Z, toolbar, menu) go to the session's undo manager instead of TinyMCE's snapshot
 * history, which would also revert collaborators' edits.
 */
import { invalidConfig } from '../core/errors.js';
import type { AdapterFactory } from './types.js';
import { RichTextBinding, type RichTextHost, type UndoState } from './html/binding.js';
import type { EditorDialect } from './html/dom.js';

/** The part of TinyMCE's editor API used here (6.x–8.x). */
export interface TinymceLike {
  id: string;
  initialized?: boolean;
  getBody(): HTMLElement | null;
  getContainer(): HTMLElement | null;
  getContent(args?: unknown): string;
  on(name: string, fn: (event: never) => void, prepend?: boolean): unknown;
  off(name: string, fn: (event: never) => void): unknown;
  nodeChanged?(): void;
  mode?: { set(mode: string): void };
}

function isTinymce(editor: unknown): editor is TinymceLike {
  const e = editor as Partial<TinymceLike> | null;
  return typeof e === 'object' && e !== null && typeof e.getBody === 'function' && typeof e.getContent === 'function' && typeof e.on === 'function' && typeof e.off === 'function';
}

/** TinyMCE's bookmarks, caret containers and bogus nodes are skipped or unwrapped by the parser (`EDITOR_DIALECT`). */
export const TINYMCE_DIALECT: EditorDialect = {
  render: {
    placeholder: { 'data-mce-bogus': '1' },
    // TinyMCE's Delete inside a list runs its `normalizeLists` over the whole body: a nested list that is the first
    // child of an item moves into the item before. A first child other than the list (this placeholder line)
    // leaves the structure as the document has it.
    lineBeforeLeadingList: true,
  },
  internalAttr: (name) => name.startsWith('data-mce-') || name === 'contenteditable',
  transient: (el) => el.localName === 'br' && el.hasAttribute('data-mce-bogus'),
  shadowOf: (name) => (name === 'href' || name === 'src' || name === 'style' ? `data-mce-${name}` : undefined),
};

export const createTinymceAdapter: AdapterFactory = (editor) => {
  if (!isTinymce(editor)) throw invalidConfig('editor', "a TinyMCE editor instance (tinymce.get(id)) for app 'tinymce'", editor);
  const body = editor.getBody();
  if (!editor.initialized || !body || body.nodeType !== 1) {
    throw invalidConfig('editor', "an initialised TinyMCE editor (call init from its 'init' event or after tinymce.init resolves)", editor);
  }
  return new RichTextBinding(new TinymceHost(editor, body));
};

class TinymceHost implements RichTextHost {
  readonly kind = 'tinymce' as const;
  readonly dialect = TINYMCE_DIALECT;

  constructor(
    private readonly editor: TinymceLike,
    readonly root: HTMLElement,
  ) {}

  setReadOnly(readOnly: boolean): void {
    this.editor.mode?.set(readOnly ? 'readonly' : 'design');
  }

  get container(): HTMLElement {
    return this.editor.getContainer() ?? this.root;
  }

  listen(onChange: () => void): () => void {
    const names = 'input change SetContent ExecCommand';
    const handler = () => onChange();
    this.editor.on(names, handler);
    return () => {
      this.editor.off(names, handler);
    };
  }

  takeOverUndo(undo: () => void, redo: () => void, _can: UndoState): () => void {
    const handler = (event: { command?: string; preventDefault(): void }) => {
      const command = event.command?.toLowerCase();
      if (command !== 'undo' && command !== 'redo') return;
      event.preventDefault();
      if (command === 'undo') undo();
      else redo();
    };
    this.editor.on('BeforeExecCommand', handler as (event: never) => void, true);
    return () => {
      this.editor.off('BeforeExecCommand', handler as (event: never) => void);
    };
  }

  /** A `nodeChanged()` is scheduled and not run yet. */
  private nodeChangePending = false;

  /**
   * TinyMCE's `nodeChanged()` (toolbar state, its NodeChange event) costs several ms: it runs in a task of its own,
   * once for any number of patches before it, so the patched text is painted first. It reads the selection Wave has
   * already restored.
   */
  contentUpdated(): void {
    if (this.nodeChangePending) return;
    this.nodeChangePending = true;
    setTimeout(() => {
      this.nodeChangePending = false;
      try {
        this.editor.nodeChanged?.();
      } catch {
        /* toolbar state is cosmetic */
      }
    }, 0);
  }
}
