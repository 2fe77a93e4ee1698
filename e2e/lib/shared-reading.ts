// A reading of what an editor shows, in the shared vocabulary of Quill, Froala and TinyMCE (README "One document,
// any editor"), so that three different editors on one document can be compared: one string per line, its block
// kind and its text runs with their marks. Read from the editor's DOM (what the user sees), not from the session.
import type { Page } from 'playwright-core';

/**
 * In-page: the lines of the editor on the page (Quill, Froala or TinyMCE), each as
 * `kind[:indent][>quote depth] | runs`, a run as its text followed by its marks in braces.
 *
 * - Kinds: `p`, `h1`…`h6`, `bullet`/`ordered` (a list item; its indent is its nesting depth in Froala and TinyMCE,
 *   the `ql-indent-N` class in Quill, whose lists are `<ol><li data-list>`), `code` (one per line of a `<pre>` or of
 *   Quill's `ql-code-block` lines). A line inside a blockquote carries `>` and the quote depth.
 * - Marks (none on a code line: Quill's code block shows none): b, i, u, s, code, `a=href`, from elements (`strong`/`b`, `em`/`i`, `u`/`ins`, `s`/`strike`/`del`, `a`) or
 *   span styles; an image is the run `[img src]`; a `<br>` inside a line is `⏎` (a line's last one is its
 *   placeholder, RICHTEXT.md [RT-H6], and not read).
 * - Text: U+00A0 is a space and zero-width caret characters are dropped ([RT-H5]); whitespace-only text between
 *   blocks is source formatting. Editor UI is skipped: TinyMCE's `data-mce-bogus="all"` and bookmarks (other bogus
 *   elements are unwrapped, a bogus `<br>` dropped, but read as a `<br>` in a `<pre>`, where Froala writes one),
 *   Froala's `fr-marker` and "Powered by" (`data-f-id="pbf"`), Quill's `ql-ui`.
 */
