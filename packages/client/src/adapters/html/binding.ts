/**
 * The contenteditable binding shared by Froala (A) and TinyMCE (D), over the flat rich text of wave-richtext: one
 * `Y.Text` named `RICHTEXT_TYPE` in the Quill Delta convention, the type Quill opens too.
 *
 * Local edit: a MutationObserver marks the top-level nodes that changed; at `input` (or the editor's own change
 * event, for toolbar commands) those nodes are read into lines with `parseHtml` and compared with the document's
 * lines they covered (the line index, index-map.ts); a difference is written as ONE `replaceLines` call, bounded by
 * the selection the edit replaced, in one transaction whose origin is this binding. No text ever moves, so
 * concurrent edits converge by the CRDT alone.
 *
 * Remote change (and undo/redo, whose origin is the undo manager): the blocks whose lines changed are re-rendered
 * with `renderHtml` and patched into the DOM (`morph`); the local selection is kept as a text index moved through
 * the change. A node whose editor spelling differs from the canonical rendering is re-rendered only after a write
 * or a remote change of it, and re-rendering writes nothing, so the two can never loop.
 *
 * IME: while a composition is open nothing is written and nothing is patched; at `compositionend` the composed
 * splice is written at the relative position where it began, then the blocks are shown as the document has them.
 */
import * as Y from 'yjs';
import type { Awareness } from 'y-protocols/awareness';
import { docLines, EDITOR_DIALECT, parseHtml, randomId, renderHtml, replaceLines, RICHTEXT_TYPE, type HtmlNode, type Line } from 'wave-richtext';
import { invalidConfig } from '../../core/errors.js';
import type { LocalUndo } from '../../core/undo.js';
import type { EditorAdapter } from '../types.js';
import { htmlPresence } from '../../presence/host-html.js';
import type { PresenceHost } from '../../presence/types.js';
import { blocksOf, changedBlocks, type Block } from './blocks.js';
import { contentNodes, domHtml, isElement, nodesOf, patchNodes, topOf, wrapInlineRuns, type EditorDialect } from './dom.js';
import type { RichTextHost, UndoState } from './host.js';
import { LineIndex, transformIndex } from './index-map.js';
import { keepCellIds, sameLines, writeSplice } from './lines-diff.js';
import { linesOfNode, unitsOf } from './points.js';
import { RepairWriter } from './repair.js';
import { inputBounds, insertionBounds, restoreSelection, selectionIn } from './selection.js';

export type { RichTextHost, UndoState };

const OBSERVE: MutationObserverInit = {
  childList: true,
  characterData: true,
  subtree: true,
  attributes: true,
  // Only attributes the parser reads; editors flip many others (selection state, drag handles) all the time.
  attributeFilter: ['href', 'src', 'alt', 'width', 'height', 'style', 'class', 'colspan', 'rowspan', 'data-checked', 'color'],
};

/** An open IME composition: the block it is in, that block's lines and the caret when it began. */
interface Composition {
  top: Node | null;
  before: Line[];
  caret: Y.RelativePosition | null;
  caretOffset: number;
  /** A peer's change arrived while it was open (nothing was patched). */
  remote: boolean;
}

export class RichTextBinding implements EditorAdapter {
  readonly textName = RICHTEXT_TYPE;
  private ytext: Y.Text | null = null;
  private blocks: Block[] = [];
  private index: LineIndex | null = null;
  private observer: MutationObserver | null = null;
  /** Top-level nodes changed since the last flush; `rootDirty` when the root's own child list changed. */
  private readonly dirty = new Set<Node>();
  private rootDirty = false;
  /** The range an `input` is about to replace, as text indices: bounds for its diff. */
  private editing: { from: number; to: number } | null = null;
  private composition: Composition | null = null;
  /** Inside this binding's own write: every transaction it sets off is shown by the flush that wrote. */
  private writing = false;
  /** Table rows the editor shows, by element: the parser reads each `<tr>` with its row's id. */
  private rowIds = new WeakMap<Element, string>();
  private readOnly = false;
  private repair: RepairWriter | null = null;
  private cleanups: Array<() => void> = [];

