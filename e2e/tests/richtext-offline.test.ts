// RELIABILITY.md D8 end to end, per rich editor (Quill, Froala, TinyMCE) in Chromium against the real server: one
// user (Ann) edits block structure offline — Enter, a delete across a paragraph boundary, a paragraph turned into a
// heading and another into a list item — while a collaborator (Bob) types inside the text she changes. Then Ann comes
// back online, either with Bob still there or after Bob was saved and closed his tab. Every character Bob typed is
// there once, inside its word, and Ann's editor, Bob's (or a freshly opened page) show identical content.
//
// Ann reaches the server through a relay (lib/relay.ts) the test cuts: Playwright's `setOffline` alone leaves open
// WebSockets open (FIELD-NOTES). Her page also goes offline in Chromium, so the session hears the browser's
// `offline`/`online` events as a user's would.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { withScene, type Peer } from '../lib/browser.ts';
import { quillContract, type ContractDriver } from '../lib/drivers.ts';
import { froalaContract, tinymceContract } from '../lib/richtext-contract.ts';
import { command } from '../lib/richtext.ts';
import { Relay } from '../lib/relay.ts';
import type { WaveServer } from '../lib/server.ts';
import { serverAndBrowser } from '../lib/suite.ts';
import { freshDocId, waitUntil } from '../lib/util.ts';
import '../lib/page-globals.ts';

/** Bounds a hang only: a page load, a reconnect and a resync take well under a second each here. */
const TIMEOUT_MS = 90_000;
const CONVERGE_MS = 20_000;
/** What Chromium logs while Ann's page is offline: its reconnect attempts failing. */
const OFFLINE_ERRORS = [/WebSocket connection to .* failed/, /ERR_CONNECTION_REFUSED/, /ERR_INTERNET_DISCONNECTED/, /ERR_CONNECTION_RESET/];

let server: WaveServer;
let browser: Browser;

serverAndBrowser((s, b) => {
  server = s;
  browser = b;
});

/** One line of what the editor shows: its block (`p`, `h1`…`h6`, `bullet`, `ordered`…) and its text. */
type Line = [block: string, text: string];

interface OfflineEditor {
  readonly driver: ContractDriver;
  /** Makes the caret's line a heading (level 2: the one every demo toolbar has). */
  heading(page: Page): Promise<void>;
  /** Makes the caret's line a bulleted list item. */
  bulletList(page: Page): Promise<void>;
}

interface QuillFormat {
  format(name: string, value: unknown, source: string): void;
}

const EDITORS: readonly OfflineEditor[] = [
  {
    driver: quillContract,
    heading: (page) => page.evaluate(() => (window.quill as unknown as QuillFormat).format('header', 2, 'user')),
    bulletList: (page) => page.evaluate(() => (window.quill as unknown as QuillFormat).format('list', 'bullet', 'user')),
  },
  { driver: froalaContract, heading: (page) => command(page, 'h2').then(() => {}), bulletList: (page) => command(page, 'ul').then(() => {}) },
  { driver: tinymceContract, heading: (page) => command(page, 'h2').then(() => {}), bulletList: (page) => command(page, 'ul').then(() => {}) },
];

/**
 * In-page: the editor's lines as a reader sees them, one per paragraph, heading or list item, editor UI skipped.
 * Text without zero-width placeholders, no-break spaces read as spaces, each line's trailing spaces dropped (how a
 * space before a line break is spelled is the editor's business, not content).
 */
const LINES = String.raw`(function (kind) {
  var root = kind === 'quill' ? window.quill.root : kind === 'froala' ? window.froala.el : window.tiny.getBody();
  function skip(e) {
    return e.getAttribute('data-f-id') === 'pbf' || e.getAttribute('data-mce-bogus') === 'all' || e.classList.contains('fr-marker');
  }
  function text(e) { return (e.textContent || '').replace(/[\u200b\ufeff]/g, '').replace(/\u00a0/g, ' ').replace(/\s+$/, ''); }
  var out = [];
  Array.prototype.forEach.call(root.children, function (b) {
    if (skip(b)) return;
    var tag = b.tagName.toLowerCase();
    if (tag === 'ul' || tag === 'ol') {
      Array.prototype.forEach.call(b.children, function (li) {
        out.push([li.getAttribute('data-list') || (tag === 'ul' ? 'bullet' : 'ordered'), text(li)]);
      });
    } else {
      out.push([/^h[1-6]$/.test(tag) ? tag : 'p', text(b)]);
    }
  });
  return out;
})`;

