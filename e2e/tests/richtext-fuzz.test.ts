// Randomized convergence for the rich-text editors (A = Froala, D = TinyMCE through its plugin): three browser
// contexts edit one document at the same time — typing at random places, deleting words and ranges across
// paragraphs, formatting, changing a block's type (heading, list item, blockquote), pasting up to 1 KB of HTML,
// pressing Enter, undoing their own last edit — and must end with identical HTML that holds every word typed and
// not deleted, exactly once.
// 300 operations per context (WAVE_FUZZ_OPS sets any number). The seed is printed; replay with WAVE_E2E_SEED.
// `npm test` (CI) replays the first named seed of each editor in NAMED_SEEDS; `npm run test:long` and WAVE_FUZZ=1
// replay them all and draw a fresh seed per editor (suite.ts, FRESH_FUZZ_SEEDS and laterSeedSkip).
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { Browser } from 'playwright-core';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHOTS_DIR, withScene, type Peer } from '../lib/browser.ts';
import { RICH_TEXT_DRIVERS, type RichTextDriver } from '../lib/richtext-drivers.ts';
import { convergedHtml, rt } from '../lib/richtext.ts';
import { EDIT_OPS_JS } from '../lib/richtext-ops.ts';
import type { WaveServer } from '../lib/server.ts';
import { freshDocId, seededRandom, testSeed, waitUntil } from '../lib/util.ts';
import { freshSeedsSkip, laterSeedSkip, serverAndBrowser } from '../lib/suite.ts';
import { assertNoneDoubled, assertNoneMissing, removedRange, WORD, wordsRemoved, type Integrity } from '../lib/words.ts';
import '../lib/page-globals.ts';

/** Operations per context (issue 3: 300; about 70 s per editor on a two-core machine). */
const OPS = Number(process.env.WAVE_FUZZ_OPS ?? 300);
const TIMEOUT_MS = 900_000;

let server: WaveServer;
let browser: Browser;

serverAndBrowser((s, b) => {
  server = s;
  browser = b;
});

