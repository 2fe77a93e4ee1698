// In-page helpers for the presence tests: where a word is drawn in each editor (measured independently of Wave's
// presence code), selecting a word, scrolling, and reading what Wave drew. Kept as plain JavaScript source:
// functions compiled by tsx carry `__name` helpers that do not exist in the page.
import type { Page } from 'playwright-core';

export interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

const HELPERS = `(function () {
  if (window.__presence) return;
  function frameOffset(kind) {
    if (kind !== 'tinymce') return { x: 0, y: 0 };
    var f = window.tiny.iframeElement || window.tiny.getContentAreaContainer().querySelector('iframe');
    var r = f.getBoundingClientRect();
    return { x: r.left + f.clientLeft, y: r.top + f.clientTop };
  }
  function root(kind) {
    if (kind === 'quill') return window.quill.root;
    if (kind === 'codemirror') return window.cm.getWrapperElement().querySelector('.CodeMirror-code');
    if (kind === 'froala') return window.froala.el;
    if (kind === 'tinymce') return window.tiny.getBody();
    return null;
  }
  /** The text node and offset of the whole word \`word\` (not a prefix of a longer one). */
  function findWord(kind, word) {
    var r = root(kind);
    var walker = r.ownerDocument.createTreeWalker(r, 4);
    for (var n = walker.nextNode(); n; n = walker.nextNode()) {
      var re = new RegExp('(^|[^A-Za-z0-9])' + word + '(?![A-Za-z0-9])');
      var m = re.exec(n.data);
      if (m) return { node: n, offset: m.index + m[1].length };
    }
    return null;
  }
  /** Textarea: an independent mirror of the textarea's text with the word in a span. */
  function textareaWord(word) {
    var ta = document.getElementById('editor');
    var i = ta.value.search(new RegExp('(^|[^A-Za-z0-9])' + word + '(?![A-Za-z0-9])'));
    if (i < 0) return null;
    if (ta.value.slice(i, i + word.length) !== word) i += 1;
    var cs = getComputedStyle(ta);
    var d = document.createElement('div');
    ['fontFamily', 'fontSize', 'fontWeight', 'fontStyle', 'lineHeight', 'letterSpacing', 'wordSpacing', 'tabSize',
     'paddingTop', 'paddingRight', 'paddingBottom', 'paddingLeft', 'textIndent', 'textTransform'].forEach(function (p) { d.style[p] = cs[p]; });
    d.style.position = 'absolute';
    d.style.boxSizing = 'border-box';
    d.style.border = '0';
    d.style.margin = '0';
    d.style.whiteSpace = 'pre-wrap';
    d.style.overflowWrap = 'break-word';
    d.style.width = ta.clientWidth + 'px';
    d.style.visibility = 'hidden';
    var r = ta.getBoundingClientRect();
    d.style.left = (r.left + ta.clientLeft + window.scrollX - ta.scrollLeft) + 'px';
    d.style.top = (r.top + ta.clientTop + window.scrollY - ta.scrollTop) + 'px';
    d.appendChild(document.createTextNode(ta.value.slice(0, i)));
    var s = document.createElement('span');
    s.textContent = word;
    d.appendChild(s);
    d.appendChild(document.createTextNode(ta.value.slice(i + word.length)));
    document.body.appendChild(d);
    var b = s.getBoundingClientRect();
    d.remove();
    return { left: b.left, top: b.top, right: b.right, bottom: b.bottom };
  }
  window.__presence = {
    wordBox: function (kind, word) {
      if (kind === 'textarea') return textareaWord(word);
      var w = findWord(kind, word);
      if (!w) return null;
      var range = w.node.ownerDocument.createRange();
      range.setStart(w.node, w.offset);
      range.setEnd(w.node, w.offset + word.length);
      var b = range.getBoundingClientRect();
      var o = frameOffset(kind);
      return { left: b.left + o.x, top: b.top + o.y, right: b.right + o.x, bottom: b.bottom + o.y };
    },
    select: function (kind, word) {
      if (kind === 'textarea') {
        var ta = document.getElementById('editor');
        var i = ta.value.indexOf(word);
        ta.focus();
        ta.setSelectionRange(i, i + word.length, 'forward');
        return;
      }
      if (kind === 'quill') {
        var q = window.quill, j = q.getText().indexOf(word);
        q.focus();
        q.setSelection(j, word.length, 'user');
        return;
      }
      if (kind === 'codemirror') {
        var cm = window.cm, k = cm.getValue().indexOf(word);
        cm.focus();
        cm.setSelection(cm.posFromIndex(k), cm.posFromIndex(k + word.length));
        return;
      }
      // Focus first: focusing may re-render the editor's DOM (Froala restores its selection markers).
      if (kind === 'froala') window.froala.events.focus(); else window.tiny.focus();
      var w = findWord(kind, word);
      var range = w.node.ownerDocument.createRange();
      range.setStart(w.node, w.offset);
      range.setEnd(w.node, w.offset + word.length);
      if (kind === 'tinymce') window.tiny.selection.setRng(range);
      else w.node.ownerDocument.getSelection().setBaseAndExtent(w.node, w.offset, w.node, w.offset + word.length);
    },
    /** Scrolls the editor (its own scroller, or the window) so that \`word\` is at \`fraction\` of its visible height. */
    scrollTo: function (kind, word, fraction) {
      if (kind === 'codemirror') {
        var cm = window.cm;
        cm.scrollIntoView(cm.posFromIndex(cm.getValue().indexOf(word)), 0);
      }
      var b = this.wordBox(kind, word);
      if (!b) return false;
      var target, vp;
      if (kind === 'textarea') target = document.getElementById('editor');
      else if (kind === 'codemirror') target = window.cm.getScrollerElement();
      else if (kind === 'quill' && window.quill.root.scrollHeight > window.quill.root.clientHeight + 5) target = window.quill.root;
      if (kind === 'tinymce') {
        var f = window.tiny.iframeElement || window.tiny.getContentAreaContainer().querySelector('iframe');
        vp = f.getBoundingClientRect();
        window.tiny.getWin().scrollBy(0, b.top - (vp.top + fraction * vp.height));
      } else if (target) {
        vp = target.getBoundingClientRect();
        target.scrollTop += b.top - (vp.top + fraction * vp.height);
      } else {
        window.scrollBy(0, b.top - fraction * window.innerHeight);
      }
      return true;
    },
    /** What Wave drew for the user named \`name\`: caret, selection boxes, pointer, label state. */
    drawn: function (name) {
      function box(el) { var b = el.getBoundingClientRect(); return { left: b.left, top: b.top, right: b.right, bottom: b.bottom }; }
      var out = { caret: null, selection: [], pointer: null, pointerShape: null, labelVisible: false, caretColor: null, pointerColor: null };
      document.querySelectorAll('.wave-cursor').forEach(function (c) {
        var label = c.querySelector('.wave-caret-label');
        if (!label || label.textContent !== name) return;
        var caret = c.querySelector('.wave-caret');
        if (caret && !caret.classList.contains('wave-hidden')) out.caret = box(caret);
        if (caret) out.caretColor = getComputedStyle(caret).backgroundColor;
        out.selection = Array.prototype.map.call(c.querySelectorAll('.wave-selection'), box);
        out.labelVisible = getComputedStyle(label).visibility === 'visible' && getComputedStyle(label).opacity === '1';
      });
      document.querySelectorAll('.wave-pointer').forEach(function (p) {
        var label = p.querySelector('.wave-pointer-label');
        if (!label || label.textContent !== name) return;
        var b = p.getBoundingClientRect();
        out.pointer = { x: b.left, y: b.top };
        out.pointerShape = p.className;
        out.pointerColor = getComputedStyle(p).color;
      });
      return out;
    },
    avatars: function () {
      var bar = document.querySelector('.wave-avatars');
      if (!bar) return null;
      return {
        visible: bar.getClientRects().length > 0,
        className: bar.className,
        box: box(bar),
        names: Array.prototype.map.call(bar.querySelectorAll('.wave-avatar-name'), function (n) { return n.textContent; }),
        initials: Array.prototype.map.call(bar.querySelectorAll('.wave-avatar-initials'), function (n) { return n.textContent; }),
        colors: Array.prototype.map.call(bar.querySelectorAll('.wave-avatar'), function (a) { return getComputedStyle(a).backgroundColor; }),
      };
      function box(el) { var b = el.getBoundingClientRect(); return { left: b.left, top: b.top, right: b.right, bottom: b.bottom }; }
    },
  };
})()`;

