// One driver per editor kind behind one interface, so that every scenario runs over every editor.
// A driver reads the editor's *own* content (not Wave's shared document), which is what the user sees.
import type { Page } from 'playwright-core';
import { froalaContract, tinymceContract } from './richtext-contract.ts';
import { froala, tinymce } from './richtext-drivers.ts';

export interface EditorDriver {
  /** Test-name label. */
  readonly name: string;
  /** The demo page under `/demo/`. */
  readonly pagePath: string;
  /** Puts the caret at the end of the content and focuses the editor. */
  focusEnd(page: Page): Promise<void>;
  /** Puts the caret at the start of the content and focuses the editor. */
  focusStart(page: Page): Promise<void>;
  /** Real keyboard input at the caret (`delay` ms between keys). */
  type(page: Page, text: string, options?: { delay?: number }): Promise<void>;
  /** The editor's plain-text content. */
  text(page: Page): Promise<string>;
}

export const textarea: EditorDriver = {
  name: 'textarea',
  pagePath: 'text.html',
  async focusEnd(page) {
    await page.locator('#editor').focus();
    await page.evaluate(() => {
      const el = document.getElementById('editor') as HTMLTextAreaElement;
      el.setSelectionRange(el.value.length, el.value.length);
    });
  },
  async focusStart(page) {
    await page.locator('#editor').focus();
    await page.evaluate(() => (document.getElementById('editor') as HTMLTextAreaElement).setSelectionRange(0, 0));
  },
  type: (page, text, options) => page.keyboard.type(text, options),
  text: (page) => page.evaluate(() => (document.getElementById('editor') as HTMLTextAreaElement).value),
};

export const quill: EditorDriver = {
  name: 'quill',
  pagePath: 'quill.html',
  async focusEnd(page) {
    await page.evaluate(() => {
      const q = window.quill!;
      q.focus();
      q.setSelection(q.getLength() - 1, 0, 'user'); // the last character is Quill's own trailing newline
    });
  },
  async focusStart(page) {
    await page.evaluate(() => {
      window.quill!.focus();
      window.quill!.setSelection(0, 0, 'user');
    });
  },
  type: (page, text, options) => page.keyboard.type(text, options),
  // getText() always ends with the document's final "\n"; it is not content a user typed.
  text: (page) => page.evaluate(() => window.quill!.getText().replace(/\n$/, '')),
};

/** The Quill page that loads the provider package (`import Coedit from 'wave-quill-provider'`) instead of the CDN file. */
export const quillProvider: EditorDriver = { ...quill, name: 'quill-provider', pagePath: 'quill-provider.html' };

/** The part of CodeMirror 5's API the drivers use (the demo page exposes the editor as `window.cm`). */
export interface CodeMirrorPage {
  focus(): void;
  getValue(): string;
  lineCount(): number;
  getLine(n: number): string;
  setCursor(pos: unknown): void;
  setSelection(anchor: unknown, head?: unknown): void;
  getCursor(which?: 'from' | 'to' | 'anchor' | 'head'): unknown;
  posFromIndex(index: number): unknown;
  indexFromPos(pos: unknown): number;
  getInputField(): HTMLElement;
  getWrapperElement(): HTMLElement;
  [key: string]: unknown;
}

declare global {
  interface Window {
    cm?: CodeMirrorPage;
  }
}

export const codemirror: EditorDriver = {
  name: 'codemirror',
  pagePath: 'codemirror.html',
  async focusEnd(page) {
    await page.evaluate(() => {
      const cm = window.cm!;
      cm.focus();
      cm.setCursor(cm.posFromIndex(cm.getValue().length));
    });
  },
  async focusStart(page) {
    await page.evaluate(() => {
      window.cm!.focus();
      window.cm!.setCursor(window.cm!.posFromIndex(0));
    });
  },
  type: (page, text, options) => page.keyboard.type(text, options),
  text: (page) => page.evaluate(() => window.cm!.getValue()),
};

export const DRIVERS: readonly EditorDriver[] = [textarea, quill, quillProvider, codemirror, froala, tinymce];

/**
 * What the adapter contract suite and the fuzzer need on top of `EditorDriver`. Offsets are UTF-16 indices into
 * `text()`. To run them over another editor, implement this for it and add it to `CONTRACT_DRIVERS`.
 */
export interface ContractDriver extends EditorDriver {
  /** Focuses the editor and selects from `anchor` to `head`. */
  select(page: Page, anchor: number, head: number): Promise<void>;
  /** The selection as [start, end] (start <= end). */
  selection(page: Page): Promise<[number, number]>;
  /** The editor's full content in its own model, for "identical content": the text, Quill's Delta as JSON, or the rich-text editor's HTML. */
  content(page: Page): Promise<string>;
  /**
   * After `stop()`: what the session left hooked into the editor (listeners, keymaps, rerouted methods), described
   * for the failure message; empty when everything was unhooked.
   */
  leftovers(page: Page): Promise<string[]>;
}

