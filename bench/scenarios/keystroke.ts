/**
 * 1. Keystroke → remote render in Chromium. Two pages (two browser contexts) on one document; page 1 types N single
 * characters, one after the other; page 2 records when each is in its DOM. Times are taken in-page
 * (performance.timeOrigin + now(), top frame) at the `keydown` in page 1 and in a MutationObserver (textarea:
 * right after the adapter's setRangeText) in page 2; the offset between the two pages' clocks is estimated from
 * round trips to this process (min-RTT probe) and removed.
 */
import { chromium, type Browser, type Page } from 'playwright-core';
import { codemirror, quill, textarea, type EditorDriver } from '../../e2e/lib/drivers.ts';
import { froala, tinymce } from '../../e2e/lib/richtext-drivers.ts';
import { startPeerPages } from '../lib/static.ts';
import { startServer, type RunningBenchServer } from '../lib/servers.ts';
import { distribution, estimateClockOffset, type ClockProbe, type Distribution } from '../lib/stats.ts';

const CHROMIUM = process.env.WAVE_E2E_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export type EditorName = 'textarea' | 'quill' | 'codemirror' | 'froala' | 'tinymce';
const DRIVERS: Record<EditorName, EditorDriver> = { textarea, quill, codemirror, froala, tinymce };
/** Editors with a y-websocket peer page (y-quill, y-codemirror). */
const PEER_EDITORS: EditorName[] = ['quill', 'codemirror'];

export interface KeystrokeRun {
  latency: Distribution;
  missed: number;
  clockError: number;
  values: number[];
}
export type KeystrokeRuns = Record<string, Record<string, KeystrokeRun[]>>;

/**
 * In-page (plain JavaScript: tsx-compiled functions carry helpers the page lacks). Finds the editor's root, records
 * keydown times (page 1) and arrival times of each new character (page 2).
 */
const INSTRUMENT = `(function (kind) {
  var top = window;
  var now = function () { return top.performance.timeOrigin + top.performance.now(); };
  var root, len;
  if (kind === 'textarea') { root = document.getElementById('editor'); len = function () { return root.value.length; }; }
  else if (kind === 'quill') { root = window.quill.root; len = function () { return window.quill.getLength(); }; }
  else if (kind === 'codemirror') { root = window.cm.getWrapperElement(); len = function () { return window.cm.getValue().length; }; }
  else if (kind === 'froala') { root = window.froala.el; len = function () { return root.textContent.length; }; }
  else { root = window.tiny.getBody(); len = function () { return root.textContent.length; }; }
  var B = window.__bench = { kd: [], arr: [], waiters: [], base: len() };
  root.ownerDocument.addEventListener('keydown', function () { B.kd.push(now()); }, true);
  function check() {
    var n = len() - B.base;
    if (n <= B.arr.length) return;
    var t = now();
    while (B.arr.length < n) B.arr.push(t);
    B.waiters = B.waiters.filter(function (w) { if (B.arr.length >= w[0]) { w[1](); return false; } return true; });
  }
  if (kind === 'textarea') {
    var orig = root.setRangeText;
    root.setRangeText = function () { var r = orig.apply(this, arguments); check(); return r; };
  }
  new MutationObserver(check).observe(root, { childList: true, subtree: true, characterData: true });
  return B.base;
})`;

const WAIT_ARRIVAL = `(function (n, ms) {
  var B = window.__bench;
  return new Promise(function (res) {
    if (B.arr.length >= n) return res(true);
    B.waiters.push([n, function () { res(true); }]);
    setTimeout(function () { res(B.arr.length >= n); }, ms);
  });
})`;

/** A keystroke not seen in page 2 within this long counts as missed (the p50 is ~10–20 ms). */
const ARRIVAL_TIMEOUT_MS = 5_000;
/** Pause between keystrokes: a quick typist's gap, and time for both pages to go idle. */
const GAP_MS = 40;
const PROBES = 30;