const READ_LINES = String.raw`(function () {
  var root = window.quill ? window.quill.root : window.froala ? window.froala.el : window.tiny.getBody();
  var lines = [], QUILL = !!window.quill;
  var BLOCK = /^(P|DIV|H[1-6]|PRE|BLOCKQUOTE|UL|OL|LI|TABLE|TBODY|THEAD|TR|TD|TH|SECTION|FIGURE)$/;
  function ui(el) {
    return el.getAttribute('data-mce-bogus') === 'all' || el.getAttribute('data-mce-type') === 'bookmark' ||
      el.classList.contains('fr-marker') || el.getAttribute('data-f-id') === 'pbf' || el.classList.contains('ql-ui') ||
      (el.nodeName === 'BR' && el.hasAttribute('data-mce-bogus'));
  }
  function marksOf(el, marks) {
    var m = marks.slice(), n = el.nodeName, st = el.style || {};
    if (n === 'STRONG' || n === 'B' || /bold|[6-9]00/.test(st.fontWeight || '')) m.push('b');
    if (n === 'EM' || n === 'I' || st.fontStyle === 'italic') m.push('i');
    if (n === 'U' || n === 'INS' || /underline/.test(st.textDecoration || st.textDecorationLine || '')) m.push('u');
    if (n === 'S' || n === 'STRIKE' || n === 'DEL' || /line-through/.test(st.textDecoration || st.textDecorationLine || '')) m.push('s');
    if (n === 'CODE') m.push('code');
    if (n === 'A' && el.hasAttribute('href')) m.push('a=' + el.getAttribute('href'));
    return m;
  }
  function line(kind, indent, quote) {
    var l = { kind: kind, indent: indent, quote: quote, runs: [] };
    lines.push(l);
    return l;
  }
  function add(l, text, marks) {
    if (!text) return;
    var key = marks.slice().sort().filter(function (x, k, a) { return a.indexOf(x) === k; }).join(',');
    var last = l.runs[l.runs.length - 1];
    if (last && last.key === key) last.text += text; else l.runs.push({ text: text, key: key });
  }
  /** Text as shown: zero-width characters dropped, U+00A0 a space; outside Quill and \`<pre>\` a tab or newline is source formatting. */
  function clean(s, exact) {
    s = s.replace(/[\u200b\ufeff]/g, '').replace(/\u00a0/g, ' ');
    return exact ? s : s.replace(/[\t\n\r]/g, '');
  }
  /** One inline node into line \`l\`. */
  function inlineNode(c, l, marks, exact) {
    if (c.nodeType === 3) add(l, clean(c.data, exact), marks);
    // In a <pre>, TinyMCE's bogus <br> is the placeholder of an empty last line, which Froala spells as a <br>.
    else if (exact && c.nodeName === 'BR' && c.hasAttribute('data-mce-bogus')) add(l, '⏎', marks);
    else if (c.nodeType !== 1 || ui(c)) return;
    else if (c.nodeName === 'BR') add(l, '⏎', marks);
    else if (c.nodeName === 'IMG') add(l, '[img ' + c.getAttribute('src') + ']', marks);
    else inline(c, l, marksOf(c, marks), exact);
  }
  /** The inline content of \`node\` into line \`l\`. */
  function inline(node, l, marks, exact) {
    for (var c = node.firstChild; c; c = c.nextSibling) inlineNode(c, l, marks, exact);
  }
  /** Whether \`node\` holds block elements (then its inline runs between them are lines of their own). */
  function hasBlocks(node) {
    for (var c = node.firstChild; c; c = c.nextSibling) if (c.nodeType === 1 && !ui(c) && (BLOCK.test(c.nodeName) || hasBlocks(c))) return true;
    return false;
  }
  /** The lines of a container's children; \`ctx\`: { list: kind or null, depth, quote }. */
  function blocks(node, ctx) {
    var open = null;
    for (var c = node.firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 1 && ui(c)) continue;
      if (c.nodeType === 3 && !open && !/[^\t\n\r \u200b\ufeff]/.test(c.data)) continue;
      if (c.nodeType === 3 || (c.nodeType === 1 && !BLOCK.test(c.nodeName) && !hasBlocks(c))) {
        if (!open) open = line(ctx.list || 'p', ctx.list ? ctx.depth : 0, ctx.quote);
        inlineNode(c, open, [], QUILL);
        continue;
      }
      open = null;
      block(c, ctx);
    }
  }
  function block(el, ctx) {
    var n = el.nodeName, indent = /ql-indent-(\d)/.exec(el.className || '');
    if (n === 'UL' || n === 'OL') {
      var depth = ctx.list ? ctx.depth + 1 : 0;
      for (var li = el.firstChild; li; li = li.nextSibling) {
        if (li.nodeType !== 1 || ui(li)) continue;
        if (li.hasAttribute('data-list')) { inline(li, line(li.getAttribute('data-list'), (/ql-indent-(\d)/.exec(li.className) || [0, 0])[1] * 1, ctx.quote), [], true); continue; }
        var kind = n === 'UL' ? 'bullet' : 'ordered', first = li.firstChild;
        // Source whitespace only, as blocks() skips it: a U+00A0 is content (the item's line is a space), not a gap.
        while (first && ((first.nodeType === 3 && !/[^\t\n\r \u200b\ufeff]/.test(first.data)) || (first.nodeType === 1 && ui(first)))) first = first.nextSibling;
        // A list item that begins with a nested list has an empty first line ([RT-L4]).
        if (!first || first.nodeName === 'UL' || first.nodeName === 'OL') line(kind, depth, ctx.quote);
        blocks(li, { list: kind, depth: depth, quote: ctx.quote });
      }
    } else if (n === 'BLOCKQUOTE' && QUILL) {
      inline(el, line('p', 0, 1), [], true);
    } else if (n === 'BLOCKQUOTE') {
      blocks(el, { list: ctx.list, depth: ctx.depth, quote: ctx.quote + 1 });
    } else if (n === 'PRE') {
      var l = line('code', 0, ctx.quote);
      inline(el, l, [], true);
      lines.pop();
      var text = l.runs.map(function (r) { return r.text; }).join('').replace(/⏎/g, '\n').replace(/\n$/, '');
      text.split('\n').forEach(function (t) { var x = line('code', 0, ctx.quote); if (t) x.runs.push({ text: t, key: '' }); });
    } else if (el.classList.contains('ql-code-block-container')) {
      blocks(el, ctx);
    } else if (el.classList.contains('ql-code-block')) {
      inline(el, line('code', 0, ctx.quote), [], true);
    } else if (/^H[1-6]$/.test(n) || n === 'P' || (n === 'DIV' && !hasBlocks(el))) {
      var kind2 = ctx.list || (/^H/.test(n) ? n.toLowerCase() : 'p');
      inline(el, line(kind2, ctx.list ? ctx.depth : indent ? indent[1] * 1 : 0, ctx.quote), [], QUILL);
    } else {
      blocks(el, ctx);
    }
  }
  blocks(root, { list: null, depth: 0, quote: 0 });
  return lines.map(function (l) {
    var runs = l.runs.slice();
    var last = runs[runs.length - 1];
    if (last) { last.text = last.text.replace(/⏎$/, ''); if (!last.text) runs.pop(); }
    // A code line shows no inline formats in Quill: not compared there.
    if (l.kind === 'code') runs = runs.map(function (r) { return { text: r.text, key: '' }; });
    return l.kind + (l.indent ? ':' + l.indent : '') + (l.quote ? '>' + l.quote : '') + ' | ' +
      runs.map(function (r) { return r.text + (r.key ? '{' + r.key + '}' : ''); }).join('');
  });
})()`;

