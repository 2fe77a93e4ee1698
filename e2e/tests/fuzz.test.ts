// Randomized convergence with real editors (STYLE.md §5): per editor, 3 browser contexts each run FUZZ_OPS random
// operations at the same time — typing at random places (key by key, or a chunk as one input event), deleting ranges,
// pasting up to 1 KB (HTML for Quill), formatting (Quill), undo and redo — through the real keys and clipboard paths,
// against the real server. At the end every editor holds identical content (Quill: an identical Delta), the document
// is not trivial, and every word that was typed or pasted and not removed by someone is there, exactly once.
//
// The seed is printed; `WAVE_E2E_SEED=<seed>` replays the same choices (timing still varies: the pages run
// concurrently). `WAVE_FUZZ_OPS` sets the operations per user (default 300). A failure prints the seed, each user's
// last operations and what was recorded about the missing word. A seed worth keeping becomes a case of
// REGRESSION_SEEDS, named by what it exercises. `npm test` (CI) replays the first named seed of each editor;
// `npm run test:long` and WAVE_FUZZ=1 replay them all and draw a fresh seed per editor (suite.ts, FRESH_FUZZ_SEEDS
// and laterSeedSkip).
//
// Words are unique random strings ("B" + serial + 4 random letters), so that what is left of two words after a
// deletion never spells a third, and a word counts as present wherever its letters are, even run together with a
// neighbour. "Removed by someone" is recorded in each page at the moment it happens: the text its own user removes —
// deletions, typing or pasting over a selection (the editor's own change events) and undo/redo (the text before and
// after the key) — as the whitespace-separated tokens touched, including the tokens right next to the removed range.
// A token is split into words where a capital letter starts one and at anything not a letter (a chunk typed key by key
// runs into the next word, or into the host text's final ".", until its closing space is typed; every word, the host
// text's included, starts with a capital). A word counts as removed when a piece is the word, contains it, starts with
// its first four letters (they identify it: a damaged copy), or is a prefix of it recorded while the word was being
// typed (a peer deleted it half-typed; the prefix may run into a lower-case remnant that followed the caret, or into
// what was left of another word whose head had been deleted).
//
// One exception, Yjs's own: its undo puts deleted text back next to the deleted text's *current* left neighbour
// (yjs src/structs/Item.js, `redoItem`), so a peer's undo restoring text exactly where someone is typing a word puts
// that text inside the word (all its letters are kept). Such a word counts as "split by a peer's undo/redo", printed
// apart, when the final text holds its letters around text some undo/redo put back (all of the gap, or a word-sized
// piece of it put back while the word was typed: a peer's typing may arrive in the same update), or when text some
// undo/redo put back arrived at its author's caret, right after a letter, while the word was being typed, or landed
// inside the whole word on some page then or just after (REGRESSION_SEEDS `undo-inside-joined-word`: a peer deletes
// the spaces before a word being typed, her undo puts them back inside it, and a third user deletes the pieces).
// Anything else missing fails, with each page's Y-level removals, reconnects and its author's key/delta/selection
// trace and where the word's first letters are in the final text.
//
// Bisecting a failure: WAVE_FUZZ_ONLY=delete,paste,format,undo limits the operations (the others become typing);
// WAVE_FUZZ_CHECK_SYNC=1 checks before every operation that each editor shows exactly its session's Y.Text.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { withScene, type Peer } from '../lib/browser.ts';
import { codemirrorContract, quillContract, textareaContract, type ContractDriver } from '../lib/drivers.ts';
import type { WaveServer } from '../lib/server.ts';
import { freshDocId, seededRandom, testSeed, waitUntil } from '../lib/util.ts';
import { freshSeedsSkip, laterSeedSkip, serverAndBrowser } from '../lib/suite.ts';
import { splitAround } from '../lib/words.ts';
import '../lib/page-globals.ts';

/**
 * Operations per user (300 by default). 3 × 300 take 1–2 minutes per editor on a two-core machine (Chromium, three
 * pages and the server share it).
 */