// In-page operations (JavaScript using the helpers of lib/richtext.ts). `r` values come from the seeded PRNG.
const OPS_JS = EDIT_OPS_JS + String.raw`
/** From the start of a word in one block to the end of a word in the next block or the one after: the text deleted. */
function deleteAcross(r1, r2, r3) {
  var all = contentTexts();
  if (all.length === 0) return '';
  var first = pick(all, r1), later = [];
  all.forEach(function (n) {
    if (blockOf(n) !== blockOf(first) && (first.compareDocumentPosition(n) & 4) && later.indexOf(blockOf(n)) < 0) later.push(blockOf(n));
  });
  if (later.length === 0) return '';
  var endBlock = later[Math.min(later.length - 1, r2 < 0.7 ? 0 : 1)];
  var a = blockAround(all, first);
  // The end block's first text after \`first\`: a list item around a nested one has text before it too, and a range
  // ending there would end before it starts (collapsed: Delete would then delete the character before the caret).
  var b = blockAround(all, all.filter(function (n) { return blockOf(n) === endBlock && (first.compareDocumentPosition(n) & 4); })[0]);
  var starts = [], ends = [];
  for (var i = 0; i < a.str.length; i++) if (/\S/.test(a.str[i]) && (i === 0 || /\s/.test(a.str[i - 1]))) starts.push(i);
  for (var j = 1; j <= b.str.length; j++) if (/\S/.test(b.str[j - 1]) && (j === b.str.length || /\s/.test(b.str[j]))) ends.push(j);
  if (starts.length === 0 || ends.length === 0) return '';
  var s = a.at(pick(starts, r3)), e = b.at(pick(ends, 1 - r3));
  setRange(s.node, s.offset, e.node, e.offset);
  var text = visible(root().ownerDocument.getSelection().toString());
  if (root().ownerDocument.getSelection().isCollapsed) return '';
  if (kind === 'tinymce') T.execCommand('Delete'); else root().ownerDocument.execCommand('delete');
  return text;
}
/** Pastes \`html\` at a random boundary; returns the editor's text right after (the editor may drop some of it). */
function paste(r1, r2, html) { caretAtBoundary(r1, r2); run('html', { html: html }); return visible(root().textContent); }
/** The text's items in list order, deleted ones included (Yjs internals: the \`Y.Text\`'s \`_start\`, then each \`right\`). */
function textItems() {
  var list = [];
  for (var it = window.coedit.session.doc.getText('text')._start; it; it = it.right) list.push(it);
  return list;
}
/** A Yjs ID as "client:clock"; null for none. */
function idText(id) { return id ? id.client + ':' + id.clock : null; }
/**
 * Records what undos removed (test instrumentation, reading Yjs internals: a transaction's delete set, the store's
 * items). \`window.__undo\` = { types, removed }: \`types\` are the IDs ("client:clock") of the nodes this page's undo
 * deleted; \`removed\` holds each character item ({ client, clock, str, at }) this page's undo deleted, and each one a
 * peer's transaction deleted with the IDs of the nodes around it (\`within\`), to be matched against every page's
 * \`types\`: a peer's undo that removes a node removes what this page typed in it.
 */
function recordUndoRemovals() {
  var doc = window.coedit.session.doc, manager = window.coedit.session.undo.manager;
  var rec = window.__undo = { types: [], removed: [], restored: [] };
  doc.on('afterTransaction', function (tr) {
    var own = tr.origin === manager;
    if (tr.local && !own) return;
    // The items this page's undo or redo created (what it put back): the clocks it took.
    var from = tr.beforeState.get(doc.clientID) || 0, to = tr.afterState.get(doc.clientID) || 0;
    if (own && to > from) rec.restored.push({ client: doc.clientID, from: from, to: to });
    tr.deleteSet.clients.forEach(function (ranges, client) {
      var structs = doc.store.clients.get(client) || [];
      ranges.forEach(function (range) {
        for (var k = structIndex(structs, range.clock); k < structs.length && structs[k].id.clock < range.clock + range.len; k++) {
          var item = structs[k];
          if (!item.content) continue;
          if (own && item.content.type) rec.types.push(idText(item.id));
          if (typeof item.content.str !== 'string') continue;
          var within = [];
          for (var t = item.parent; t && t._item; t = t._item.parent) within.push(idText(t._item.id));
          rec.removed.push({ client: client, clock: item.id.clock, str: item.content.str, own: own, within: within, at: Date.now() });
        }
      });
    });
  });
}
/**
 * Of \`words\` ([{ word, client }]: a typed word and its author's client id), those split by text an undo put back
 * (\`restored\`: [{ client, from, to }], the clocks undos and redos took): the word's letters are its author's
 * characters, consecutive in clock order, and an item those clocks created lies between two of its letters in the
 * text's item list (deleted items included). Yjs puts an undone deletion back right before the deleted original
 * (yjs src/structs/Item.js, \`redoItem\`), and a letter typed right before a peer's deletion went after the deleted
 * items (a \`Y.Text\` insert skips deleted items to its right: src/types/YText.js, \`minimizeAttributeChanges\`), so
 * an undo of that deletion, however much later, lands inside the word (packages/client/test/undo.test.ts).
 */
function splitByRestore(words, restored) {
  var list = textItems();
  function wasRestored(item) {
    return restored.some(function (r) { return r.client === item.id.client && item.id.clock < r.to && item.id.clock + item.length > r.from; });
  }
  return words.filter(function (w) {
    var chars = [];
    list.forEach(function (item, pos) {
      if (item.id.client !== w.client || item.deleted || typeof item.content.str !== 'string') return;
      for (var i = 0; i < item.content.str.length; i++) chars.push({ c: item.content.str[i], clock: item.id.clock + i, pos: pos });
    });
    chars.sort(function (x, y) { return x.clock - y.clock; });
    var at = chars.map(function (x) { return x.c; }).join('').indexOf(w.word);
    if (at < 0) return false;
    for (var k = at; k < at + w.word.length - 1; k++) {
      var lo = Math.min(chars[k].pos, chars[k + 1].pos), hi = Math.max(chars[k].pos, chars[k + 1].pos);
      for (var m = lo + 1; m < hi; m++) if (wasRestored(list[m])) return true;
    }
    return false;
  });
}
/**
 * The items around a broken word, for the failure record: the author's items (any content, deleted too) whose
 * clocks lie near the word's letters, in clock order, each with its place in the text's item list and the items
 * right before and after it there: id, origin and right origin ("client:clock"), deleted or not, and the string,
 * embed or format held ("collected": a deleted run whose content Yjs has dropped, its length). Shows who put what
 * between the word's letters. The letters are looked for as the whole word, else as its longest piece, which may
 * also be part of a longer word of the same author's ("ann11" in "ann113q").
 */
function itemsAround(word, client) {
  var list = textItems();
  function show(item, pos) {
    if (!item) return null;
    var c = item.content;
    return { pos: pos, id: idText(item.id), origin: idText(item.origin), rightOrigin: idText(item.rightOrigin), deleted: item.deleted,
      content: typeof c.str === 'string' ? c.str : c.key !== undefined ? { format: c.key, value: c.value } : c.embed !== undefined ? { embed: c.embed } : c.len !== undefined ? { collected: c.len } : 'other' };
  }
  var mine = [];
  list.forEach(function (item, pos) { if (item.id.client === client) mine.push({ item: item, pos: pos }); });
  mine.sort(function (x, y) { return x.item.id.clock - y.item.id.clock; });
  // The author's characters in clock order, each with its clock: the word's letters were typed one after another.
  var chars = [], clocks = [];
  mine.forEach(function (m) {
    var s = m.item.content.str;
    if (typeof s !== 'string') return;
    for (var i = 0; i < s.length; i++) { chars.push(s[i]); clocks.push(m.item.id.clock + i); }
  });
  var str = chars.join(''), at = -1;
  for (var len = word.length; len > 0 && at < 0; len--) for (var k = 0; k + len <= word.length && at < 0; k++) at = str.indexOf(word.slice(k, k + len));
  if (at < 0) return [];
  var lo = clocks[at] - 12, hi = clocks[at] + 40;
  return mine.filter(function (m) { return m.item.id.clock + m.item.length > lo && m.item.id.clock < hi; }).map(function (m) {
    return { item: show(m.item, m.pos), before: show(list[m.pos - 1], m.pos - 1), after: show(list[m.pos + 1], m.pos + 1) };
  });
}
/**
 * Records this page's own writes (test instrumentation, reading Yjs internals as recordUndoRemovals does):
 * \`window.__writes\` = { client, typed, deleted }. \`typed\`: each run of characters a local transaction inserted
 * ({ clock, str, op }: the clock of its first character); \`deleted\`: each range a local transaction deleted
 * ({ client, clock, len, op }). \`op\` is the fuzz operation this page was running (\`window.__op\`).
 */
function recordWrites() {
  var doc = window.coedit.session.doc;
  var rec = window.__writes = { client: doc.clientID, typed: [], deleted: [] };
  doc.on('afterTransaction', function (tr) {
    if (!tr.local) return;
    var op = window.__op || '';
    var from = tr.beforeState.get(doc.clientID) || 0, to = tr.afterState.get(doc.clientID) || 0;
    var structs = doc.store.clients.get(doc.clientID) || [];
    for (var k = structs.length - 1; to > from && k >= 0 && structs[k].id.clock + structs[k].length > from; k--) {
      var item = structs[k], str = item.content && item.content.str;
      if (typeof str !== 'string') continue;
      var a = Math.max(from, item.id.clock), b = Math.min(to, item.id.clock + item.length);
      if (b > a) rec.typed.push({ clock: a, str: str.slice(a - item.id.clock, b - item.id.clock), op: op });
    }
    tr.deleteSet.clients.forEach(function (ranges, client) {
      ranges.forEach(function (r) { rec.deleted.push({ client: client, clock: r.clock, len: r.len, op: op }); });
    });
  });
}
/** The index in \`structs\` (one client's, in clock order) of the first struct that ends after \`clock\`. */
function structIndex(structs, clock) {
  var lo = 0, hi = structs.length;
  while (lo < hi) { var mid = (lo + hi) >> 1; if (structs[mid].id.clock + structs[mid].length <= clock) lo = mid + 1; else hi = mid; }
  return lo;
}
/** The struct of \`client\` that holds \`clock\`, or null. */
function structAt(client, clock) {
  var structs = window.coedit.session.doc.store.clients.get(client) || [];
  var s = structs[structIndex(structs, clock)];
  return s && s.id.clock <= clock ? s : null;
}
/**
 * What became of typed letters. \`words\`: [{ client, clocks }], the clocks one word's letters took, in typing order.
 * For each: \`chained\`, every letter after the first went in right after the letter before it (its item's origin,
 * past formatting items of the same client: the typist's caret stayed where the word was being typed); \`present\`,
 * per letter, still in the text; \`inside\`, the character items that lie between two consecutive letters in the
 * text ({ client, clock, len }: what others put inside the word since).
 */
function lettersOf(words) {
  var list = textItems(), pos = new Map();
  list.forEach(function (item, k) { pos.set(item, k); });
  return words.map(function (w) {
    var items = w.clocks.map(function (c) { return structAt(w.client, c); });
    var chained = items.every(function (item, k) {
      if (k === 0) return true;
      var prev = w.clocks[k - 1];
      if (!item) return false;
      if (w.clocks[k] > item.id.clock) return w.clocks[k] - 1 === prev;
      var o = item.origin;
      while (o && o.client === w.client && o.clock !== prev) {
        var f = structAt(o.client, o.clock);
        if (!f || !f.content || f.content.key === undefined) return false;
        o = f.origin;
      }
      return !!o && o.client === w.client && o.clock === prev;
    });
    var inside = [];
    for (var k = 1; k < items.length; k++) {
      var a = pos.get(items[k - 1]), b = pos.get(items[k]);
      if (a === undefined || b === undefined) continue;
      for (var m = a + 1; m < b; m++) if (list[m].content && typeof list[m].content.str === 'string') inside.push({ client: list[m].id.client, clock: list[m].id.clock, len: list[m].length });
    }
    return { chained: chained, present: items.map(function (item) { return !!item && !item.deleted; }), inside: inside };
  });
}
/** Undo through the editor's own command (what its toolbar button and keys run): the text before and after. */
function undoOnce() {
  var before = visible(root().textContent);
  run('undo');
  return { before: before, after: visible(root().textContent) };
}
`;