/** The editor's lines on `page` in the shared vocabulary (see READ_LINES). */
export function sharedLines(page: Page): Promise<string[]> {
  return page.evaluate(READ_LINES) as Promise<string[]>;
}

/** Where readings first differ (as `readingsAgree` compares them): the line index, and each reading's lines around it (`names` label them). */
export function firstDifference(readings: readonly string[][], names: readonly string[], quillFirst: boolean, context = 2): string {
  const html = quillFirst ? 1 : 0;
  const same = (at: number) =>
    readings.slice(html).every((r) => r[at] === readings[html]![at]) &&
    (!quillFirst || (readings[0]![at] !== undefined && readings[1]![at] !== undefined && quillShows(readings[0]![at]!, readings[1]![at]!)));
  let at = 0;
  while (at < Math.max(...readings.map((r) => r.length)) && same(at)) at++;
  const around = readings.map((r, k) => {
    const shown = r.slice(Math.max(0, at - context), at + context + 1).map((l, i) => `  ${Math.max(0, at - context) + i}${Math.max(0, at - context) + i === at ? '*' : ' '} ${JSON.stringify(l)}`);
    return `${names[k]} (${r.length} lines):\n${shown.join('\n')}`;
  });
  return `line ${at} first differs:\n${around.join('\n')}`;
}

const LINE = /^([a-z0-9]+)(:\d+)?(?:>(\d+))? \| ([\s\S]*)$/;

/**
 * Whether Quill's reading of a line shows what an HTML editor's reading of the same line shows. Equal, or a quoted
 * line Quill cannot show whole: Quill has one level of blockquote (our `quote-depth` is not shown), and one block
 * format per line, where Froala and TinyMCE put a heading, a list or a code block inside a blockquote
 * (RICHTEXT.md [RT-Q1]): Quill then shows the line as that block or as a quoted paragraph (whichever format it
 * applied last), with the same text and marks.
 */
export function quillShows(quill: string, html: string): boolean {
  if (quill === html) return true;
  const q = LINE.exec(quill);
  const h = LINE.exec(html);
  if (!q || !h || q[4] !== h[4] || !h[3]) return false;
  const quotedParagraph = q[1] === 'p' && !q[2] && q[3] === '1';
  if (h[1] === 'p') return quotedParagraph;
  return quotedParagraph || (q[1] === h[1] && q[2] === h[2] && !q[3]);
}

/** Whether the readings agree: the HTML editors' exactly, Quill's (the first, when `quillFirst`) line by line as `quillShows`. */
export function readingsAgree(readings: readonly string[][], quillFirst: boolean): boolean {
  const html = readings.slice(quillFirst ? 1 : 0);
  if (!html.every((r) => JSON.stringify(r) === JSON.stringify(html[0]))) return false;
  if (!quillFirst) return true;
  const quill = readings[0]!;
  return quill.length === html[0]!.length && quill.every((line, i) => quillShows(line, html[0]![i]!));
}