/** Event listeners still registered on the element `selector` selects (through the DevTools protocol). */
async function listenersOn(page: Page, selector: string): Promise<string[]> {
  const cdp = await page.context().newCDPSession(page);
  try {
    const { result } = await cdp.send('Runtime.evaluate', { expression: `document.querySelector(${JSON.stringify(selector)})` });
    const { listeners } = await cdp.send('DOMDebugger.getEventListeners', { objectId: result.objectId! });
    return listeners.map((l) => `${selector}: "${l.type}" listener`);
  } finally {
    await cdp.detach();
  }
}

export const textareaContract: ContractDriver = {
  ...textarea,
  async select(page, anchor, head) {
    await page.locator('#editor').focus();
    await page.evaluate(([a, h]) => {
      const el = document.getElementById('editor') as HTMLTextAreaElement;
      el.setSelectionRange(Math.min(a, h), Math.max(a, h), h < a ? 'backward' : 'forward');
    }, [anchor, head] as const);
  },
  selection: (page) =>
    page.evaluate(() => {
      const el = document.getElementById('editor') as HTMLTextAreaElement;
      return [el.selectionStart, el.selectionEnd] as [number, number];
    }),
  content: (page) => textarea.text(page),
  // The demo page adds no listener to the textarea: any left is the adapter's.
  leftovers: (page) => listenersOn(page, '#editor'),
};

export const codemirrorContract: ContractDriver = {
  ...codemirror,
  async select(page, anchor, head) {
    await page.evaluate(([a, h]) => {
      const cm = window.cm!;
      cm.focus();
      cm.setSelection(cm.posFromIndex(a), cm.posFromIndex(h));
    }, [anchor, head] as const);
  },
  selection: (page) =>
    page.evaluate(() => {
      const cm = window.cm!;
      return [cm.indexFromPos(cm.getCursor('from')), cm.indexFromPos(cm.getCursor('to'))] as [number, number];
    }),
  content: (page) => codemirror.text(page),
  leftovers: (page) =>
    page.evaluate(() => {
      const cm = window.cm as unknown as { state: { keyMaps: unknown[] }; _handlers?: Record<string, unknown[]> } & Record<string, unknown>;
      const left: string[] = [];
      if (cm.state.keyMaps.length > 0) left.push(`${cm.state.keyMaps.length} keymap(s) added with addKeyMap`);
      for (const method of ['undo', 'redo']) if (Object.hasOwn(cm, method)) left.push(`cm.${method} is still rerouted`);
      // CodeMirror keeps listeners added with cm.on() in _handlers; the demo adds none.
      for (const [type, list] of Object.entries(cm._handlers ?? {})) if (list.length > 0) left.push(`cm.on("${type}") × ${list.length}`);
      return left;
    }),
};

interface QuillPage {
  focus(): void;
  getSelection(focus?: boolean): { index: number; length: number } | null;
  setSelection(index: number, length: number, source?: string): void;
  getContents(): unknown;
}

export const quillContract: ContractDriver = {
  ...quill,
  async select(page, anchor, head) {
    await page.evaluate(([a, h]) => {
      const q = window.quill as unknown as QuillPage;
      q.focus();
      q.setSelection(Math.min(a, h), Math.abs(h - a), 'user');
    }, [anchor, head] as const);
  },
  selection: (page) =>
    page.evaluate(() => {
      const range = (window.quill as unknown as QuillPage).getSelection();
      return (range ? [range.index, range.index + range.length] : [-1, -1]) as [number, number];
    }),
  content: (page) => page.evaluate(() => JSON.stringify((window.quill as unknown as QuillPage).getContents())),
  leftovers: (page) =>
    page.evaluate(() => {
      const q = window.quill as unknown as { history: object; emitter: { listeners(name: string): unknown[] } };
      const left: string[] = [];
      for (const method of ['change', 'record']) if (Object.hasOwn(q.history, method)) left.push(`quill.history.${method} is still rerouted`);
      // Quill's own modules listen too (history, toolbar, theme): compare with a snow Quill that never had a session.
      const box = document.createElement('div');
      const fresh = new (window as any).Quill(box.appendChild(document.createElement('div')), { theme: 'snow' });
      for (const name of ['editor-change', 'text-change', 'selection-change']) {
        const extra = q.emitter.listeners(name).length - fresh.emitter.listeners(name).length;
        if (extra !== 0) left.push(`quill.on("${name}") × ${extra} beyond a fresh Quill`);
      }
      return left;
    }),
};

/** Every editor the adapter contract suite and the undo and fuzz tests run over. */
export const CONTRACT_DRIVERS: readonly ContractDriver[] = [textareaContract, codemirrorContract, quillContract, froalaContract, tinymceContract];