/**
 * HTML in the editors' common spelling: every space plain (U+00A0 and a space are the same content, RICHTEXT.md
 * [RT-H5]), and a list item's empty line before its nested list without the `<br>` an editor keeps there to
 * make that line reachable (read as nothing: the same document, [RT-L4]).
 */
const spacesAsSpaces = (html: string) => html.replace(/&nbsp;|\u00a0/g, ' ').replace(/<li><br>(?=<[uo]l>)/g, '<li>');

const FORMATS = ['bold', 'italic', 'underline', 'strike', 'link'] as const;
/** The fuzz operations, as each page tags its writes with them (recordWrites). */
type Op = 'type' | 'delete' | 'format' | 'block' | 'paste' | 'undo' | 'enter';
/** Operations whose writes remove text by the user's intent: a deletion, an undo, the editor's own Enter (which can drop text: see the Enter operation). */
const USER_DELETIONS: ReadonlySet<Op> = new Set(['delete', 'undo', 'enter']);
/** A page's own writes, as recordWrites keeps them. */
interface Writes {
  client: number;
  typed: Array<{ clock: number; str: string; op: Op }>;
  deleted: Array<{ client: number; clock: number; len: number; op: Op }>;
}
/** What lettersOf (in the page) found about one word's letters. */
interface LetterFacts {
  chained: boolean;
  present: boolean[];
  inside: Array<{ client: number; clock: number; len: number }>;
}
/** Block-type changes (editor commands on the block at the caret). */
const BLOCK_TYPES = ['h2', 'ul', 'ol', 'quote'] as const;

/** Up to ~1 KB of HTML of the kinds hosts paste: paragraphs, marks, links, lists; its words are new and unique. */
function randomHtml(rand: () => number, word: () => string): string {
  const inline = () => {
    const parts: string[] = [];
    for (let k = 0; k < 1 + Math.floor(rand() * 4); k++) {
      const w = word();
      const wrap = rand();
      parts.push(wrap < 0.2 ? `<strong>${w}</strong>` : wrap < 0.35 ? `<em>${w}</em>` : wrap < 0.45 ? `<a href="https://example.com/${w}">${w}</a>` : w);
    }
    return parts.join(' ');
  };
  const shape = rand();
  if (shape < 0.4) return inline();
  if (shape < 0.75) return Array.from({ length: 1 + Math.floor(rand() * 3) }, () => `<p>${inline()}</p>`).join('');
  return `<ul>${Array.from({ length: 1 + Math.floor(rand() * 3) }, () => `<li>${inline()}</li>`).join('')}</ul>`;
}