  constructor(private readonly host: RichTextHost) {}

  get kind() {
    return this.host.kind;
  }

  get container(): HTMLElement {
    return this.host.container;
  }

  private get root(): HTMLElement {
    return this.host.root;
  }

  private get dialect(): EditorDialect {
    return this.host.dialect;
  }

  setReadOnly(readOnly: boolean): void {
    this.readOnly = readOnly;
    this.host.setReadOnly?.(readOnly);
  }

  createPresence(): PresenceHost {
    return htmlPresence(this.root, this.host.container, {
      selection: () => {
        const sel = this.root.ownerDocument.getSelection();
        const ytext = this.ytext;
        if (!ytext || !sel?.anchorNode || !sel.focusNode) return null;
        this.flush();
        const anchor = this.index?.indexOf(sel.anchorNode, sel.anchorOffset);
        const head = this.index?.indexOf(sel.focusNode, sel.focusOffset);
        if (anchor === null || anchor === undefined || head === null || head === undefined) return null;
        return { anchor: Y.createRelativePositionFromTypeIndex(ytext, anchor), head: Y.createRelativePositionFromTypeIndex(ytext, head) };
      },
      toDom: (rel) => {
        const abs = this.ytext?.doc ? Y.createAbsolutePositionFromRelativePosition(rel, this.ytext.doc) : null;
        return abs && abs.type === this.ytext ? (this.index?.pointOf(abs.index) ?? null) : null;
      },
    });
  }

  /** The editor's content as lines; an editor showing one empty paragraph holds nothing. */
  private readEditor(root: Node): Line[] {
    const lines = parseHtml(root as unknown as HtmlNode, { dialect: EDITOR_DIALECT });
    return lines.length === 1 && lines[0]!.ops.length === 0 && Object.keys(lines[0]!.attrs).length === 0 ? [] : lines;
  }

  seed(doc: Y.Doc): void {
    const lines = this.readEditor(this.root);
    if (lines.length > 0) replaceLines(doc.getText(RICHTEXT_TYPE), 0, 0, lines);
  }

  /** Session hook before a remote update: DOM edits the MutationObserver has not delivered yet are written now. */
  flushLocal(): void {
    this.flush();
  }

  /**
   * `forceSync(content)`: `content` is an HTML string, parsed in an inert document (no script runs, no image
   * loads) and read by the same parser as the editor's DOM. Throws `invalid_config` for anything but a string.
   */
  replaceContent(doc: Y.Doc, content: unknown): void {
    if (typeof content !== 'string') throw invalidConfig('forceSync(content)', `an HTML string for app '${this.kind}'`, content);
    const Parser = this.root.ownerDocument.defaultView?.DOMParser ?? DOMParser;
    const lines = this.readEditor(new Parser().parseFromString(content, 'text/html').body);
    const ytext = doc.getText(RICHTEXT_TYPE);
    doc.transact(() => {
      ytext.delete(0, ytext.length);
      if (lines.length > 0) replaceLines(ytext, 0, 0, lines);
    });
  }

  bind(doc: Y.Doc, awareness?: Awareness, undo?: LocalUndo): void {
    this.unbind();
    const ytext = doc.getText(RICHTEXT_TYPE);
    this.ytext = ytext;
    this.show();
    const observer = new MutationObserver((records) => {
      this.collect(records);
      this.flush();
    });
    observer.observe(this.root, OBSERVE);
    this.observer = observer;
    ytext.observe(this.onText);
    const root = this.root;
    root.addEventListener('beforeinput', this.onBeforeInput);
    root.addEventListener('input', this.onInput);
    root.addEventListener('compositionstart', this.onCompositionStart);
    root.addEventListener('compositionend', this.onCompositionEnd);
    const unlisten = this.host.listen(() => this.flush());
    if (awareness) this.repair = new RepairWriter(ytext, awareness, () => this.readOnly, () => this.flush());
    this.cleanups.push(() => {
      observer.disconnect();
      ytext.unobserve(this.onText);
      root.removeEventListener('beforeinput', this.onBeforeInput);
      root.removeEventListener('input', this.onInput);
      root.removeEventListener('compositionstart', this.onCompositionStart);
      root.removeEventListener('compositionend', this.onCompositionEnd);
      unlisten();
      this.repair?.destroy();
      this.repair = null;
    });
    if (undo) {
      this.cleanups.push(undo.track(this));
      this.cleanups.push(
        this.host.takeOverUndo(
          () => {
            this.flush();
            undo.undo();
          },
          () => {
            this.flush();
            undo.redo();
          },
          { canUndo: () => undo.canUndo, canRedo: () => undo.canRedo },
        ),
      );
    }
    this.host.contentUpdated();
    this.repair?.check();
  }

