// Adapter-contract drivers for the rich-text editors (Froala, TinyMCE): selections as UTF-16 offsets into the
// driver's `text()` (one line per top-level block), the editor's own HTML as content, and what a stopped session
// left hooked into the editor, measured against the same demo page on which no session ever started.
import type { CDPSession, Page } from 'playwright-core';
import { trackTiming } from './browser.ts';
import type { ContractDriver } from './drivers.ts';
import { BLOCKS, froala, HOOK_TINYMCE_TIMING, inPage, tinymce, type RichTextDriver } from './richtext-drivers.ts';

type Kind = 'froala' | 'tinymce';

/** In-page: the editable root, focused once before any node is looked up (focusing can make Froala rewrite text nodes). */
const ROOT = String.raw`
var root = kind === 'froala' ? window.froala.el : window.tiny.getBody();
var doc = root.ownerDocument;`;

/**
 * In-page: focuses the editor and selects from offset `anchor` to offset `head` of `text()`. A block boundary is
 * one "\n"; an offset at a block's end is inside that block, the next one is at the next block's start; a block
 * without text (`<p><br></p>`) is selected as (block, 0). Inside a block, offsets count visible characters of its
 * text nodes (zero-width placeholders are skipped, as `text()` skips them); at the seam of two text nodes the
 * earlier one is used, as a caret placed there by a user would be.
 */
const SELECT = String.raw`(function (kind, anchor, head) {
  ${BLOCKS}
  ${ROOT}
  if (kind === 'froala') { if (doc.activeElement !== root) window.froala.events.focus(); }
  else if (!window.tiny.hasFocus()) window.tiny.focus();
  function rawIndex(data, k) {
    for (var j = 0, seen = 0; j < data.length; j++) {
      if (seen === k) return j;
      if (!/[\u200b\ufeff]/.test(data[j])) seen++;
    }
    return data.length;
  }
  function point(offset) {
    var blocks = blocksOf(root);
    for (var i = 0, pos = 0; i < blocks.length; i++) {
      var len = visible(blocks[i].textContent || '').length;
      if (offset <= pos + len || i === blocks.length - 1) {
        var rest = Math.max(0, Math.min(offset - pos, len)), last = null;
        var walker = doc.createTreeWalker(blocks[i], 4);
        for (var n = walker.nextNode(); n; n = walker.nextNode()) {
          var v = visible(n.data).length;
          if (v === 0) continue;
          if (rest <= v) return { node: n, offset: rawIndex(n.data, rest) };
          rest -= v;
          last = n;
        }
        return last ? { node: last, offset: last.data.length } : { node: blocks[i], offset: 0 };
      }
      pos += len + 1;
    }
    return { node: root, offset: 0 };
  }
  var a = point(anchor), h = point(head);
  if (kind === 'tinymce') {
    var forward = anchor <= head, s = forward ? a : h, e = forward ? h : a;
    var range = doc.createRange();
    range.setStart(s.node, s.offset);
    range.setEnd(e.node, e.offset);
    window.tiny.selection.setRng(range, forward);
  } else {
    doc.getSelection().setBaseAndExtent(a.node, a.offset, h.node, h.offset);
  }
})`;

/** In-page: the document selection inside the editor as [start, end] offsets of `text()`; [-1, -1] when it is elsewhere. */
const SELECTION = String.raw`(function (kind) {
  ${BLOCKS}
  ${ROOT}
  var sel = doc.getSelection();
  if (!sel || sel.rangeCount === 0 || !root.contains(sel.anchorNode)) return [-1, -1];
  function offsetOf(node, off) {
    var blocks = blocksOf(root);
    for (var i = 0, pos = 0; i < blocks.length; i++) {
      var range = doc.createRange();
      range.selectNodeContents(blocks[i]);
      var where = range.comparePoint(node, off);
      if (where < 0) return pos; // between blocks: the start of the next one
      if (where === 0) {
        range.setEnd(node, off);
        return pos + visible(range.toString()).length;
      }
      pos += visible(blocks[i].textContent || '').length + 1;
    }
    return Math.max(0, pos - 1);
  }
  var r = sel.getRangeAt(0);
  return [offsetOf(r.startContainer, r.startOffset), offsetOf(r.endContainer, r.endOffset)];
})`;

