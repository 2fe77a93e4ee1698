// Drivers for the rich-text editors (Froala = editor A, TinyMCE through the `wave` plugin = editor D), plus what
// the rich-text tests need on top of `EditorDriver`: the editor's own HTML and in-page access to its root.
import type { Page } from 'playwright-core';
import type { EditorDriver } from './drivers.ts';

/** The part of Froala's API the tests use (the demo page exposes the editor as `window.froala`). */
export interface FroalaPage {
  el: HTMLElement;
  html: { get(): string; set(html: string): void; insert(html: string, clean?: boolean): void };
  events: { focus(): void };
  commands: { exec(cmd: string, ...args: unknown[]): void } & Record<string, (...args: unknown[]) => void>;
  selection: { setAtEnd(el: Element): void; restore(): void; save(): void };
  undo: { run(): void; redo(): void };
  [key: string]: unknown;
}

/** The part of TinyMCE's API the tests use (the demo page exposes the editor as `window.tiny`). */
export interface TinymcePage {
  id: string;
  getBody(): HTMLElement;
  getContent(): string;
  setContent(html: string): void;
  insertContent(html: string): void;
  execCommand(cmd: string, ui?: boolean, value?: unknown): boolean;
  focus(): void;
  selection: { setCursorLocation(node: Node, offset: number): void; getNode(): Node; select(node: Node, content?: boolean): void; setRng(rng: Range): void };
  plugins: Record<string, any>;
  [key: string]: unknown;
}

declare global {
  interface Window {
    froala?: FroalaPage;
    tiny?: TinymcePage;
    tinymce?: { get(id: string): TinymcePage };
  }
}

export interface RichTextDriver extends EditorDriver {
  readonly kind: 'froala' | 'tinymce';
  /** The editor's own serialisation (`html.get()` / `getContent()`): what a host would save. */
  html(page: Page): Promise<string>;
}

// In-page code is kept as plain JavaScript source: functions compiled by tsx carry `__name` helpers that do not
// exist in the page.

/**
 * In-page: the caret at the start or end of the editor's content. The content's first/last text node, else its
 * first/last block; editor UI inside the root (Froala's "Powered by" paragraph, TinyMCE's bogus nodes) is skipped.
 */
const PLACE_CARET = `(function (kind, atEnd) {
  var root = kind === 'froala' ? window.froala.el : window.tiny.getBody();
  if (kind === 'froala') window.froala.events.focus(); else window.tiny.focus();
  var doc = root.ownerDocument;
  function skip(n) {
    for (var e = n && n.nodeType === 1 ? n : n && n.parentElement; e && e !== root; e = e.parentElement) {
      if (e.getAttribute('data-f-id') === 'pbf' || e.hasAttribute('data-mce-bogus') || e.classList.contains('fr-marker')) return true;
    }
    return false;
  }
  var walker = doc.createTreeWalker(root, 4);
  var pick = null;
  for (var n = walker.nextNode(); n; n = walker.nextNode()) {
    if (skip(n) || !n.data.replace(/[\\u200b\\ufeff]/g, '')) continue;
    pick = n;
    if (!atEnd) break;
  }
  var node, offset;
  if (pick) { node = pick; offset = atEnd ? pick.data.length : 0; }
  else {
    var blocks = Array.prototype.filter.call(root.children, function (c) { return !skip(c); });
    node = (atEnd ? blocks[blocks.length - 1] : blocks[0]) || root;
    offset = 0;
  }
  if (kind === 'tinymce') window.tiny.selection.setCursorLocation(node, offset);
  else doc.getSelection().setBaseAndExtent(node, offset, node, offset);
})`;

/**
 * In-page declarations shared by everything that reads text offsets (`text()` here, the contract driver's
 * selection mapping): `blocksOf(root)`, the top-level blocks that make one line each (editor UI skipped), and
 * `visible(s)`, `s` without the zero-width characters editors use as caret and marker placeholders.
 */
export const BLOCKS = String.raw`
function blocksOf(root) {
  return Array.prototype.filter.call(root.children, function (c) {
    return c.getAttribute('data-f-id') !== 'pbf' && c.getAttribute('data-mce-bogus') !== 'all' && !c.classList.contains('fr-marker');
  });
}
function visible(s) { return s.replace(/[\u200b\ufeff]/g, ''); }
`;

/** In-page: the editor's plain text, one line per top-level block, as a user reads it. */
const PLAIN_TEXT = String.raw`(function (kind) {
  ${BLOCKS}
  var root = kind === 'froala' ? window.froala.el : window.tiny.getBody();
  return blocksOf(root).map(function (b) {
    return visible(b.textContent || '').replace(/\u00a0/g, ' ');
  }).join('\n').replace(/\n+$/, '');
})`;

/**
 * In-page, TinyMCE only: the harness's key and status timing (browser.ts `trackTiming`) listens on the page's
 * document, but keys go to the editor's iframe, and the plugin creates the session after the harness looked for
 * it. Hook both once, the same way.
 */
export const HOOK_TINYMCE_TIMING = `(function () {
  var t = window.waveTiming;
  if (!t || t.tinymceHooked || !window.tiny || !window.coedit) return;
  t.tinymceHooked = true;
  window.tiny.getDoc().addEventListener('keydown', function () { t.lastKeyAt = performance.now(); }, true);
  window.coedit.on('status', function (s) { t.status.push(Object.assign({}, s, { at: performance.now() })); });
})`;

/** Runs one of the in-page functions above with JSON arguments. */
export function inPage<T>(page: Page, source: string, ...args: unknown[]): Promise<T> {
  return page.evaluate(`${source}(${args.map((a) => JSON.stringify(a)).join(', ')})`) as Promise<T>;
}

function driver(kind: 'froala' | 'tinymce', pagePath: string): RichTextDriver {
  return {
    name: kind,
    kind,
    pagePath,
    focusEnd: (page) => inPage<void>(page, PLACE_CARET, kind, true),
    focusStart: (page) => inPage<void>(page, PLACE_CARET, kind, false),
    async type(page, text, options) {
      if (kind === 'tinymce') await inPage<void>(page, HOOK_TINYMCE_TIMING);
      await page.keyboard.type(text, options);
    },
    text: (page) => inPage<string>(page, PLAIN_TEXT, kind),
    html: (page) => page.evaluate((k) => (k === 'froala' ? window.froala!.html.get() : window.tiny!.getContent()), kind),
  };
}

export const froala = driver('froala', 'froala.html');
export const tinymce = driver('tinymce', 'tinymce.html');
export const RICH_TEXT_DRIVERS: readonly RichTextDriver[] = [froala, tinymce];