const FUZZ_OPS = Number(process.env.WAVE_FUZZ_OPS ?? 300);
const USERS = ['Ann', 'Bob', 'Cid'] as const;
/** Generous (see FUZZ_OPS); the bound only stops a hung run. */
const TEST_TIMEOUT_MS = FUZZ_OPS * 2_000;
const CONVERGE_MS = 30_000;
/** A word's first letters (user letter + 3-letter serial) identify it: a piece starting with them is that word. */
const ID_LENGTH = 4;
/** A peer sees a half-typed word at most this long after its author finished typing it (loopback round trips). */
const PARTIAL_WORD_SLACK_MS = 3_000;
/** A peer's text arriving this long after a word was typed may still have split it (it was sent while it was typed). */
const RESTORE_SLACK_MS = 1_000;
/** For bisecting a failure: only these operations (comma-separated: delete, paste, format, undo), plus typing. */
const ONLY = process.env.WAVE_FUZZ_ONLY?.split(',');
/** For debugging: before each operation, check that the editor shows exactly its session's Y.Text (white box). */
const CHECK_SYNC = Boolean(process.env.WAVE_FUZZ_CHECK_SYNC);
/** Share of typing done key by key; the rest arrives as one input event per chunk. */
const KEY_BY_KEY = 0.35;
/** Pinned seeds, replayed by name (`driver:seed`), each named by the case it exercises. */
const REGRESSION_SEEDS: ReadonlyArray<{ name: string; driver: string; seed: number }> = [
  // A peer's undo restores text inside a word being typed (Yjs redoItem): the word is split, not lost.
  { name: 'undo-splits-typed-word', driver: 'textarea', seed: 1731928388 },
  // A peer deletes the spaces before a word being typed; her undo puts them back inside it (Yjs redoItem), and a
  // third user deletes the pieces: restored text landing inside a word splits it, it is not a lost word.
  { name: 'undo-inside-joined-word', driver: 'codemirror', seed: 1301741232 },
  // A half-typed "Ca" run into the remnant "e." is deleted by a peer: recorded as the removed piece "Cae".
  { name: 'half-typed-remnant', driver: 'codemirror', seed: 3922094342 },
  // A peer's redo restores text inside a word being typed (Quill).
  { name: 'redo-splits-typed-word', driver: 'quill', seed: 4192334313 },
];

type Kind = 'textarea' | 'codemirror' | 'quill';
interface FuzzEditor {
  kind: Kind;
  driver: ContractDriver;
  /** Quill: inline and line formats. */
  formats: boolean;
}
const EDITORS: readonly FuzzEditor[] = [
  { kind: 'textarea', driver: textareaContract, formats: false },
  { kind: 'codemirror', driver: codemirrorContract, formats: false },
  { kind: 'quill', driver: quillContract, formats: true },
];

let server: WaveServer;
let browser: Browser;

serverAndBrowser((s, b) => {
  server = s;
  browser = b;
});

/** What each page records (see the header), read back at the end. */
interface Removal {
  tokens: string[];
  at: number;
  why: string;
  who?: string;
}

/**
 * Installs the in-page helpers: `__fuzz.text()`, `__fuzz.select(a, b)`, `__fuzz.pick(r)` (a random boundary: the
 * start, or right after whitespace) and the removal recorder. Insertions go only there, never right after a letter:
 * the end of a word a peer is still typing looks like a boundary, and an insertion there, concurrent with the peer's
 * next key, may land inside the finished word (both are inserted at the same place; Yjs orders them by client).
 */
async function installRecorder(page: Page, kind: Kind): Promise<void> {
  // Plain JavaScript source, evaluated as is: functions compiled by tsx would call its `__name` helper in the page.
  await page.evaluate(`(${RECORDER})(${JSON.stringify(kind)})`);
}