// ---- leftovers ----

/**
 * Where a session hooks DOM listeners: the binding on the editable root (keys, composition, blur), presence on
 * the root (input, keyup, mouse), on its document (selectionchange) and on the windows (scroll, resize).
 */
const DOM_TARGETS: Record<Kind, Record<string, Target>> = {
  froala: { 'froala.el': { expression: 'window.froala.el' }, document: { expression: 'document' }, window: { expression: 'window' } },
  tinymce: {
    'tiny body': { inEditorFrame: true, expression: 'document.body' },
    'tiny document': { inEditorFrame: true, expression: 'document' },
    'tiny window': { inEditorFrame: true, expression: 'window' },
    document: { expression: 'document' },
    window: { expression: 'window' },
  },
};

/**
 * An object to list listeners on, evaluated in the main frame or in TinyMCE's iframe: the DevTools protocol lists
 * no listeners at all for a node handed over from another frame's context (TinyMCE's body seen from the page).
 */
interface Target {
  expression: string;
  inEditorFrame?: boolean;
}

/**
 * In-page: the editor-level hooks, as comparable strings. TinyMCE: the handlers in its event dispatcher per event
 * (`editor.on`, which the adapter uses for change events and to take over Undo/Redo). Froala: the source of the
 * undo methods the adapter reroutes (Froala's `events.on` handlers cannot be removed or listed: by design the
 * adapter registers one `contentChanged` handler per editor, once, and it calls nothing after stop()).
 * TinyMCE's dispatcher is internal (`_eventDispatcher.bindings`, 6.x–8.x): if it moves, this throws rather than
 * silently comparing nothing.
 */
const EDITOR_HOOKS = `(function (kind) {
  var out = {};
  if (kind === 'tinymce') {
    var bindings = window.tiny._eventDispatcher && window.tiny._eventDispatcher.bindings;
    if (!bindings) throw new Error('TinyMCE event dispatcher not found (tiny._eventDispatcher.bindings)');
    // Not "init": it fires once per editor and has fired on both pages, so a handler on it is no hook into the live
    // editor; and TinyMCE adds one of its own to it (dispatching SkinLoaded) only when its skin stylesheet arrives
    // after the editor was set up, which differs between loads (seen in ~1 of 10 baseline pages).
    Object.keys(bindings).forEach(function (name) {
      if (name !== 'init') out['tiny.on("' + name + '") handlers'] = String(bindings[name].length);
    });
  } else {
    ['run', 'redo', 'canDo', 'canRedo'].forEach(function (m) { out['froala.undo.' + m] = String(window.froala.undo[m]); });
  }
  return out;
})`;

/**
 * Stand-ins for Wave's script on the baseline page: the demo page runs unchanged (same editor, options, plugins and
 * host content), but no session ever starts. The TinyMCE stand-in registers the real plugin's option and its two
 * lifecycle handlers (start on `init`, stop on `remove`), which belong to the plugin and outlive `stop()` by design.
 */
const NO_SESSION: Record<Kind, { url: string; body: string }> = {
  froala: {
    url: '**/lib/2.x/api/wave.client.js',
    body: `window.Coedit = function () {};
      Coedit.prototype.on = function () { return function () {}; };
      Coedit.prototype.init = function () { return Promise.resolve(); };`,
  },
  tinymce: {
    url: '**/waveEditorD/2.x/plugin.min.js',
    body: `tinymce.PluginManager.add('wave', function (editor) {
        if (!editor.options.isRegistered('wave')) editor.options.register('wave', { processor: 'object' });
        editor.on('init', function () {});
        editor.on('remove', function () {});
        return { coedit: { on: function () { return function () {}; } }, ready: Promise.resolve() };
      });`,
  },
};