  unbind(): void {
    for (const cleanup of this.cleanups.splice(0).reverse()) cleanup();
    this.observer = null;
    this.ytext = null;
    this.blocks = [];
    this.index = null;
    this.dirty.clear();
    this.rootDirty = false;
    this.editing = null;
    this.composition = null;
    this.rowIds = new WeakMap();
  }

  destroy(): void {
    this.unbind();
  }

  // ---- local edits ----

  /**
   * The range the input replaces: its target range (Input Events Level 2, `getTargetRanges()`: for Backspace the
   * character before the caret, not the caret), else the selection.
   */
  private readonly onBeforeInput = (event: Event): void => {
    this.flush();
    const index = this.index;
    const target = (event as InputEvent).getTargetRanges?.()[0];
    const sel = this.root.ownerDocument.getSelection();
    const a = target ? index?.indexOf(target.startContainer, target.startOffset) : sel?.anchorNode ? index?.indexOf(sel.anchorNode, sel.anchorOffset) : null;
    const b = target ? index?.indexOf(target.endContainer, target.endOffset) : sel?.focusNode ? index?.indexOf(sel.focusNode, sel.focusOffset) : null;
    this.editing = a === null || a === undefined || b === null || b === undefined ? null : { from: Math.min(a, b), to: Math.max(a, b) };
  };

  private readonly onInput = (): void => {
    this.flush();
    this.editing = null;
  };

  private collect(records: readonly MutationRecord[]): void {
    for (const record of records) {
      if (record.target === this.root) {
        this.rootDirty = true;
        continue;
      }
      const top = topOf(this.root, record.target);
      if (top) this.dirty.add(top);
    }
  }

  /** The parser's reading of one top-level node, table rows keeping the ids the document gave them. */
  private read(node: Node): Line[] {
    const rows = isElement(node) ? Array.from(node.querySelectorAll('tr')).filter((tr) => !tr.parentElement?.closest('td, th, li')) : [];
    let k = 0;
    return linesOfNode(node, EDITOR_DIALECT, (kind) => {
      if (kind !== 'row') return randomId(kind);
      const tr = rows[k++];
      const id = (tr && this.rowIds.get(tr)) ?? randomId('row');
      if (tr) this.rowIds.set(tr, id);
      return id;
    });
  }