const RECORDER = String.raw`(kind) => {
    const w = window;
    const el = document.getElementById('editor');
    const text = () =>
      kind === 'textarea' ? el.value : kind === 'codemirror' ? w.cm.getValue() : w.quill.getText().replace(/\n$/, '');
    const select = (a, b) => {
      if (kind === 'textarea') {
        el.focus();
        el.setSelectionRange(a, b);
      } else if (kind === 'codemirror') {
        w.cm.focus();
        w.cm.setSelection(w.cm.posFromIndex(a), w.cm.posFromIndex(b));
      } else {
        w.quill.focus();
        w.quill.setSelection(a, b - a, 'user');
      }
    };
    const removed = [];
    const seen = [];
    /** Tokens of \`t\` that overlap [a, b) or touch it. */
    const touched = (t, a, b) => {
      const out = [];
      for (const m of t.matchAll(/\S+/g)) {
        const start = m.index;
        const end = start + m[0].length;
        if (end >= a && start <= b) out.push(m[0]);
      }
      return out;
    };
    const record = (tokens, why) => {
      if (tokens.length > 0) removed.push({ tokens, at: Date.now(), why });
    };

    if (kind === 'textarea') {
      el.addEventListener('beforeinput', (e) => {
        const ev = e;
        if (ev.inputType.startsWith('history')) return;
        let a = el.selectionStart;
        let b = el.selectionEnd;
        if (a === b && ev.inputType === 'deleteContentBackward') a = Math.max(0, a - 1);
        else if (a === b && ev.inputType === 'deleteContentForward') b = Math.min(el.value.length, b + 1);
        if (b > a) record(touched(el.value, a, b), ev.inputType);
      }, true);
      // Remote edits and undo reach the textarea through setRangeText (the adapter's only write): seen, for failures.
      const setRangeText = el.setRangeText;
      el.setRangeText = function (...args) {
        if (args.length >= 3 && args[2] > args[1]) seen.push({ tokens: touched(el.value, args[1], args[2]), at: Date.now(), why: 'setRangeText' });
        return setRangeText.apply(this, args);
      };
    } else if (kind === 'codemirror') {
      w.cm.on('beforeChange', (cm, change) => {
        const a = cm.indexFromPos(change.from);
        const b = cm.indexFromPos(change.to);
        if (b <= a) return;
        // Remote edits and undo arrive with the binding's origin: seen, for failure messages only.
        if (change.origin === 'wave' || change.origin === 'setValue') seen.push({ tokens: touched(cm.getValue(), a, b), at: Date.now(), why: change.origin });
        else record(touched(cm.getValue(), a, b), change.origin);
      });
    } else {
      w.quill.on('text-change', (delta, old, source) => {
        // Remote edits and undo arrive with the binding as source: kept apart, for failure messages only.
        const why = source === 'user' ? 'quill' : 'remote';
        const before = old.ops.map((op) => (typeof op.insert === 'string' ? op.insert : '\uFFFC')).join('');
        let index = 0;
        for (const op of delta.ops) {
          if (op.retain !== undefined) index += typeof op.retain === 'number' ? op.retain : 1;
          else if (op.delete !== undefined) {
            if (why === 'quill') record(touched(before, index, index + op.delete), why);
            else seen.push({ tokens: touched(before, index, index + op.delete), at: Date.now(), why });
            index += op.delete;
          }
        }
      });
    }
    // Undo and redo: the text just before the key and just after the editor handled it (the undo runs inside the
    // key handler); what disappeared in between was removed by this user.
    const isHistoryKey = (e) => (e.ctrlKey || e.metaKey) && /^[zy]$/i.test(e.key);
    let pending = null;
    const settle = () => {
      if (pending === null) return;
      const beforeTokens = pending.match(/\S+/g) ?? [];
      pending = null;
      const left = new Map();
      for (const t of text().match(/\S+/g) ?? []) left.set(t, (left.get(t) ?? 0) + 1);
      const gone = [];
      for (const t of beforeTokens) {
        const n = left.get(t) ?? 0;
        if (n > 0) left.set(t, n - 1);
        else gone.push(t);
      }
      record(gone, 'history');
    };
    window.addEventListener('keydown', (e) => {
      if (!isHistoryKey(e)) return;
      pending = text();
      setTimeout(settle, 0); // in case an editor stops the event before it bubbles up here
    }, true);
    window.addEventListener('keydown', (e) => {
      if (isHistoryKey(e)) settle();
    });

    // White box, for failure messages only: every removal from the shared Y.Text as this page's Yjs applied it,
    // with who caused it ('local': this page's editor, 'undo': this page's undo manager, 'remote': a peer).
    const ydoc = w.coedit.session.doc;
    const ytext = ydoc.getText('text');
    const yRemoved = [];
    const caret = () => {
      if (kind === 'textarea') return el.selectionStart === el.selectionEnd ? el.selectionStart : null;
      if (kind === 'codemirror') return w.cm.somethingSelected() ? null : w.cm.indexFromPos(w.cm.getCursor());
      const r = w.quill.getSelection();
      return r && r.length === 0 ? r.index : null;
    };
    /** Peers' insertions that landed at this page's caret (\`caret()\`: a collapsed selection) right after a letter. */
    const atCaret = [];
    /** Text this page's undo/redo put back (Yjs restores deleted text as new items, placed next to its old left neighbour). */
    const restored = [];
    /** Peers' insertions that landed between two non-space characters: the token they split, as it was just before, and where. */
    const inside = [];
    /** The last 20,000 Y events (delta; textarea: selection after) and textarea keys (selection before), for failure messages. */
    const trace = [];
    let before = ytext.toString();
    ytext.observe((event, tr) => {
      const origin = !tr.local ? 'remote' : tr.origin === w.coedit.session.undo.manager ? 'undo' : 'local';
      if (!tr.local) {
        // Positions in the text before the change, where each insertion lands.
        let old = 0;
        for (const op of event.delta) {
          if (op.retain !== undefined) old += op.retain;
          else if (op.delete !== undefined) old += op.delete;
          else if (typeof op.insert === 'string' && /\S/.test(before[old - 1] ?? ' ') && /\S/.test(before[old] ?? ' ')) {
            let s = old, e = old;
            while (s > 0 && /\S/.test(before[s - 1])) s--;
            while (e < before.length && /\S/.test(before[e])) e++;
            inside.push({ text: op.insert, token: before.slice(s, e), offset: old - s, at: Date.now() });
          }
        }
      }
      // Positions in the text before the change: retains and deletions advance through it, insertions do not.
      let at = 0;
      for (const op of event.delta) {
        if (op.retain !== undefined) at += op.retain;
        else if (op.delete !== undefined) {
          yRemoved.push({ tokens: touched(before, at, at + op.delete), at: Date.now(), why: 'Y ' + origin });
          at += op.delete;
        }
      }
      if (origin === 'undo') {
        for (const op of event.delta) if (typeof op.insert === 'string') restored.push({ text: op.insert, at: Date.now() });
      }
      before = ytext.toString();
      // A peer's text that landed right at this page's caret, just after a letter: inside the word being typed here.
      const c = caret();
      if (!tr.local && c !== null) {
        let at = 0;
        for (const op of event.delta) {
          if (op.retain !== undefined) at += op.retain;
          else if (typeof op.insert === 'string') {
            if ((c === at || c === at + op.insert.length) && /[A-Za-z]/.test(before[at - 1] ?? '')) atCaret.push({ text: op.insert, at: Date.now() });
            at += op.insert.length;
          }
        }
      }
      const sel = kind === 'textarea' ? [el.selectionStart, el.selectionEnd] : null;
      trace.push({ at: Date.now(), origin, sel, delta: event.delta.map((op) => (op.insert !== undefined ? { i: typeof op.insert === 'string' ? op.insert : '*' } : op)) });
      if (trace.length > 20000) trace.shift();
    });
    if (kind === 'textarea') {
      el.addEventListener('keydown', (e) => trace.push({ at: Date.now(), key: e.key, sel: [el.selectionStart, el.selectionEnd] }), true);
    }

    w.__fuzz = {
      text,
      seen,
      yRemoved,
      trace,
      restored,
      atCaret,
      inside,
      inSync() {
        const y = w.coedit.session.doc.getText('text').toString().replace(/\n$/, '');
        const t = text();
        if (y === t) return null;
        let i = 0;
        while (i < y.length && y[i] === t[i]) i++;
        return 'at ' + i + ': Y ' + JSON.stringify(y.slice(Math.max(0, i - 30), i + 30)) + ' editor ' + JSON.stringify(t.slice(Math.max(0, i - 30), i + 30));
      },
      select,
      removed,
      /** A boundary chosen by \`r\` in [0, 1): selects it and returns it. */
      pick(r) {
        const t = text();
        const spots = [];
        for (let i = 0; i <= t.length; i++) if (i === 0 || /\s/.test(t[i - 1])) spots.push(i);
        const at = spots[Math.floor(r * spots.length)];
        select(at, at);
        return at;
      },
      /** Selects a range of 1–\`max\` characters chosen by \`r1\`, \`r2\`; returns it. */
      range(r1, r2, max) {
        const t = text();
        if (t.length === 0) return [0, 0];
        const a = Math.floor(r1 * t.length);
        const b = Math.min(t.length, a + 1 + Math.floor(r2 * max));
        select(a, b);
        return [a, b];
      },
      /** Dispatches a paste as the clipboard would (CodeMirror and Quill read the event's clipboardData). */
      paste(plain, html) {
        const data = new DataTransfer();
        data.setData('text/plain', plain);
        if (html !== null) data.setData('text/html', html);
        const target = kind === 'codemirror' ? w.cm.getInputField() : w.quill.root;
        target.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
      },
    };
}`;