export type PresenceKind = 'textarea' | 'quill' | 'codemirror' | 'froala' | 'tinymce';

export interface Drawn {
  caret: Box | null;
  selection: Box[];
  pointer: { x: number; y: number } | null;
  pointerShape: string | null;
  labelVisible: boolean;
  caretColor: string | null;
  pointerColor: string | null;
}

export interface AvatarsInfo {
  visible: boolean;
  className: string;
  box: Box;
  names: string[];
  initials: string[];
  colors: string[];
}

async function install(page: Page): Promise<void> {
  await page.evaluate(HELPERS);
}

function call<T>(page: Page, fn: string, ...args: unknown[]): Promise<T> {
  return install(page).then(() => page.evaluate(`window.__presence.${fn}(${args.map((a) => JSON.stringify(a)).join(', ')})`) as Promise<T>);
}

export const wordBox = (page: Page, kind: PresenceKind, word: string) => call<Box | null>(page, 'wordBox', kind, word);
export const selectWord = (page: Page, kind: PresenceKind, word: string) => call<void>(page, 'select', kind, word);
export const scrollToWord = (page: Page, kind: PresenceKind, word: string, fraction: number) => call<boolean>(page, 'scrollTo', kind, word, fraction);
export const drawn = (page: Page, name: string) => call<Drawn>(page, 'drawn', name);
export const avatars = (page: Page) => call<AvatarsInfo | null>(page, 'avatars');

/** Polls `probe` until `ok` holds (bounded); on timeout throws with the last value seen. */
export async function until<T>(what: string, probe: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await probe();
    if (ok(last)) return last;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last value: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function near(a: number, b: number, px = 4): boolean {
  return Math.abs(a - b) <= px;
}

/** The union of boxes (null for none). */
export function union(boxes: Box[]): Box | null {
  if (boxes.length === 0) return null;
  return {
    left: Math.min(...boxes.map((b) => b.left)),
    top: Math.min(...boxes.map((b) => b.top)),
    right: Math.max(...boxes.map((b) => b.right)),
    bottom: Math.max(...boxes.map((b) => b.bottom)),
  };
}