function kindOf(driver: ContractDriver): string {
  return driver.name === 'quill' ? 'quill' : driver.name;
}

async function linesOf(peer: Peer): Promise<Line[]> {
  return (await peer.page.evaluate(`${LINES}(${JSON.stringify(kindOf(peer.driver as ContractDriver))})`)) as Line[];
}

/** The editor's full content in its own model, spelled the same way for every page of one editor. */
async function contentOf(peer: Peer): Promise<string> {
  const content = await (peer.driver as ContractDriver).content(peer.page);
  // TinyMCE puts line breaks between tags; a no-break space is how an editor spells a space at a line's edge.
  return content.replace(/\n\s*/g, '').replace(/&nbsp;|\u00a0/g, ' ');
}

/** Waits until a `status {saved: true, pending: 0}` arrived after the page's last key press (its edits are stored). */
async function savedAfterTyping(peer: Peer): Promise<void> {
  await peer.page.waitForFunction(
    () => {
      const t = window.waveTiming!;
      const last = window.waveLog!.status.at(-1);
      return t.status.some((s) => s.at > t.lastKeyAt && s.saved && s.pending === 0) && last?.saved === true;
    },
    undefined,
    { timeout: CONVERGE_MS },
  );
}

/** Waits until every peer shows the same content (no outcome presumed) and returns it with each peer's lines. */
async function identical(peers: readonly Peer[]): Promise<Line[][]> {
  let contents: string[] = [];
  await waitUntil(
    async () => {
      contents = await Promise.all(peers.map(contentOf));
      return contents.every((c) => c === contents[0]);
    },
    { timeoutMs: CONVERGE_MS, message: () => `identical content in ${peers.map((p) => p.name).join(', ')}; now ${JSON.stringify(contents)}` },
  );
  return Promise.all(peers.map(linesOf));
}

interface Race {
  readonly name: string;
  /** The document before the race, one paragraph per line. */
  readonly text: string;
  /** Ann's edit while offline, and the lines she then sees. */
  offline(editor: OfflineEditor, page: Page): Promise<void>;
  readonly offlineLines: Line[];
  /** What Bob types, in order: at an offset of his editor's text (one "\n" between lines), then the lines he sees. */
  readonly typing: ReadonlyArray<{ at: number; text: string }>;
  readonly typedLines: Line[];
  /** The one right outcome: Ann's block change, and every character Bob typed once, inside its word. */
  readonly expected: Line[];
}

const RACES: readonly Race[] = [
  {
    name: 'Enter offline while the text after the caret is typed into',
    text: 'hello world',
    async offline({ driver }, page) {
      await driver.select(page, 6, 6);
      await page.keyboard.press('Enter');
    },
    offlineLines: [['p', 'hello'], ['p', 'world']],
    typing: [{ at: 8, text: 'XX' }],
    typedLines: [['p', 'hello woXXrld']],
    expected: [['p', 'hello'], ['p', 'woXXrld']],
  },
  {
    name: 'a selection across a paragraph boundary deleted offline while typed into inside and after it',
    text: 'alpha beta\ngamma delta',
    async offline({ driver }, page) {
      // From "beta" to the end of "gamma ".
      await driver.select(page, 6, 17);
      await page.keyboard.press('Backspace');
    },
    offlineLines: [['p', 'alpha delta']],
    // "QQ" inside "gamma" (after "gam"), then "ZZ" inside "delta" (after "del", two further on for "QQ").
    typing: [
      { at: 14, text: 'QQ' },
      { at: 22, text: 'ZZ' },
    ],
    typedLines: [['p', 'alpha beta'], ['p', 'gamQQma delZZta']],
    expected: [['p', 'alpha QQdelZZta']],
  },
  {
    // The deleted text begins as the kept text after it does (" seed"): Ann's write must delete exactly what she
    // selected, not keep the "seed" of seedA and the "C" of seedC with Bob's typing landing between them.
    name: 'a selection across a paragraph boundary that begins as the text after it does, deleted offline while typed into',
    text: 'one seedA\ntwo seedB seedC',
    async offline({ driver }, page) {
      // From the space before "seedA" to the end of "seedB".
      await driver.select(page, 3, 19);
      await page.keyboard.press('Backspace');
    },
    offlineLines: [['p', 'one seedC']],
    typing: [{ at: 11, text: 'ZZ' }],
    typedLines: [['p', 'one seedA'], ['p', 'tZZwo seedB seedC']],
    expected: [['p', 'oneZZ seedC']],
  },
  {
    // Backspace removes the letter before the caret, not the equal one after it, between which Bob types.
    name: 'Backspace offline between two equal letters while a collaborator types between them',
    text: 'baan',
    async offline({ driver }, page) {
      await driver.select(page, 2, 2);
      await page.keyboard.press('Backspace');
    },
    offlineLines: [['p', 'ban']],
    typing: [{ at: 2, text: 'Z' }],
    typedLines: [['p', 'baZan']],
    expected: [['p', 'bZan']],
  },
  {
    name: 'a paragraph turned into a heading and another into a list item offline while both are typed into',
    text: 'first line\nsecond line',
    async offline(editor, page) {
      await editor.driver.select(page, 2, 2);
      await editor.heading(page);
      await editor.driver.select(page, 13, 13);
      await editor.bulletList(page);
    },
    offlineLines: [['h2', 'first line'], ['bullet', 'second line']],
    typing: [
      { at: 3, text: 'XX' },
      { at: 16, text: 'YY' },
    ],
    typedLines: [['p', 'firXXst line'], ['p', 'secYYond line']],
    expected: [['h2', 'firXXst line'], ['bullet', 'secYYond line']],
  },
];

