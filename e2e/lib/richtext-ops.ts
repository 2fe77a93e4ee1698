// In-page editing operations on Froala and TinyMCE for the randomized tests (richtext-fuzz.test.ts,
// any-editor-fuzz.test.ts), written with the helpers of richtext.ts (`root`, `texts`, `setRange`, `run`). Every
// random choice is an argument `r` in [0, 1) drawn by the caller from its seeded PRNG. Plain JavaScript source, for
// the reason given in richtext-drivers.ts.

import { BLOCKS as BLOCK_HELPERS_JS } from './richtext-drivers.ts';

/** Caret placement, word ranges, word deletion and formatting, block changes, and Enter instrumentation. */
export const EDIT_OPS_JS = String.raw`
${BLOCK_HELPERS_JS}
function contentTexts() {
  return texts().filter(function (n) {
    for (var e = n.parentElement; e && e !== root(); e = e.parentElement) {
      if (e.hasAttribute('data-mce-bogus') || e.classList.contains('fr-marker') || e.getAttribute('data-f-id') === 'pbf') return false;
    }
    return /\S/.test(visible(n.data));
  });
}
function pick(list, r) { return list[Math.min(list.length - 1, Math.floor(r * list.length))]; }
var BLOCKS = 'p,li,td,th,h1,h2,h3,h4,h5,h6,pre,blockquote';
function blockOf(n) { return n.parentElement.closest(BLOCKS) || root(); }
/**
 * The text of the block around a random text node, with a way back from an index to a DOM point. Only the block's
 * own text: a list item's nested list or paragraph is another block (a range into it would merge blocks).
 */
function randomBlock(r) {
  var all = contentTexts();
  return all.length === 0 ? null : blockAround(all, pick(all, r));
}
function blockAround(all, picked) {
  var block = blockOf(picked);
  var own = all.filter(function (n) { return blockOf(n) === block; });
  // The run of the block's text around the picked node that no nested list, table or block interrupts.
  var groups = [[]], between = root().ownerDocument.createRange();
  own.forEach(function (n, k) {
    if (k > 0) {
      between.setStartAfter(own[k - 1]);
      between.setEndBefore(n);
      if (between.cloneContents().querySelector(BLOCKS + ',ul,ol,table')) groups.push([]);
    }
    groups[groups.length - 1].push(n);
  });
  var nodes = groups.filter(function (g) { return g.indexOf(picked) >= 0; })[0];
  // The visible text only: the editor's zero-width markers (TinyMCE's caret containers, U+FEFF, which \s matches)
  // are no characters of the document, and a boundary "after" one can lie inside a word a peer is typing. points[i]:
  // the DOM point right after visible character i - 1 (points[0]: before the first one).
  var str = '', points = [];
  nodes.forEach(function (n) {
    for (var o = 0; o < n.data.length; o++) {
      if (visible(n.data[o]) === '') continue;
      if (str.length === 0) points.push({ node: n, offset: o });
      str += n.data[o];
      points.push({ node: n, offset: o + 1 });
    }
  });
  return { str: str, at: function (i) { return points[i]; } };
}
function caretAtBoundary(r1, r2) {
  var b = randomBlock(r1);
  if (!b) { var e = root().querySelector('p,li,td,h2') || root(); setRange(e, 0, e, 0); return; }
  var spots = [];
  // Only the start or right after whitespace, never right after a letter: the end of a word a peer is still typing
  // looks like a boundary, and an insertion there, concurrent with the peer's next key, lands inside the finished
  // word (both are inserted at the same place; Yjs orders them by client). As in fuzz.test.ts.
  for (var i = 0; i <= b.str.length; i++) if (i === 0 || /\s/.test(b.str[i - 1])) spots.push(i);
  var p = b.at(pick(spots, r2));
  setRange(p.node, p.offset, p.node, p.offset);
}
/**
 * When set, a pattern every word a range covers must match (e.g. only finished words of the fuzz: a word a peer is
 * still typing is then never selected, so no deletion takes its first letters).
 */
var FINISHED = null;
/** Whole words [i, i+count) of one block, as a DOM range. */
function wordRange(r1, r2, r3) {
  var b = randomBlock(r1);
  if (!b) return null;
  var re = /\S+/g, m, words = [];
  while ((m = re.exec(b.str))) words.push([m.index, m.index + m[0].length]);
  if (words.length === 0) return null;
  var ok = function (k) { return !FINISHED || FINISHED.test(b.str.slice(words[k][0], words[k][1])); };
  var i = Math.floor(r2 * words.length), j = i, last = Math.min(words.length - 1, i + Math.floor(r3 * 3));
  if (!ok(i)) {
    var good = words.map(function (_, k) { return k; }).filter(ok);
    if (good.length === 0) return null;
    i = j = last = pick(good, r2);
  }
  while (j < last && ok(j + 1)) j++;
  var s = b.at(words[i][0]), e = b.at(words[j][1]);
  return { s: s, e: e, text: b.str.slice(words[i][0], words[j][1]) };
}
function deleteWords(r1, r2, r3) {
  var w = wordRange(r1, r2, r3);
  if (!w) return '';
  setRange(w.s.node, w.s.offset, w.e.node, w.e.offset);
  if (kind === 'tinymce') T.execCommand('Delete'); else root().ownerDocument.execCommand('delete');
  return w.text;
}
/** Turns the block at a random place into a heading, a list item or a blockquote. */
function changeBlock(r1, r2, action) { caretAtBoundary(r1, r2); run(action); }
function formatWords(r1, r2, r3, action, href) {
  var w = wordRange(r1, r2, r3);
  if (!w) return;
  // Froala's link.insert(href, text) inside an existing link rewrites that whole link's text (its other words
  // vanish by the editor's own design, not by a lost edit): there the words are underlined instead.
  var inLink = function (n) { var e = n.nodeType === 1 ? n : n.parentElement; return !!(e && e.closest('a')); };
  if (action === 'link' && kind === 'froala' && (inLink(w.s.node) || inLink(w.e.node))) action = 'underline';
  setRange(w.s.node, w.s.offset, w.e.node, w.e.offset);
  run(action, { href: href, text: w.text });
}
/** Records the editor's text just before and just after its own handler of the next Enter (in \`window.__enter\`). */
function armEnter() {
  var d = root().ownerDocument;
  window.__enter = null;
  d.addEventListener('keydown', function h(e) {
    if (e.key !== 'Enter') return;
    d.removeEventListener('keydown', h, true);
    var before = visible(root().textContent);
    setTimeout(function () { window.__enter = { before: before, after: visible(root().textContent) }; }, 0);
  }, true);
}
`;