interface UserRun {
  /** Every word this user typed or pasted, with when it was being typed. */
  words: Array<{ word: string; from: number; to: number }>;
  log: string[];
  counts: Record<string, number>;
}

/** One user's random operations, in sequence. */
async function runUser(peer: Peer, editor: FuzzEditor, rand: () => number, letter: string): Promise<UserRun> {
  const run: UserRun = { words: [], log: [], counts: {} };
  const page = peer.page;
  let serial = 0;
  const letters = (n: number, width: number) => Array.from({ length: width }, (_, i) => String.fromCharCode(97 + (Math.floor(n / 26 ** (width - 1 - i)) % 26))).join('');
  // Unique (the serial) and unguessable (4 random letters): what is left of two words after a deletion never spells
  // a third, as it would with plain numbered words ("b0096" cut to "b009", followed by "5…", reads "b0095").
  const word = () => `${letter}${letters(serial++, 3)}${letters(Math.floor(rand() * 26 ** 4), 4)}`;
  const note = (op: string) => {
    run.counts[op.split(' ')[0]!] = (run.counts[op.split(' ')[0]!] ?? 0) + 1;
    run.log.push(op);
  };
  const typing = async () => {
    // A few words at a random boundary; each chunk starts and ends with whitespace, so it never splits a word.
    const words = Array.from({ length: 1 + Math.floor(rand() * 3) }, word);
    // Key by key (a keydown, input and keyup per character: many small concurrent updates; line breaks with Enter),
    // or the whole chunk as one input event, as an IME commit or autocorrect gives it (~20× faster here, which buys
    // the operation count; such input never carries a line break).
    const byKey = rand() < KEY_BY_KEY;
    const sep = byKey && rand() < 0.2 ? '\n' : ' ';
    const chunk = ` ${words.join(sep)} `;
    const from = Date.now();
    const at = await page.evaluate((x) => (window as any).__fuzz.pick(x), rand());
    if (byKey) await page.keyboard.type(chunk);
    else await page.keyboard.insertText(chunk);
    for (const w of words) run.words.push({ word: w, from, to: Date.now() });
    // For failure messages: a word not in this editor right after it was typed was removed or split by a peer meanwhile.
    const absent = await page.evaluate((ws) => ws.filter((w) => !(window as any).__fuzz.text().includes(w)), words);
    note(`${byKey ? 'type' : 'input'} ${JSON.stringify(chunk)} @${at}${absent.length ? ` (not in the editor right after: ${absent.join(' ')})` : ''}`);
  };
  const deleting = async () => {
    const [a, b] = await page.evaluate(([x, y]) => (window as any).__fuzz.range(x, y, 24), [rand(), rand()]);
    const key = rand() < 0.7 ? 'Backspace' : 'Delete';
    await page.keyboard.press(key);
    note(`delete ${key} [${a},${b})`);
  };
  const pasting = async () => {
    // Up to 1 KB (mostly short), at a boundary or over a selection; HTML with inline formats for Quill.
    const words: string[] = [];
    const budget = 8 + Math.floor(rand() ** 2 * 1000);
    for (let len = 0; len < budget; ) {
      const w = word();
      words.push(w);
      len += w.length + 1;
    }
    const plain = ` ${words.join(' ')} `;
    const tags = ['b', 'i', 'u', 's', 'em'] as const;
    const tagged = (w: string) => {
      const tag = tags[Math.floor(rand() * tags.length)]!;
      return `<${tag}>${w}</${tag}>`;
    };
    // Quill collapses plain spaces at the edges of pasted HTML: non-breaking spaces keep the words apart.
    const html = editor.kind === 'quill' ? `&nbsp;${words.map((w) => (rand() < 0.3 ? tagged(w) : w)).join(' ')}&nbsp;` : null;
    const over = rand() < 0.3;
    const from = Date.now();
    const where = over
      ? await page.evaluate(([x, y]) => (window as any).__fuzz.range(x, y, 40), [rand(), rand()])
      : await page.evaluate((x) => (window as any).__fuzz.pick(x), rand());
    // A textarea takes no synthetic paste event: insertText is the same input the clipboard produces.
    if (editor.kind === 'textarea') await page.keyboard.insertText(plain);
    else await page.evaluate(([p, h]) => (window as any).__fuzz.paste(p, h), [plain, html] as const);
    for (const w of words) run.words.push({ word: w, from, to: Date.now() });
    note(`paste ${plain.length} chars ${over ? 'over' : '@'}${JSON.stringify(where)}`);
  };
  const formatting = async () => {
    const [a, b] = await page.evaluate(([x, y]) => (window as any).__fuzz.range(x, y, 30), [rand(), rand()]);
    if (rand() < 0.75) {
      const key = (['Control+b', 'Control+i', 'Control+u'] as const)[Math.floor(rand() * 3)]!;
      await page.keyboard.press(key);
      note(`format ${key} [${a},${b})`);
    } else {
      const value = [1, 2, false][Math.floor(rand() * 3)];
      await page.evaluate((v) => (window as any).quill.format('header', v, 'user'), value);
      note(`format header=${value} [${a},${b})`);
    }
  };
  const allowed = (op: string) => !ONLY || ONLY.includes(op);
  for (let i = 0; i < FUZZ_OPS; i++) {
    // Weights: typing 50 %, deleting 20 %, pasting 7 %, formatting 12 % (typing where there is none), undo 7 %, redo 4 %.
    // An operation left out by WAVE_FUZZ_ONLY becomes typing.
    const r = rand();
    if (CHECK_SYNC) {
      const diverged = await page.evaluate(() => (window as any).__fuzz.inSync());
      if (diverged) throw new Error(`${peer.name}: editor and Y.Text differ before op ${i} (after ${JSON.stringify(run.log.at(-1))}): ${diverged}`);
    }
    if (r < 0.5) await typing();
    else if (r < 0.7) await (allowed('delete') ? deleting() : typing());
    else if (r < 0.77) await (allowed('paste') ? pasting() : typing());
    else if (r < 0.89) await (editor.formats && allowed('format') ? formatting() : typing());
    else if (!allowed('undo')) await typing();
    else if (r < 0.96) {
      await page.keyboard.press('Control+z');
      note('undo');
    } else {
      await page.keyboard.press(rand() < 0.5 ? 'Control+Shift+z' : 'Control+y');
      note('redo');
    }
  }
  return run;
}