/** The id of the default execution context of TinyMCE's iframe (`window.tiny.getWin()`). */
async function editorFrameContext(cdp: CDPSession): Promise<number> {
  const contexts: Array<{ id: number; auxData?: { frameId?: string; isDefault?: boolean } }> = [];
  cdp.on('Runtime.executionContextCreated', (e) => contexts.push(e.context));
  await cdp.send('Runtime.enable'); // reports every existing context before it answers
  const { result } = await cdp.send('Runtime.evaluate', { expression: 'window.tiny.getWin().frameElement' });
  const { node } = await cdp.send('DOM.describeNode', { objectId: result.objectId! });
  const context = contexts.find((c) => c.auxData?.frameId === node.frameId && c.auxData?.isDefault);
  if (!context) throw new Error(`no execution context for TinyMCE's iframe (frame ${node.frameId})`);
  return context.id;
}

/** Every DOM listener on `targets`, counted per target, type and phase. */
async function domListeners(page: Page, targets: Record<string, Target>): Promise<Map<string, number>> {
  const cdp = await page.context().newCDPSession(page);
  try {
    const counts = new Map<string, number>();
    let frameContext: number | undefined;
    for (const [label, { expression, inEditorFrame }] of Object.entries(targets)) {
      if (inEditorFrame) frameContext ??= await editorFrameContext(cdp);
      const { result } = await cdp.send('Runtime.evaluate', { expression, ...(inEditorFrame ? { contextId: frameContext } : {}) });
      const { listeners } = await cdp.send('DOMDebugger.getEventListeners', { objectId: result.objectId! });
      for (const l of listeners) {
        const key = `${label}: "${l.type}"${l.useCapture ? ' (capture)' : ''} listeners`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    }
    return counts;
  } finally {
    await cdp.detach();
  }
}

async function hooks(page: Page, kind: Kind): Promise<{ dom: Map<string, number>; editor: Record<string, string> }> {
  return { dom: await domListeners(page, DOM_TARGETS[kind]), editor: await inPage<Record<string, string>>(page, EDITOR_HOOKS, kind) };
}

/**
 * The baseline: the same demo URL opened in a new tab of the same context with Wave's script replaced by
 * NO_SESSION, and the harness's own hooks applied as on the measured page (browser.ts `trackTiming`, and the
 * TinyMCE key timing once the measured page has it). What that page has is the editor's, the demo's and the
 * harness's; anything more on the measured page is what the session left behind.
 */
async function baseline(page: Page, kind: Kind): Promise<{ dom: Map<string, number>; editor: Record<string, string> }> {
  const fresh = await page.context().newPage();
  try {
    const stub = NO_SESSION[kind];
    await fresh.route(stub.url, (route) => route.fulfill({ contentType: 'text/javascript', body: stub.body }));
    await fresh.goto(page.url());
    await fresh.evaluate('window.waveStarted');
    await trackTiming(fresh);
    if (await page.evaluate('Boolean(window.waveTiming && window.waveTiming.tinymceHooked)')) await inPage<void>(fresh, HOOK_TINYMCE_TIMING);
    return await hooks(fresh, kind);
  } finally {
    await fresh.close();
  }
}

async function leftovers(page: Page, kind: Kind): Promise<string[]> {
  const [now, base] = [await hooks(page, kind), await baseline(page, kind)];
  const left: string[] = [];
  for (const key of new Set([...now.dom.keys(), ...base.dom.keys()])) {
    const extra = (now.dom.get(key) ?? 0) - (base.dom.get(key) ?? 0);
    if (extra !== 0) left.push(`${key} × ${extra} beyond a page without a session`);
  }
  for (const key of new Set([...Object.keys(now.editor), ...Object.keys(base.editor)])) {
    const [mine, own] = [now.editor[key], base.editor[key]];
    if (mine !== own) left.push(`${key}: ${mine?.slice(0, 60)} (on a page without a session: ${own?.slice(0, 60)})`);
  }
  return left;
}

function contract(driver: RichTextDriver): ContractDriver {
  const kind = driver.kind;
  return {
    ...driver,
    select: (page, anchor, head) => inPage<void>(page, SELECT, kind, anchor, head),
    selection: (page) => inPage<[number, number]>(page, SELECTION, kind),
    content: (page) => driver.html(page),
    leftovers: (page) => leftovers(page, kind),
  };
}

export const froalaContract = contract(froala);
export const tinymceContract = contract(tinymce);