async function clockOffset(page: Page): Promise<{ offset: number; error: number }> {
  const probes: ClockProbe[] = [];
  for (let i = 0; i < PROBES; i++) {
    const sent = performance.timeOrigin + performance.now();
    const remote = (await page.evaluate('performance.timeOrigin + performance.now()')) as number;
    const received = performance.timeOrigin + performance.now();
    probes.push({ sent, remote, received });
  }
  return estimateClockOffset(probes);
}

async function oneRun(browser: Browser, url: (doc: string, user: string) => string, ready: string, editor: EditorName, keystrokes: number, warmup: number): Promise<KeystrokeRun> {
  const driver = DRIVERS[editor];
  const doc = `ks-${editor}-${Date.now()}-${Math.random().toString(36).slice(2, 7)}`;
  const contexts = [await browser.newContext({ viewport: { width: 1000, height: 720 } }), await browser.newContext({ viewport: { width: 1000, height: 720 } })];
  try {
    const pages: Page[] = [];
    for (const [i, ctx] of contexts.entries()) {
      const page = await ctx.newPage();
      await page.goto(url(doc, `user${i + 1}`));
      await page.evaluate(ready);
      pages.push(page);
    }
    const [p1, p2] = pages as [Page, Page];
    await p1.evaluate(`${INSTRUMENT}(${JSON.stringify(editor)})`);
    await p2.evaluate(`${INSTRUMENT}(${JSON.stringify(editor)})`);
    await driver.focusEnd(p1);
    const o1 = await clockOffset(p1);
    const o2 = await clockOffset(p2);
    let missed = 0;
    for (let i = 1; i <= warmup + keystrokes; i++) {
      await p1.keyboard.press('x');
      const ok = (await p2.evaluate(`${WAIT_ARRIVAL}(${i}, ${ARRIVAL_TIMEOUT_MS})`)) as boolean;
      if (!ok) {
        missed++;
        break;
      }
      await new Promise((r) => setTimeout(r, GAP_MS * (0.5 + Math.random())));
    }
    const kd = (await p1.evaluate('window.__bench.kd')) as number[];
    const arr = (await p2.evaluate('window.__bench.arr')) as number[];
    const values: number[] = [];
    for (let i = warmup; i < Math.min(kd.length, arr.length); i++) values.push(arr[i]! - o2.offset - (kd[i]! - o1.offset));
    return { latency: distribution(values), missed, clockError: o1.error + o2.error, values };
  } finally {
    for (const ctx of contexts) await ctx.close().catch(() => {});
  }
}

export async function keystroke(opts: { keystrokes: number; warmup: number; runs: number; editors: EditorName[]; log: (s: string) => void }): Promise<{ runs: KeystrokeRuns; chromium: string }> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const wave: RunningBenchServer = await startServer('wave');
  const yws: RunningBenchServer = await startServer('y-websocket');
  const pages = await startPeerPages();
  const out: KeystrokeRuns = {};
  try {
    for (let run = 0; run < opts.runs; run++) {
      for (const editor of opts.editors) {
        const stacks: Array<[string, (doc: string, user: string) => string, string]> = [
          ['wave', (doc, user) => `${wave.url}/demo/${DRIVERS[editor].pagePath}?${new URLSearchParams({ doc, user })}`, 'window.waveStarted'],
        ];
        if (PEER_EDITORS.includes(editor)) {
          const ws = yws.url.replace(/^http/, 'ws');
          stacks.push(['y-websocket', (doc) => `${pages.url}/peer.html?${new URLSearchParams({ editor, ws, doc })}`, 'window.peerStarted']);
        }
        for (const [stack, url, ready] of stacks) {
          const r = await oneRun(browser, url, ready, editor, opts.keystrokes, opts.warmup);
          ((out[editor] ??= {})[stack] ??= []).push(r);
          opts.log(`  keystroke ${editor} ${stack} run ${run + 1}: p50 ${r.latency.p50.toFixed(2)} p99 ${r.latency.p99.toFixed(2)} ms (n ${r.latency.n}, missed ${r.missed}, clock ±${r.clockError.toFixed(2)})`);
        }
      }
    }
    return { runs: out, chromium: browser.version() };
  } finally {
    await pages.close();
    await browser.close();
    await wave.stop();
    await yws.stop();
  }
}