/**
 * Seeds replayed by name, each editor's first in `npm test` (CI), all of them in `npm run test:long` or with
 * WAVE_FUZZ=1 (one run takes 1–2 minutes here).
 */
const NAMED_SEEDS: Record<string, ReadonlyArray<{ name: string; seed: number }>> = {
  tinymce: [
    { name: 'pastes-and-block-changes-under-concurrent-typing', seed: 1789580499 },
  ],
  froala: [
    { name: 'typing-into-ranges-deleted-across-paragraphs', seed: 3651623415 },
  ],
};

/**
 * One run: three pages, `OPS` random operations each from `seed` (the choices; the pages' timing still varies), then
 * identical HTML in every editor (throws otherwise), and what the run found about the words typed.
 */
async function fuzzRun(driver: RichTextDriver, label: string, seed: number): Promise<Integrity> {
  let result: Integrity | undefined;
  await withScene(browser, server, label, async (scene) => {
    const doc = freshDocId(label);
    const names = ['Ann', 'Bob', 'Cid'];
    const peers: Peer[] = [];
    for (const name of names) peers.push(await scene.open(name, driver, { doc }));
    const typed = new Set<string>();
    const deleted = new Set<string>();
    // A starting document everyone agrees on.
    await driver.focusEnd(peers[0]!.page);
    for (let k = 0; k < 3; k++) {
      if (k > 0) await peers[0]!.page.keyboard.press('Enter');
      const line = Array.from({ length: 4 }, (_, i) => `seed${k}w${i}`);
      line.forEach((w) => typed.add(w));
      await driver.type(peers[0]!.page, line.join(' '));
    }
    await convergedHtml(peers, (h) => h.includes('seed2w3'));
    for (const peer of peers) await rt(peer.page, `${OPS_JS}\nrecordUndoRemovals();\nrecordWrites();`);

    const log: string[] = [];
    // When each word was typed and each deletion made (ms, Node's clock, from before the call to after it).
    const typing = new Map<string, { author: string; start: number; end: number }>();
    const deletions: Array<{ start: number; end: number; removed: string }> = [];
    // Pasted words the editor did not insert.
    const droppedByEditor: string[] = [];
    // Words an undo put back, and when (ms, Node's clock).
    const restores: Array<{ at: number; words: string[] }> = [];
    // Undos that removed words, by whom and when (ms, Node's clock, from before the call to after it).
    const undos: Array<{ author: string; start: number; end: number }> = [];
    const started = Date.now();
    await Promise.all(
      peers.map(async (peer, p) => {
        const rand = seededRandom(seed + p + 1);
        let n = 0;
        const word = () => {
          const w = `${peer.name.toLowerCase()}${n++}q`;
          typed.add(w);
          return w;
        };
        for (let op = 0; op < OPS; op++) {
          const kind = rand();
          const r = [rand(), rand(), rand()];
          // Where a user pauses (part of the operation model): Y.UndoManager groups edits made less than 500 ms
          // apart into one undo step, and without pauses one undo would take back every edit of the run. A pause
          // longer than that starts a new step, which the session's `LocalUndo.stopCapturing()` does without the
          // wait (read through the demo's `window.coedit`, not public API). With one before a quarter of the
          // operations, an undo takes back about four.
          if (rand() < 0.25) await peer.page.evaluate(() => (window.coedit as unknown as { session: { undo: { stopCapturing(): void } } }).session.undo.stopCapturing());
          // Each call names the operation it runs (`window.__op`): recordWrites tags this page's writes with it.
          const call = <T = unknown>(op: Op, body: string) => rt<T>(peer.page, `${OPS_JS}\nwindow.__op = '${op}';\n${body}`);
          if (kind < 0.4) {
            await call('type', `caretAtBoundary(${r[0]}, ${r[1]});`);
            const w = word();
            const start = Date.now();
            await driver.type(peer.page, ` ${w} `, { delay: 2 });
            typing.set(w, { author: peer.name, start, end: Date.now() });
            log.push(`${peer.name} type ${w}`);
          } else if (kind < 0.5) {
            const start = Date.now();
            const gone = await call('delete', `return deleteWords(${r[0]}, ${r[1]}, ${r[2]});`);
            deletions.push({ start, end: Date.now(), removed: String(gone) });
            // Words by their shape: the browser may have glued two of them (see the count below).
            for (const m of String(gone).matchAll(new RegExp(WORD.source, 'g'))) deleted.add(m[0]);
            log.push(`${peer.name} delete ${JSON.stringify(gone)}`);
          } else if (kind < 0.56) {
            const start = Date.now();
            const gone = await call('delete', `return deleteAcross(${r[0]}, ${r[1]}, ${r[2]});`);
            deletions.push({ start, end: Date.now(), removed: String(gone) });
            for (const m of String(gone).matchAll(new RegExp(WORD.source, 'g'))) deleted.add(m[0]);
            log.push(`${peer.name} delete across blocks ${JSON.stringify(gone)}`);
          } else if (kind < 0.7) {
            const action = FORMATS[Math.floor(rand() * FORMATS.length)]!;
            await call('format', `formatWords(${r[0]}, ${r[1]}, ${r[2]}, ${JSON.stringify(action)}, 'https://example.com/${peer.name}${op}');`);
            log.push(`${peer.name} ${action}`);
          } else if (kind < 0.78) {
            const action = BLOCK_TYPES[Math.floor(rand() * BLOCK_TYPES.length)]!;
            await call('block', `changeBlock(${r[0]}, ${r[1]}, ${JSON.stringify(action)});`);
            log.push(`${peer.name} block ${action}`);
          } else if (kind < 0.88) {
            const html = randomHtml(rand, word);
            const after = await call<string>('paste', `return paste(${r[0]}, ${r[1]}, ${JSON.stringify(html)});`);
            const pasted = [...new Set([...html.matchAll(new RegExp(WORD.source, 'g'))].map((m) => m[0]))];
            // Words the editor itself did not insert never reached the binding: counted as deleted, and said so.
            const present = new Set([...String(after).matchAll(new RegExp(WORD.source, 'g'))].map((m) => m[0]));
            const dropped = pasted.filter((w) => !present.has(w));
            dropped.forEach((w) => deleted.add(w));
            droppedByEditor.push(...dropped);
            log.push(`${peer.name} paste ${html.length} B: ${pasted.join(' ')}${dropped.length ? ` (the editor dropped ${dropped.join(' ')})` : ''}`);
          } else if (kind < 0.94) {
            // Undo of this user's own last edit: the words it removed count as deleted; the words it put back
            // are remembered (Yjs may put them back inside a word a peer is typing; see the explanation "split by a
            // peer's undo").
            const at = Date.now();
            const { before, after } = await call<{ before: string; after: string }>('undo', `return undoOnce();`);
            const gone = wordsRemoved(before, after);
            const back = wordsRemoved(after, before);
            gone.forEach((w) => deleted.add(w));
            if (back.length > 0) restores.push({ at, words: back });
            if (gone.length > 0) undos.push({ author: peer.name, start: at, end: Date.now() });
            log.push(`${peer.name} undo${gone.length ? ` (removed ${gone.join(' ')})` : ''}${back.length ? ` (put back ${back.join(' ')})` : ''}`);
          } else {
            await call('enter', `caretAtBoundary(${r[0]}, ${r[1]}); armEnter();`);
            const start = Date.now();
            await peer.page.keyboard.press('Enter');
            // TinyMCE 8.9's own Enter, in a list item whose text is followed by a nested list, drops the text
            // after the caret (reproduced without Wave): what the editor's Enter removed counts as deleted.
            // Polled from here: the demo pages' CSP forbids the string evaluation waitForFunction would need.
            type Around = { before: string; after: string };
            const around = (await waitUntil(() => peer.page.evaluate(() => (window as unknown as { __enter: Around | null }).__enter), {
              timeoutMs: 10_000,
              message: `${peer.name}: the editor's Enter was seen`,
            }))!;
            const removed = wordsRemoved(around.before, around.after);
            removed.forEach((w) => deleted.add(w));
            // What it removed is a deletion like any other: it may hold the first letters of a word a peer is typing.
            const dropped = removedRange(around.before, around.after);
            if (/\S/.test(dropped)) deletions.push({ start, end: Date.now(), removed: dropped });
            log.push(`${peer.name} enter${removed.length ? ` (the editor removed ${removed.join(' ')})` : ''}`);
          }
        }
      }),
    );
    console.log(`${label}: ${OPS * peers.length} operations in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    if (droppedByEditor.length > 0) console.log(`${label}: pasted words the editor did not insert (not counted): ${droppedByEditor.join(' ')}`);

    let html: string;
    try {
      html = await convergedHtml(peers, () => true, 30_000, spacesAsSpaces);
      // The document holds plain spaces; an editor that puts its own spelling of them back right after the
      // binding re-rendered a block keeps it (never a loop). Counted, not failed.
      const exact = await Promise.all(peers.map((p) => (p.driver as typeof driver).html(p.page)));
      const respelled = exact.filter((h) => h !== exact[0]).length;
      if (respelled > 0) {
        let at = 0;
        while (at < exact[0]!.length && exact.every((h) => h[at] === exact[0]![at])) at++;
        const where = exact.map((h, k) => `${names[k]}: …${JSON.stringify(h.slice(Math.max(0, at - 60), at + 60))}…`).join('\n');
        console.log(`${label}: ${respelled} editor(s) spell some spaces (U+00A0 / space) or an empty list line (<br>) differently, same content; first difference:\n${where}`);
      }
    } catch (err) {
      const all = (await Promise.all(peers.map((p) => (p.driver as typeof driver).html(p.page)))).map(spacesAsSpaces);
      let at = 0;
      while (at < all[0]!.length && all.every((h) => h[at] === all[0]![at])) at++;
      const around = all.map((h, k) => `${names[k]}: …${h.slice(Math.max(0, at - 150), at + 150)}…`).join('\n');
      // Where the difference lives: in the shared documents (a write went missing) or only in one editor's DOM
      // (a patch went missing). Reads the session's Y.Doc through the demo's `window.coedit` (not public API).
      const ys = await Promise.all(peers.map((p) => p.page.evaluate(() => JSON.stringify((window.coedit as any)?.session?.doc?.getText('text').toDelta())))).catch(() => []);
      const ydiff = ys.length && ys.every((y) => y === ys[0]) ? 'shared documents identical: an editor DOM is stale or was not written' : 'shared documents differ';
      (err as Error).message = `editors differ from character ${at} (${ydiff}):\n${around}\nlast operations:\n${log.slice(-30).join('\n')}`;
      throw err;
    }
    const text = await driver.text(peers[0]!.page);
    // Words are found by their shape, not between spaces: a space next to a concurrent insertion may be
    // re-balanced away by the browser (contenteditable turns runs of spaces into nbsp/space pairs), gluing two
    // words; the characters of every word must still all be there, once.
    const counts = new Map<string, number>();
    for (const m of text.matchAll(new RegExp(WORD.source, 'g'))) counts.set(m[0], (counts.get(m[0]) ?? 0) + 1);
    // A word an undo put back inside another word that was being typed (see the explanation "split by a peer's
    // undo"), then deleted together with that word's pieces: the deletion holds them around it ("bob63q  bann62qob65q": Ann's undo put "ann62q"
    // back after Bob's "b"). Without the restored word the deleted text shows the split word whole.
    const wordsIn = (str: string) => [...str.matchAll(new RegExp(WORD.source, 'g'))].map((m) => m[0]);
    const putBack = new Set(restores.flatMap((r) => r.words));
    for (const d of deletions) {
      const whole = wordsIn(d.removed);
      for (const w of whole.filter((x) => putBack.has(x))) for (const split of wordsIn(d.removed.replace(w, ''))) if (!whole.includes(split)) deleted.add(split);
    }
    const gone = [...typed].filter((w) => !deleted.has(w) && !counts.has(w));
    // What undos removed, per author: each client's characters an undo removed (recordUndoRemovals; several
    // pages may record one item, split differently), as runs of consecutive clocks.
    const clients = await Promise.all(peers.map((p) => p.page.evaluate(() => (window.coedit as any).session.doc.clientID as number)));
    type UndoRecord = {
      types: string[];
      removed: Array<{ client: number; clock: number; str: string; own: boolean; within: string[]; at: number }>;
      restored: Array<{ client: number; from: number; to: number }>;
    };
    const records = await Promise.all(peers.map((p) => p.page.evaluate(() => (window as any).__undo as UndoRecord)));
    const undoneTypes = new Set(records.flatMap((r) => r.types));
    const undoItems = records.flatMap((r) => r.removed).filter((it) => it.own || it.within.some((id) => undoneTypes.has(id)));
    const undoRuns = new Map(
      names.map((name, k) => {
        const chars = new Map<number, { c: string; at: number }>();
        for (const it of undoItems) if (it.client === clients[k]) [...it.str].forEach((c, i) => chars.set(it.clock + i, { c, at: it.at }));
        // Each run with when it was removed (the earliest of its records; page and Node clocks are the same).
        const runs: Array<{ text: string; at: number }> = [];
        let last = -2;
        for (const clock of [...chars.keys()].sort((a, b) => a - b)) {
          const { c, at } = chars.get(clock)!;
          const run = runs[runs.length - 1];
          if (clock === last + 1 && run) {
            run.text += c;
            run.at = Math.min(run.at, at);
          } else runs.push({ text: c, at });
          last = clock;
        }
        return [name, runs] as const;
      }),
    );
    const firstLettersOf = (piece: string, w: string): boolean => {
      let k = 0;
      while (k < piece.length && k < w.length && piece[k] === w[k]) k++;
      // Diverging inside the author's name (no digit in the word up to there), the piece is no other word of theirs.
      return k > 0 && k < w.length && (k === piece.length || !/\d/.test(piece[k]!) || !/\d/.test(w.slice(0, k + 1)));
    };
    /** `word` was deleted before `at` (ms, Node's clock) and no undo put it back after that deletion. */
    const goneBefore = (word: string, at: number): boolean => {
      const deletedAt = deletions.filter((d) => d.end < at && wordsIn(d.removed).includes(word)).map((d) => d.end);
      const restoredAt = restores.filter((r) => r.at < at && r.words.includes(word)).map((r) => r.at);
      return deletedAt.length > 0 && Math.max(...deletedAt) > Math.max(-Infinity, ...restoredAt);
    };
    /** The pieces of a deleted text that are not whole typed words: split at whitespace and at each whole word. */
    const piecesOf = (removed: string): string[] => removed.split(/\s+/).flatMap((x) => x.split(WORD));
    // Words whose letters lie around text an undo put back, read from the converged document (every page's undos).
    const restoredInside = new Set(
      await rt<string[]>(
        peers[0]!.page,
        `${OPS_JS}\nreturn splitByRestore(${JSON.stringify(
          [...typed].filter((w) => !deleted.has(w) && !counts.has(w) && typing.has(w)).map((w) => ({ word: w, client: clients[names.indexOf(typing.get(w)!.author)] })),
        )}, ${JSON.stringify(records.flatMap((r) => r.restored))});`,
      ),
    );
    // Each page's own writes (recordWrites) and, for each word not found whole, what became of its letters.
    const writes = await Promise.all(peers.map((p) => p.page.evaluate(() => (window as unknown as { __writes: Writes }).__writes)));
    const authorOf = (w: string) => names.indexOf(typing.get(w)?.author ?? '');
    /** The clocks the letters of `w` took when its author typed it, from that page's record; null when not found. */
    const letterClocks = (w: string): number[] | null => {
      const own = writes[authorOf(w)]?.typed.filter((x) => x.op === 'type').sort((a, b) => a.clock - b.clock) ?? [];
      const chars: string[] = [];
      const clocks: number[] = [];
      for (const x of own) [...x.str].forEach((c, i) => (chars.push(c), clocks.push(x.clock + i)));
      const at = chars.join('').lastIndexOf(w);
      return at < 0 ? null : clocks.slice(at, at + w.length);
    };
    const traced = gone.map((w) => ({ w, clocks: letterClocks(w) })).filter((x): x is { w: string; clocks: number[] } => x.clocks !== null);
    const letters = new Map<string, LetterFacts & { client: number; clocks: number[] }>();
    if (traced.length > 0) {
      const asked = traced.map((x) => ({ client: clients[authorOf(x.w)]!, clocks: x.clocks }));
      const found = await rt<LetterFacts[]>(peers[0]!.page, `${OPS_JS}\nreturn lettersOf(${JSON.stringify(asked)});`);
      traced.forEach((x, k) => letters.set(x.w, { ...found[k]!, ...asked[k]! }));
    }
    const holds = (r: { client: number; clock: number; len: number }, client: number, clock: number) => r.client === client && clock >= r.clock && clock < r.clock + r.len;
    const deletedByUser = (client: number, clock: number) => writes.some((wr) => wr.deleted.some((d) => USER_DELETIONS.has(d.op) && holds(d, client, clock)));
    const writtenByCommand = (i: { client: number; clock: number; len: number }) =>
      writes.some((wr) => wr.client === i.client && wr.typed.some((t) => (t.op === 'block' || t.op === 'format') && t.clock < i.clock + i.len && i.clock < t.clock + t.str.length));
    /**
     * The ways a word can be gone with no character lost to Wave, tried in order: a word counts under the first that
     * explains it, and is missing when none does.
     */
    const explanations: Array<{ what: string; explains: (w: string) => boolean }> = [
      {
        // Read from Yjs, not from timing: every letter went into the document right after the letter before it (the
        // typist's caret stayed with the word), each letter not in the text was removed by a user's deletion, and
        // nothing an editor command wrote (formatting, a block change) lies between its letters. What split it is a
        // peer's insertion at the same place: a deletion carries the carets inside it to one place, and Yjs orders
        // insertions made concurrently after one character by client (yjs src/structs/Item.js, `integrate`), so a
        // peer's text can land between the letters of a word typed there.
        what: "split or cut by peers' edits, every letter typed right after the one before it",
        explains: (w) => {
          const f = letters.get(w);
          return (
            f !== undefined &&
            f.chained &&
            f.present.every((here, k) => here || deletedByUser(f.client, f.clocks[k]!)) &&
            !f.inside.some(writtenByCommand)
          );
        },
      },
      {
        // A word an undo removed (or removed the node it was being typed into): whole, or its first letters while it
        // was being typed (an undo sees, and removes, only the letters that reached it). One letter is enough: a
        // key held while its line went never reached the document, so a peer's undo may take only the first letter.
        what: 'removed by an undo',
        explains: (w) => {
          const author = names.find((n) => w.startsWith(n.toLowerCase()));
          const t = typing.get(w);
          const whileTyped = (at: number) => t !== undefined && at >= t.start && at <= t.end + 2_000;
          return (undoRuns.get(author ?? '') ?? []).some(
            (run) => run.text.includes(w) || (whileTyped(run.at) && run.text.split(/\s+/).some((f) => f.length >= 1 && w.startsWith(f))),
          );
        },
      },
      {
        // A word deleted while it was being typed: a deletion made after its typing began removed a piece of it that
        // is not a whole word (the deleter saw, and removed, its first letters; the rest arrived afterwards). The
        // deleter may see the piece up to a network delay after the typing ended. The piece may be glued to the
        // text after it ("annob0q": Ann's first letters typed right before Bob's "ob0q"): its first letters are the
        // word's, and then comes a letter where the word goes on with a digit (not another word of the same
        // author's, "ann5"). Where the word goes on with a letter, inside its author's name, the piece is no other
        // word of that author's (each spells the whole name), and any text may follow, digits too ("ci56q": Cid's
        // "ci" typed right before "56q", what an earlier deletion had left of Ann's "ann56q"). Glued so, the piece
        // can spell a word ("ann1q": Ann's "ann1", typed right before the "q" of a word Bob was typing there,
        // deleted as a word by Cid); it is that piece, not the word, when the word it spells was already gone
        // (deleted before, and not put back since).
        what: 'deleted while being typed',
        explains: (w) => {
          const typed = typing.get(w);
          if (!typed) return false;
          return deletions.some(
            (d) =>
              d.end >= typed.start &&
              d.start <= typed.end + 2_000 &&
              (piecesOf(d.removed).some((f) => f !== '' && f !== w && firstLettersOf(f, w)) ||
                wordsIn(d.removed).some((f) => f !== w && firstLettersOf(f, w) && goneBefore(f, d.start))),
          );
        },
      },
      {
        // Text an undo put back inside it, however much later (see `splitByRestore`): its letters are all kept,
        // around what the undo restored and what was typed there since.
        what: "split by a peer's undo",
        explains: (w) => restoredInside.has(w),
      },
      {
        // A word whose first letters went with the block they were typed into, removed whole by a peer's undo at that
        // moment (a key held while the block went: its character never reached the document, so no undo record
        // names it); the rest of the word was typed where the editor then put the caret. Its tail is in the text.
        // The undo may have been made up to a network delay before the typing began. Or its tail was then deleted
        // as a word of its own.
        what: "first letters went with a block a peer's undo removed",
        explains: (w) => {
          const t = typing.get(w);
          if (!t) return false;
          const during = undos.some((u) => u.author !== t.author && u.end >= t.start - 1_000 && u.start <= t.end);
          const tails = [...Array(w.length - 2).keys()].map((k) => w.slice(k + 1));
          const tail = tails.find((rest) => new RegExp(`(^|[^a-z0-9])${rest}`).test(text));
          const tailDeleted = deletions.some((d) => d.end >= t.start && piecesOf(d.removed).some((f) => tails.includes(f)));
          // Or its author's own undo then removed the tail, a word of its own by then.
          const tailUndone = (undoRuns.get(t.author) ?? []).some((run) => run.text.split(/\s+/).some((f) => tails.includes(f)));
          return during && (tail !== undefined || tailDeleted || tailUndone);
        },
      },
      {
        // The same undo behaviour, the pieces then deleted: a peer deleted the text right after the place where the
        // word was being typed, so the word's next letters went after the deleted characters (a `Y.Text` insert skips
        // the deleted items to its right: yjs src/types/YText.js, `minimizeAttributeChanges`), and that peer's undo
        // put the text back before them (`redoItem`), between the word's first letters and the rest
        // (packages/client/test/undo.test.ts). Later word deletions removed the pieces as words of their own.
        // The undo may come any time after the typing began: the deleted characters stay between the parts of the
        // word. Every letter went by a user's deletion: explained when an undo put words back after the word's
        // typing began and the word is exactly two or more pieces that deletions made after that undo removed.
        what: "split by a peer's undo, the pieces deleted later",
        explains: (w) => {
          const t = typing.get(w);
          if (!t) return false;
          const undoAt = restores.filter((r) => r.at >= t.start).map((r) => r.at);
          if (undoAt.length === 0) return false;
          const later = new Set(deletions.filter((d) => d.end >= Math.min(...undoAt)).flatMap((d) => piecesOf(d.removed)));
          // Two pieces or more: each letter typed right before deleted text went after it, so an undo that puts back
          // several deleted runs, each before its original, can split the word in several places ("a" | "n" |
          // "n75q" around three restored words).
          const split = [true];
          for (let k = 1; k <= w.length; k++) split[k] = [...Array(k).keys()].some((j) => split[j]! && (j > 0 || k < w.length) && later.has(w.slice(j, k)));
          return split[w.length]!;
        },
      },
    ];
    const explained = new Map<string, string[]>(explanations.map((e) => [e.what, []]));
    const missing: string[] = [];
    for (const w of gone) {
      const rule = explanations.find((e) => e.explains(w));
      if (rule) explained.get(rule.what)!.push(w);
      else missing.push(w);
    }
    for (const [what, words] of explained) if (words.length > 0) console.log(`${label}: ${what} (not counted): ${words.join(' ')}`);
    // Removed words can come back more than once: two users who both deleted a word and both undid that get a
    // copy each (Yjs restores deleted content as new items). A word nobody removed is never doubled.
    const doubled = [...typed].filter((w) => !deleted.has(w) && (counts.get(w) ?? 0) > 1);
    if (missing.length + doubled.length > 0) {
      mkdirSync(SHOTS_DIR, { recursive: true });
      // What each page recorded of undos (recordUndoRemovals), and the fuzz's operation log.
      // The text's items around each missing word, read in the first page (all pages hold the same document).
      const items = await Promise.all(
        missing.map(async (w) => ({ word: w, items: typing.has(w) ? await rt(peers[0]!.page, `${OPS_JS}\nreturn itemsAround(${JSON.stringify(w)}, ${clients[names.indexOf(typing.get(w)!.author)]});`) : [] })),
      );
      writeFileSync(join(SHOTS_DIR, `undo-${label}.json`), JSON.stringify({ clients, records, log, items }));
    }
    result = { seed, missing, doubled, text, log };
    // The fuzzer built a real document, not an empty one.
    const survivors = [...typed].filter((w) => counts.has(w)).length;
    console.log(`${label}: ${survivors} words, ${html.length} B of HTML, ${deleted.size} words deleted, ${missing.length} words broken`);
    // Deletions across paragraphs take many words at once: a sixth of the operations' words is still a real document.
    assert.ok(survivors >= OPS / 6, `a non-trivial document: ${survivors} words survived`);
    assert.match(html, /<(strong|em|a |s>|u>|span style)/, 'formatting survived');
  });
  return result!;
}

/** Word checks reported as todos (with what is known) instead of failing, by editor: none known. */
const MISSING_OPEN: Record<string, string> = {};
const DOUBLED_OPEN: Record<string, string> = {};

/** The checks after a run (convergence is checked in the run): no word missing, none doubled; todos where listed above. */
async function assertWords(t: TestContext, driver: RichTextDriver, result: Integrity): Promise<void> {
  await t.test('every word typed and not deleted is there, intact', { todo: MISSING_OPEN[driver.name] ?? false }, () => assertNoneMissing(result));
  await t.test('no word that nobody removed is there twice', { todo: DOUBLED_OPEN[driver.name] ?? false }, () => assertNoneDoubled(result));
}

const freshSkip = freshSeedsSkip('richtext-fuzz.test.ts');
for (const driver of RICH_TEXT_DRIVERS) {
  describe(`randomized convergence over ${driver.name}`, () => {
    it(`${driver.name}: 3 contexts × ${OPS} random operations from a fresh seed: identical HTML, then the word checks`, { skip: freshSkip, timeout: TIMEOUT_MS }, async (t) => {
      const label = `${driver.name}-fuzz`;
      await assertWords(t, driver, await fuzzRun(driver, label, testSeed(label)));
    });
    for (const [rank, named] of (NAMED_SEEDS[driver.name] ?? []).entries()) {
      const skip = laterSeedSkip('richtext-fuzz.test.ts', rank);
      it(`${driver.name}: 3 contexts × ${OPS} random operations from seed ${named.name} (${named.seed}): identical HTML, then the word checks`, { skip, timeout: TIMEOUT_MS }, async (t) => {
        const label = `${driver.name}-fuzz-${named.name}`;
        console.log(`${label}: seed=${named.seed} (WAVE_E2E_SEED=${named.seed} replays it as a fresh seed)`);
        await assertWords(t, driver, await fuzzRun(driver, label, named.seed));
      });
    }
  });
}