  /** Writes what the editor changed since the last flush; then shows the touched blocks the canonical way. */
  private flush(): void {
    const ytext = this.ytext;
    const index = this.index;
    if (!ytext || !index || this.composition || !this.observer) return;
    this.collect(this.observer.takeRecords());
    if (!this.rootDirty && this.dirty.size === 0) return;
    // Inline content the editor left right in the root is one line: read as one block (wrapInlineRuns).
    if (this.rootDirty && wrapInlineRuns(this.root, this.dialect)) this.collect(this.observer.takeRecords());
    const current = contentNodes(this.root);
    const old = index.nodes;
    let a = 0;
    while (a < old.length && a < current.length && old[a] === current[a] && !this.dirty.has(old[a]!)) a++;
    let e = 0;
    while (e < old.length - a && e < current.length - a && old[old.length - 1 - e] === current[current.length - 1 - e] && !this.dirty.has(old[old.length - 1 - e]!)) e++;
    this.dirty.clear();
    this.rootDirty = false;
    const b = old.length - e;
    const mid = current.slice(a, current.length - e);
    if (a === b && mid.length === 0) return;
    const read = mid.map((n) => this.read(n));
    const mine = read.flat();
    const from = index.counts.slice(0, a).reduce((x, y) => x + y, 0);
    const to = from + index.counts.slice(a, b).reduce((x, y) => x + y, 0);
    const theirs = index.lines.slice(from, to);
    keepCellIds(mine, theirs);
    // The index as the DOM is now: the read nodes in place of the old ones.
    const nodes = [...old.slice(0, a), ...mid, ...old.slice(b)];
    const counts = [...index.counts.slice(0, a), ...read.map((l) => l.length), ...index.counts.slice(b)];
    if (!sameLines(mine, theirs)) {
      const bounds = this.editing
        ? inputBounds(index.lines, from, to, this.editing)
        : insertionBounds(this.root, nodes, counts, [...index.lines.slice(0, from), ...mine, ...index.lines.slice(to)], from, unitsOf(mine) - unitsOf(theirs), unitsOf(mine));
      this.writing = true;
      try {
        replaceLines(ytext, from, to, mine, this, bounds);
      } finally {
        this.writing = false;
      }
    }
    const shown: Block[] = [...this.blocks.slice(0, a), ...read.map(() => ({ count: -1, html: '' })), ...this.blocks.slice(b)];
    this.resync(nodes, counts, shown, null);
  }

  // ---- showing the document ----

  private readonly onText = (event: Y.YTextEvent, txn: Y.Transaction): void => {
    // flush() brings the index up to date itself after its write, also past the formatting cleanup Yjs runs as a
    // transaction of its own right after it (yjs `cleanupYTextAfterTransaction`), while the DOM is ahead of the index.
    if (txn.origin === this || this.writing) return;
    if (this.composition) {
      this.composition.remote = true;
      return;
    }
    const index = this.index;
    if (!index) return;
    this.resync([...index.nodes], [...index.counts], this.blocks, event.delta as Array<{ insert?: unknown; delete?: number; retain?: number }>);
  };

  /** First show of the document (bind): every block rendered. */
  private show(): void {
    const nodes = contentNodes(this.root);
    this.resync(nodes, nodes.map(() => 0), nodes.map(() => ({ count: -1, html: '' })), null, true);
  }

  /**
   * Makes the DOM show the document: `nodes` (the root's content nodes now, node k covering `counts[k]` lines of
   * the document before the change, last shown as `shown[k]`) are patched where the document's blocks differ.
   * `delta`: the remote change, to move the selection through; null for a local write (the DOM already has it).
   */
  private resync(nodes: Node[], counts: number[], shown: Block[], delta: Array<{ insert?: unknown; delete?: number; retain?: number }> | null, all = false): void {
    const ytext = this.ytext!;
    // DOM changes not read yet stay marked for the next flush; only the patch's own records are dropped below.
    if (this.observer) this.collect(this.observer.takeRecords());
    const lines = docLines(ytext);
    // An empty document shows one empty paragraph, which covers no line: what is typed into it is new lines.
    const blocks = lines.length === 0 ? [{ count: 0, html: renderHtml([{ ops: [], attrs: {} }], this.dialect.render) }] : blocksOf(lines, this.dialect.render);
    const ch = all ? { from: 0, to: nodes.length, toAfter: blocks.length } : changedBlocks(shown, blocks);
    const region = nodes.slice(ch.from, ch.to);
    const wanted = blocks.slice(ch.from, ch.toAfter);
    const doc = this.root.ownerDocument;
    const fresh = wanted.length === 0 ? [] : nodesOf(wanted.map((w) => w.html).join(''), doc);
    const same = fresh.length === region.length && fresh.every((f, i) => domHtml(f, this.dialect) === domHtml(region[i]!, this.dialect));
    let result = region;
    if (!same) {
      // The selection, as a text index in the document as these nodes show it, moved through the remote change.
      const sel = all ? null : selectionIn(this.root, new LineIndex(this.root, nodes, counts, delta ? (this.index?.lines ?? []) : lines, EDITOR_DIALECT), region);
      // New nodes at the end go right after the last content node, before the editor's own ("Powered by").
      const last = nodes[nodes.length - 1];
      const at = ch.to < nodes.length ? nodes[ch.to]! : last ? last.nextSibling : this.root.firstChild;
      result = patchNodes(this.root, region, fresh, at, this.dialect);
      this.observer?.takeRecords();
      const finalNodes = [...nodes.slice(0, ch.from), ...result, ...nodes.slice(ch.to)];
      this.index = new LineIndex(this.root, finalNodes, blocks.map((bl) => bl.count), lines, EDITOR_DIALECT);
      if (sel) restoreSelection(this.root, this.index, delta ? { a: transformIndex(sel.a, delta), b: transformIndex(sel.b, delta) } : sel);
      this.host.contentUpdated();
    } else {
      this.index = new LineIndex(this.root, [...nodes.slice(0, ch.from), ...region, ...nodes.slice(ch.to)], blocks.map((bl) => bl.count), lines, EDITOR_DIALECT);
    }
    this.blocks = blocks;
    this.tagRows(ch.from, ch.toAfter);
    this.repair?.check();
  }

