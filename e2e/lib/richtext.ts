// In-page helpers for the rich-text tests: find text, select it, and run one editor command the way that editor's
// own API does it (Froala's `editor.commands/lists/link/table/image/html`, TinyMCE's `execCommand`/`insertContent`).
// Kept as plain JavaScript source (run with page.evaluate) for the reason given in richtext-drivers.ts.
import type { Page } from 'playwright-core';
import type { Peer } from './browser.ts';
import type { RichTextDriver } from './richtext-drivers.ts';
import { waitUntil } from './util.ts';

/** A small image every test page can load (served by the Wave server from the froala-editor package). */
export const IMAGE_URL = '/demo/vendor/froala-editor/img/photo1.jpg';

const HELPERS = String.raw`
var kind = window.froala ? 'froala' : 'tinymce';
var F = window.froala, T = window.tiny;
function root() { return kind === 'froala' ? F.el : T.getBody(); }
// Focusing can make the editor restore its own saved selection (Froala rewrites text nodes doing so): focus
// once, before any text node is looked up.
function focus() {
  if (kind === 'froala') { if (document.activeElement !== F.el) F.events.focus(); }
  else if (!T.hasFocus()) T.focus();
}
focus();
function texts() {
  var out = [], w = root().ownerDocument.createTreeWalker(root(), 4);
  for (var n = w.nextNode(); n; n = w.nextNode()) out.push(n);
  return out;
}
function find(word, nth) {
  var k = nth || 0;
  var all = texts();
  for (var i = 0; i < all.length; i++) {
    var at = all[i].data.indexOf(word);
    while (at >= 0) { if (k-- === 0) return { node: all[i], index: at }; at = all[i].data.indexOf(word, at + 1); }
  }
  throw new Error('text not found: ' + word);
}
function setRange(a, ao, b, bo) {
  // A caret placed in the text leaves Froala's image edit mode, as the user's click into the text does (Froala
  // selects the image it inserted once it loads, and handles Enter there on the image).
  if (kind === 'froala' && F.image && F.image.get && F.image.get()) F.image.exitEdit(true);
  var r = root().ownerDocument.createRange();
  r.setStart(a, ao); r.setEnd(b, bo);
  if (kind === 'tinymce') T.selection.setRng(r);
  else { var s = root().ownerDocument.getSelection(); s.removeAllRanges(); s.addRange(r); }
}
function select(word, nth) { var f = find(word, nth); setRange(f.node, f.index, f.node, f.index + word.length); }
function caret(word, after) { var f = find(word); var o = after ? f.index + word.length : f.index; setRange(f.node, o, f.node, o); }
function run(action, arg) {
  if (kind === 'froala') {
    switch (action) {
      case 'bold': return F.commands.bold();
      case 'italic': return F.commands.italic();
      case 'underline': return F.commands.underline();
      case 'strike': return F.commands.strikeThrough();
      case 'link': return F.link.insert(arg.href, arg.text);
      case 'h2': return F.paragraphFormat.apply('H2');
      case 'pre': return F.paragraphFormat.apply('PRE');
      case 'ul': return F.lists.format('UL');
      case 'ol': return F.lists.format('OL');
      case 'quote': return F.quote.apply('increase');
      case 'table': return F.table.insert(arg.rows, arg.cols);
      case 'rowBelow': {
        // What Froala's own "Insert row below" button does: mark the caret's cell as selected, insert, unmark.
        var at = root().ownerDocument.getSelection().anchorNode;
        var cell = (at.nodeType === 1 ? at : at.parentElement).closest('td,th');
        cell.classList.add('fr-selected-cell');
        try { return F.table.insertRow('below'); } finally { cell.classList.remove('fr-selected-cell'); }
      }
      case 'image': return F.image.insert(arg.src, false, null, null, null);
      case 'html': return F.html.insert(arg.html, false);
      case 'setHtml': return F.html.set(arg.html);
      case 'undo': return F.commands.undo();
      case 'redo': return F.commands.redo();
      case 'indent': return F.commands.indent();
      case 'delete': return root().ownerDocument.execCommand('delete');
    }
  } else {
    switch (action) {
      case 'bold': return T.execCommand('Bold');
      case 'italic': return T.execCommand('Italic');
      case 'underline': return T.execCommand('Underline');
      case 'strike': return T.execCommand('Strikethrough');
      case 'link': return T.execCommand('mceInsertLink', false, { href: arg.href });
      case 'h2': return T.execCommand('FormatBlock', false, 'h2');
      case 'pre': return T.execCommand('FormatBlock', false, 'pre');
      case 'ul': return T.execCommand('InsertUnorderedList');
      case 'ol': return T.execCommand('InsertOrderedList');
      case 'quote': return T.execCommand('mceBlockQuote');
      case 'table': return T.execCommand('mceInsertTable', false, { rows: arg.rows, columns: arg.cols });
      case 'rowBelow': return T.execCommand('mceTableInsertRowAfter');
      case 'image': return T.insertContent('<img src="' + arg.src + '" alt="photo">');
      case 'html': return T.insertContent(arg.html);
      case 'setHtml': return T.setContent(arg.html);
      case 'undo': return T.execCommand('Undo');
      case 'redo': return T.execCommand('Redo');
      case 'indent': return T.execCommand('Indent');
      case 'delete': return T.execCommand('Delete');
    }
  }
  throw new Error('unknown action ' + action);
}
`;

/** Runs `body` (JavaScript using the helpers above: select, caret, run, root…) in the page. */
export function rt<T = unknown>(page: Page, body: string): Promise<T> {
  return page.evaluate(`(function () {${HELPERS}\n${body}\n})()`) as Promise<T>;
}

export const selectWord = (page: Page, word: string, nth = 0) => rt(page, `select(${JSON.stringify(word)}, ${nth});`);
export const caretAt = (page: Page, word: string, after: boolean) => rt(page, `caret(${JSON.stringify(word)}, ${after});`);
export const command = (page: Page, action: string, arg?: unknown) => rt(page, `run(${JSON.stringify(action)}, ${JSON.stringify(arg ?? null)});`);

/**
 * Waits until every peer's editor serialises to the same HTML, compared through `same` (e.g. to ignore how spaces
 * are spelled), and `accept` holds for it; returns the first peer's HTML.
 */
export async function convergedHtml(
  peers: readonly Peer[],
  accept: (html: string) => boolean = () => true,
  timeoutMs = 15_000,
  same: (html: string) => string = (html) => html,
): Promise<string> {
  let htmls: string[] = [];
  await waitUntil(
    async () => {
      htmls = await Promise.all(peers.map((p) => (p.driver as RichTextDriver).html(p.page)));
      return htmls.every((h) => same(h) === same(htmls[0]!)) && accept(htmls[0]!);
    },
    { timeoutMs, message: () => `identical HTML in every editor; now ${JSON.stringify(Object.fromEntries(peers.map((p, i) => [p.name, htmls[i]])))}` },
  );
  return htmls[0]!;
}