async function fuzz(editor: FuzzEditor, label: string, seed: number): Promise<void> {
  await withScene(browser, server, label, async (scene) => {
    const doc = freshDocId(label);
    const peers: Peer[] = [];
    for (const name of USERS) {
      peers.push(await scene.open(name, editor.driver, { doc, text: name === 'Ann' ? 'The Host Loaded This Line.' : undefined }));
    }
    await waitUntil(async () => (await Promise.all(peers.map((p) => editor.driver.text(p.page)))).every((t) => t === 'The Host Loaded This Line.'), {
      message: 'every page shows the seeded text',
    });
    for (const peer of peers) await installRecorder(peer.page, editor.kind);
    // The demo page highlights CodeMirror's text as JavaScript. The fuzz's text is words, and re-tokenizing its long
    // lines on every change roughly doubles each page's work per key (CodeMirror's own, not Wave's): plain text.
    if (editor.kind === 'codemirror') for (const peer of peers) await peer.page.evaluate(() => (window as any).cm.setOption('mode', null));

    const started = Date.now();
    let runs: UserRun[] = [];
    try {
      runs = await Promise.all(peers.map((peer, i) => runUser(peer, editor, seededRandom(seed + i), 'ABC'[i]!)));
    } catch (err) {
      (err as Error).message += `\nseed=${seed}`;
      throw err;
    }
    const opsMs = Date.now() - started;

    // Converged: every local edit is stored on the server and every page shows the same content.
    const contents = () => Promise.all(peers.map((p) => editor.driver.content(p.page)));
    let last: string[] = [];
    await waitUntil(
      async () => {
        const saved = await Promise.all(peers.map((p) => p.page.evaluate(() => window.waveLog!.status.at(-1)?.saved === true)));
        last = await contents();
        return saved.every(Boolean) && last.every((c) => c === last[0]);
      },
      { timeoutMs: CONVERGE_MS, message: () => `convergence (seed ${seed}); contents:\n${last.map((c, i) => `${USERS[i]}: ${c.slice(0, 2000)}`).join('\n')}\n${opLogs(runs)}` },
    );

    const text = await editor.driver.text(peers[0]!.page);
    const removals: Removal[] = (
      await Promise.all(peers.map(async (p) => (await p.page.evaluate(() => (window as any).__fuzz.removed as Removal[])).map((r) => ({ ...r, who: p.name }))))
    ).flat();
    const typed = runs.flatMap((r) => r.words);
    // A recorded token may hold several words run together (see the header): split it where a word starts.
    const pieces = (token: string) => token.split(/(?=[A-Z])|[^A-Za-z]+/).filter(Boolean);
    const fragments = removals.map((rm) => ({ at: rm.at, parts: rm.tokens.flatMap(pieces) }));
    const removedExact = new Set(fragments.flatMap((f) => f.parts));
    /** Every proper tail of a typed word (what is left once a peer deleted its head), with the words it ends. */
    const tails = new Map<string, string[]>();
    for (const { word: w } of typed) {
      for (let i = 1; i < w.length; i++) {
        const list = tails.get(w.slice(i));
        if (list) list.push(w);
        else tails.set(w.slice(i), [w]);
      }
    }
    const tailOfAnother = (head: string, rest: string) => (tails.get(rest) ?? []).some((w) => !w.startsWith(head));
    const isRemoved = ({ word, from, to }: { word: string; from: number; to: number }) =>
      removedExact.has(word) ||
      fragments.some((rm) =>
        rm.parts.some(
          (f) =>
            f.includes(word) ||
            f.startsWith(word.slice(0, ID_LENGTH)) ||
            (halfTyped(word, f, tailOfAnother) && rm.at >= from && rm.at <= to + PARTIAL_WORD_SLACK_MS),
        ),
      );
    // A word counts where its letters are, even run together with a neighbour: a peer who deletes the whitespace
    // next to where a word is being typed (before its letters reach that peer) joins them, and deletes no letter of it.
    const count = (word: string) => text.split(word).length - 1;
    const occurrences = new Map(typed.map((w) => [w.word, count(w.word)]));
    const kept = typed.filter((w) => !isRemoved(w));
    // Yjs's undo puts deleted text back next to its *current* left neighbour (Item.js `redoItem`: left = item.left).
    // When a peer has just typed the first letters of a word there, the restored text lands inside that word: the
    // letters are all kept, split by text someone's undo or redo put back. That is Yjs's undo, not a loss; counted
    // apart and printed.
    const restores = (await Promise.all(peers.map((p) => p.page.evaluate(() => (window as any).__fuzz.restored as Array<{ text: string; at: number }>)))).flat();
    const restored = restores.map((r) => r.text).join('\u0000');
    const fromRestore = (gap: string) => gap.length > 0 && (restored.includes(gap) || gap.split(/\s+/).filter(Boolean).every((t) => restored.includes(t)));
    // Text put back while the word was typed may reach the gap together with other text (a peer's typing arriving in
    // the same update, or typed there since): the gap then holds a whole word-sized piece of that restored text.
    const holdsRestoreOf = (w: { from: number; to: number }) => (gap: string) =>
      restores.some(
        (r) =>
          r.at >= w.from - RESTORE_SLACK_MS &&
          r.at <= w.to + PARTIAL_WORD_SLACK_MS &&
          pieces(r.text).some((piece) => piece.length >= ID_LENGTH && gap.includes(piece)),
      );
    const splitByRestore = (word: string) => {
      const w = typed.find((x) => x.word === word)!;
      return splitAround(text, word, fromRestore) || splitAround(text, word, holdsRestoreOf(w));
    };
    // A word typed key by key that was not whole in its author's editor right after, while a peer's undo or redo put
    // text back, was split that way; what is left of it may have been removed since, as pieces no longer its own.
    const atCarets = await Promise.all(peers.map((p) => p.page.evaluate(() => (window as any).__fuzz.atCaret as Array<{ text: string; at: number }>)));
    const splitWhileTyped = (word: string) => {
      const w = typed.find((x) => x.word === word)!;
      const author = 'ABC'.indexOf(word[0]!);
      return atCarets[author]!.some((r) => r.at >= w.from && r.at <= w.to + RESTORE_SLACK_MS && (restored.includes(r.text) || holdsRestoreOf(w)(r.text)));
    };
    // Text an undo or redo put back that landed inside the whole word on some page, while it was typed or just
    // after: the word was split there (all its letters may have been removed since, as pieces no longer its own).
    const insides = (await Promise.all(peers.map((p) => p.page.evaluate(() => (window as any).__fuzz.inside as Array<{ text: string; token: string; offset: number; at: number }>)))).flat();
    const splitInside = (word: string) => {
      const w = typed.find((x) => x.word === word)!;
      const within = (r: { token: string; offset: number }) =>
        [...r.token.matchAll(new RegExp(word, 'g'))].some((m) => r.offset > m.index! && r.offset < m.index! + word.length);
      // Only whitespace: it must be exactly text put back (any whitespace passes fromRestore's token test).
      const putBack = (t: string) => (/\S/.test(t) ? fromRestore(t) || holdsRestoreOf(w)(t) : restored.includes(t));
      return insides.some((r) => within(r) && r.at >= w.from && r.at <= w.to + RESTORE_SLACK_MS && putBack(r.text));
    };
    const absent = kept.filter((w) => occurrences.get(w.word) === 0).map((w) => w.word);
    const split = absent.filter((w) => splitByRestore(w) || splitWhileTyped(w) || splitInside(w));
    const missing = absent.filter((w) => !split.includes(w));
    // Removed text can come back more than once: two users who both deleted it and both undid that get a copy
    // each (Yjs restores deleted content as new items). Text nobody removed is never duplicated.
    const doubled = kept.filter((w) => (occurrences.get(w.word) ?? 0) > 1).map((w) => w.word);
    const present = typed.filter((w) => occurrences.get(w.word)! > 0).length;
    const counts = runs.map((r, i) => `${USERS[i]} ${JSON.stringify(r.counts)}`).join('; ');
    console.log(
      `${label}: seed=${seed} ${FUZZ_OPS} ops × ${USERS.length} users in ${opsMs} ms; ${text.length} chars; ` +
        `${typed.length} words typed or pasted, ${present} present, ${kept.length} never removed; ${removals.length} removals recorded; ` +
        `${split.length} split by a peer's undo/redo${split.length ? ` (${split.join(' ')})` : ''}; ${counts}`,
    );

    const seen: Removal[] = (
      await Promise.all(
        peers.map(async (p) =>
          (await p.page.evaluate(() => [...(window as any).__fuzz.seen, ...(window as any).__fuzz.yRemoved] as Removal[])).map((r) => ({ ...r, who: p.name })),
        ),
      )
    ).flat();
    // Reconnects and errors explain a loss that no removal does.
    const sessions = await Promise.all(
      peers.map(async (p) => {
        const log = await p.page.evaluate(() => ({ states: window.waveLog!.status.map((s) => s.state), errors: window.waveLog!.error.map((e) => e.code) }));
        const states = log.states.filter((s, i) => s !== log.states[i - 1]);
        return `${p.name}: states ${states.join('→')}; errors ${JSON.stringify(log.errors)}`;
      }),
    );
    const explain = (word: string) => {
      const w = typed.find((x) => x.word === word)!;
      const related = (rm: Removal) =>
        rm.tokens.some((t) => pieces(t).some((f) => f.includes(word.slice(0, 4)) || (word.startsWith(f) && rm.at >= w.from - 1000 && rm.at <= w.to + 5000)));
      const times = seen.filter(related).map((r) => r.at);
      const around = [...removals, ...seen].filter((r) => times.some((t) => Math.abs(r.at - t) < 400)).sort((a, b) => a.at - b.at);
      // Where its first letters are in the final text (what is left of it, and what it was run into).
      const id = word.slice(0, ID_LENGTH);
      const where = [...text.matchAll(new RegExp(id, 'g'))].map((m) => JSON.stringify(text.slice(Math.max(0, m.index! - 60), m.index! + 60)));
      return `${word}: ${JSON.stringify(typed.find((w) => w.word === word))}; in the final text: ${where.join(' | ') || 'none of it'}; ` +
        `related removals: ${JSON.stringify(removals.filter(related))}; ` +
        `remote removals seen: ${JSON.stringify(seen.filter(related))}; everything recorded around those: ${JSON.stringify(around)}`;
    };
    const traces = missing.length === 0 ? [] : await Promise.all(peers.map((p) => p.page.evaluate(() => (window as any).__fuzz.trace as Array<{ at: number }>)));
    const traceOf = (word: string) => {
      const w = typed.find((x) => x.word === word)!;
      const i = 'ABC'.indexOf(word[0]!);
      return `${USERS[i]}'s trace around it:\n${traces[i]!.filter((t) => t.at >= w.from - 300 && t.at <= w.to + 300).map((t) => JSON.stringify(t)).join('\n')}`;
    };
    assert.deepEqual(missing, [], `words typed, never removed, but missing (seed ${seed}):\n${missing.map((w) => `${explain(w)}\n${traceOf(w)}`).join('\n')}\n${sessions.join('\n')}\n${opLogs(runs, missing)}`);
    const contexts = (word: string) =>
      [...text.matchAll(new RegExp(word, 'g'))].map((m) => JSON.stringify(text.slice(Math.max(0, m.index! - 40), m.index! + word.length + 40))).join(' | ');
    assert.deepEqual(doubled, [], `words present more than once (seed ${seed}):\n${doubled.map((w) => `${w}: ${contexts(w)}`).join('\n')}\n${opLogs(runs)}`);
    // The fuzzer built a real document, not an empty one.
    assert.ok(present >= Math.min(50, FUZZ_OPS / 2), `only ${present} words survived: the fuzz did too little (seed ${seed})`);
    if (editor.formats && runs.some((r) => r.counts['format'])) {
      const delta = JSON.parse((await contents())[0]!) as { ops: Array<{ attributes?: object }> };
      assert.ok(delta.ops.some((op) => op.attributes), 'formatting survived somewhere');
    }
  });
}