  /** Gives each shown `<tr>` of blocks `from..to` its row's id, for the parser (`read`). */
  private tagRows(from: number, to: number): void {
    const index = this.index!;
    for (let k = from; k < to; k++) {
      const node = index.nodes[k];
      if (!node || !isElement(node) || !node.querySelector('tr')) continue;
      const ids: string[] = [];
      for (const l of index.linesOf(k)) {
        const id = l.attrs['table'];
        if (typeof id === 'string' && ids[ids.length - 1] !== id) ids.push(id);
      }
      const rows = Array.from(node.querySelectorAll('tr')).filter((tr) => !tr.parentElement?.closest('td, th, li'));
      rows.forEach((tr, i) => {
        if (ids[i] !== undefined) this.rowIds.set(tr, ids[i]!);
      });
    }
  }

  // ---- IME ----

  private readonly onCompositionStart = (): void => {
    this.flush();
    const sel = this.root.ownerDocument.getSelection();
    const index = this.index;
    const ytext = this.ytext;
    const top = sel?.anchorNode ? topOf(this.root, sel.anchorNode) : null;
    const k = top && index ? index.nodes.indexOf(top) : -1;
    if (!ytext || !index || !sel?.anchorNode || k < 0) {
      this.composition = { top: null, before: [], caret: null, caretOffset: 0, remote: false };
      return;
    }
    const caret = index.indexOf(sel.anchorNode, sel.anchorOffset) ?? 0;
    const start = index.indexOf(top!, 0) ?? 0;
    this.composition = {
      top,
      before: index.linesOf(k),
      caret: Y.createRelativePositionFromTypeIndex(ytext, caret),
      caretOffset: caret - start,
      remote: false,
    };
  };

  private readonly onCompositionEnd = (): void => {
    const c = this.composition;
    this.composition = null;
    const ytext = this.ytext;
    const index = this.index;
    if (!c || !ytext || !index) return;
    if (!c.remote) {
      this.flush();
      return;
    }
    // Peers changed the document meanwhile: the index no longer matches it. The composed splice is written where
    // it began, then everything is shown as the document has it.
    this.writing = true;
    let caret: number | null = null;
    try {
      if (c.top && c.caret && c.top.parentNode === this.root) caret = writeSplice(ytext, c.before, this.read(c.top), c.caret, c.caretOffset, this);
    } finally {
      this.writing = false;
    }
    this.observer?.takeRecords();
    this.dirty.clear();
    this.rootDirty = false;
    this.show();
    if (caret !== null) restoreSelection(this.root, this.index, { a: caret, b: caret });
  };
}