/** Ann offline through the relay and her browser's network; waits until her session says so. */
async function goOffline(ann: Peer, relay: Relay): Promise<void> {
  relay.cut();
  await ann.context.setOffline(true);
  await ann.page.waitForFunction(() => window.coedit!.getState() === 'offline');
}

/** Ann back: the relay first, then the browser's `online` event, on which the session reconnects at once. */
async function goOnline(ann: Peer, relay: Relay): Promise<void> {
  relay.restore();
  await ann.context.setOffline(false);
  await ann.page.waitForFunction(() => window.coedit!.getState() === 'online' && window.waveLog!.status.at(-1)?.saved === true, undefined, {
    timeout: CONVERGE_MS,
  });
}

async function runRace(editor: OfflineEditor, race: Race, bobLeaves: boolean): Promise<void> {
  const { driver } = editor;
  const label = `${driver.name}-offline-${RACES.indexOf(race)}${bobLeaves ? '-gone' : ''}`;
  const relay = await Relay.start(server.url);
  try {
    await withScene(browser, server, label, async (scene) => {
      const doc = freshDocId(label);
      const ann = await scene.open('Ann', driver, {
        doc,
        text: race.text,
        allowErrors: OFFLINE_ERRORS,
        // Her page, scripts and socket all come through the relay: the demo key allows the page's own origin
        // (`self`), and the TinyMCE plugin's URL, made from `serverUrl`, stays inside the demo's `script-src 'self'`.
        baseUrl: relay.url,
      });
      const bob = await scene.open('Bob', driver, { doc });
      const before = race.text.split('\n').map((t): Line => ['p', t]);
      assert.deepEqual(await identical([ann, bob]), [before, before], 'both start from the seeded document');
      assert.ok(relay.open > 0, "Ann's session goes through the relay");

      await goOffline(ann, relay);
      await race.offline(editor, ann.page);
      assert.deepEqual(await linesOf(ann), race.offlineLines, 'Ann made her change offline');

      for (const { at, text } of race.typing) {
        await driver.select(bob.page, at, at);
        await driver.type(bob.page, text);
      }
      await savedAfterTyping(bob);
      assert.deepEqual(await linesOf(bob), race.typedLines, 'Bob typed inside the words');
      assert.deepEqual(await linesOf(ann), race.offlineLines, 'nothing reached Ann while she was offline');

      if (bobLeaves) await bob.context.close();
      await goOnline(ann, relay);

      // With Bob gone, a page opened now shows what the server has; with Bob there, his editor does.
      const witness = bobLeaves ? await scene.open('Carol', driver, { doc }) : bob;
      const [annLines, witnessLines] = await identical([ann, witness]);
      assert.deepEqual(annLines, race.expected, `${witness.name} and Ann agree; every typed character once, inside its word`);
      assert.deepEqual(witnessLines, race.expected);
    });
  } finally {
    await relay.close();
  }
}

for (const editor of EDITORS) {
  describe(`${editor.driver.name}: block edits made offline keep a collaborator's typing (D8)`, () => {
    for (const race of RACES) {
      it(`[D8] ${race.name}`, { timeout: TIMEOUT_MS }, () => runRace(editor, race, false));
      it(`[D8] ${race.name}; the typist was saved and closed the tab before Ann came back`, { timeout: TIMEOUT_MS }, () => runRace(editor, race, true));
    }
  });
}