/**
 * True when the piece `f` is what a peer saw of `word` while it was being typed: a prefix of it, possibly run together
 * with a lower-case remnant that followed the caret ("Ca" + "e." of a half-deleted "Line." reads "Cae"), or with what
 * is left of another word whose head was deleted (`tailOfAnother(head, rest)`: `rest` ends a typed word that does not
 * start with `head`; "Aa" + the "ahoacu" of a "Caahoacu" that lost its "Ca" reads "Aaahoacu").
 */
function halfTyped(word: string, f: string, tailOfAnother: (head: string, rest: string) => boolean): boolean {
  let common = 0;
  while (common < f.length && f[common] === word[common]) common++;
  if (common === f.length || (common >= 2 && f.length - common <= 4)) return true;
  // A longer remnant could be most of another word of the same user ("Caa…"): not this one, unless it is the tail of
  // a word that piece does not start (the remnant may begin with letters the prefix shares: try every split).
  for (let k = 2; k <= common; k++) if (tailOfAnother(f.slice(0, k), f.slice(k))) return true;
  return false;
}

/** Each user's last 40 operations, and earlier ones that typed one of `words` (numbered from 0). */
function opLogs(runs: UserRun[], words: readonly string[] = []): string {
  return runs
    .map((r, i) => {
      const lines = r.log.map((op, n) => `#${n} ${op}`).filter((line, n) => n >= r.log.length - 40 || words.some((w) => line.includes(w)));
      return `--- ${USERS[i]}'s operations ---\n${lines.join('\n')}`;
    })
    .join('\n');
}

const freshSkip = freshSeedsSkip('fuzz.test.ts');
for (const editor of EDITORS) {
  describe(`randomized convergence over ${editor.kind}`, () => {
    it(`${USERS.length} users × ${FUZZ_OPS} random operations from a fresh seed converge and keep every word`, { skip: freshSkip, timeout: TEST_TIMEOUT_MS }, async () => {
      const label = `fuzz-${editor.kind}`;
      await fuzz(editor, label, testSeed(label));
    });
    for (const [rank, regression] of REGRESSION_SEEDS.filter((r) => r.driver === editor.kind).entries()) {
      const skip = laterSeedSkip('fuzz.test.ts', rank);
      it(`${USERS.length} users × ${FUZZ_OPS} random operations from seed ${regression.name} (${regression.seed}) converge and keep every word`, { skip, timeout: TEST_TIMEOUT_MS }, () => {
        console.log(`fuzz-${editor.kind}-${regression.name}: seed=${regression.seed}`);
        return fuzz(editor, `fuzz-${editor.kind}-${regression.name}`, regression.seed);
      });
    }
  });
}
