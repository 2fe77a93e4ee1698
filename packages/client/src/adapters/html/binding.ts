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
import { docLines, EDITOR_DIALECT, parseHtml, randomId, replaceLines, RICHTEXT_TYPE, type EditBounds, type HtmlNode, type Line } from 'wave-richtext';
import { invalidConfig } from '../../core/errors.js';
import type { LocalUndo } from '../../core/undo.js';
import type { EditorAdapter } from '../types.js';
import { htmlPresence } from '../../presence/host-html.js';
import type { PresenceHost } from '../../presence/types.js';
import { blocksOf, changedBlocks, type Block } from './blocks.js';
import { contentNodes, domHtml, isElement, morph, nodesOf, topOf, type EditorDialect } from './dom.js';
import type { RichTextHost, UndoState } from './host.js';
import { LineIndex, transformIndex } from './index-map.js';
import { keepCellIds, sameLines, writeSplice } from './lines-diff.js';
import { linesOfNode, unitsOf } from './points.js';
import { RepairWriter } from './repair.js';

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
  /** The selection an `input` is about to replace, as text indices: bounds for its diff. */
  private editing: { from: number; to: number } | null = null;
  private composition: Composition | null = null;
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
    this.show(null);
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
    if (awareness) this.repair = new RepairWriter(ytext, awareness, () => this.readOnly);
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

  private readonly onBeforeInput = (): void => {
    this.flush();
    const sel = this.root.ownerDocument.getSelection();
    const a = sel?.anchorNode ? this.index?.indexOf(sel.anchorNode, sel.anchorOffset) : null;
    const b = sel?.focusNode ? this.index?.indexOf(sel.focusNode, sel.focusOffset) : null;
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
    if (!sameLines(mine, theirs)) replaceLines(ytext, from, to, mine, this, this.bounds(index, from, to));
    // The index as the DOM is now: the read nodes in place of the old ones.
    const nodes = [...old.slice(0, a), ...mid, ...old.slice(b)];
    const counts = [...index.counts.slice(0, a), ...read.map((l) => l.length), ...index.counts.slice(b)];
    const shown: Block[] = [...this.blocks.slice(0, a), ...read.map(() => ({ count: -1, html: '' })), ...this.blocks.slice(b)];
    this.resync(nodes, counts, shown, null);
  }

  /** Diff bounds from the selection the edit replaced, when it lies in the written range. */
  private bounds(index: LineIndex, from: number, to: number): EditBounds {
    const sel = this.editing;
    if (!sel) return {};
    const lines = index.lines;
    let start = 0;
    for (let i = 0; i < from; i++) start += unitsOf([lines[i]!]);
    const end = start + unitsOf(lines.slice(from, to));
    if (sel.from < start || sel.to > end) return {};
    return { maxPrefix: sel.from - start, maxSuffix: end - sel.to };
  }

  // ---- showing the document ----

  private readonly onText = (event: Y.YTextEvent, txn: Y.Transaction): void => {
    if (txn.origin === this) return; // flush() brings the index up to date itself
    if (this.composition) {
      this.composition.remote = true;
      return;
    }
    const index = this.index;
    if (!index) return;
    this.resync([...index.nodes], [...index.counts], this.blocks, event.delta as Array<{ insert?: unknown; delete?: number; retain?: number }>);
  };

  /** First show of the document (bind): every block rendered. */
  private show(delta: null): void {
    const nodes = contentNodes(this.root);
    this.resync(nodes, nodes.map(() => 0), nodes.map(() => ({ count: -1, html: '' })), delta, true);
  }

  /**
   * Makes the DOM show the document: `nodes` (the root's content nodes now, node k covering `counts[k]` lines of
   * the document before the change, last shown as `shown[k]`) are patched where the document's blocks differ.
   * `delta`: the remote change, to move the selection through; null for a local write (the DOM already has it).
   */
  private resync(nodes: Node[], counts: number[], shown: Block[], delta: Array<{ insert?: unknown; delete?: number; retain?: number }> | null, all = false): void {
    const ytext = this.ytext!;
    const lines = docLines(ytext);
    const blocks = lines.length === 0 ? [{ count: 0, html: this.emptyHtml() }] : blocksOf(lines, this.dialect.render);
    const ch = all ? { from: 0, to: nodes.length, toAfter: blocks.length } : changedBlocks(shown, blocks);
    const region = nodes.slice(ch.from, ch.to);
    const wanted = blocks.slice(ch.from, ch.toAfter);
    const doc = this.root.ownerDocument;
    const fresh = wanted.length === 0 ? [] : nodesOf(wanted.map((w) => w.html).join(''), doc);
    const same = fresh.length === region.length && fresh.every((f, i) => domHtml(f, this.dialect) === domHtml(region[i]!, this.dialect));
    let result = region;
    if (!same) {
      // The selection, as a text index in the document as these nodes show it, moved through the remote change.
      const sel = all ? null : this.selectionIn(new LineIndex(this.root, nodes, counts, delta ? (this.index?.lines ?? []) : lines, EDITOR_DIALECT), region);
      const at = ch.to < nodes.length ? nodes[ch.to]! : this.trailer(region);
      result = this.patch(region, fresh, at);
      this.observer?.takeRecords();
      const finalNodes = [...nodes.slice(0, ch.from), ...result, ...nodes.slice(ch.to)];
      this.index = new LineIndex(this.root, finalNodes, blocks.map((bl) => bl.count), lines, EDITOR_DIALECT);
      if (sel) this.restore(delta ? { a: transformIndex(sel.a, delta), b: transformIndex(sel.b, delta) } : sel);
      this.host.contentUpdated();
    } else {
      this.index = new LineIndex(this.root, [...nodes.slice(0, ch.from), ...region, ...nodes.slice(ch.to)], blocks.map((bl) => bl.count), lines, EDITOR_DIALECT);
    }
    this.blocks = blocks;
    this.tagRows(ch.from, ch.toAfter);
    this.repair?.check();
  }

  private emptyHtml(): string {
    return this.dialect.render.placeholder ? `<p><br${Object.entries(this.dialect.render.placeholder).map(([k, v]) => ` ${k}="${v}"`).join('')}></p>` : '<p><br></p>';
  }

  /** Where new nodes go when the region is at the end: before the editor's own trailing nodes ("Powered by"). */
  private trailer(region: Node[]): Node | null {
    const last = region[region.length - 1];
    if (last) return last.nextSibling;
    const nodes = this.index?.nodes ?? [];
    const prev = nodes[nodes.length - 1];
    return prev ? prev.nextSibling : this.root.firstChild;
  }

  /** Turns `region` (live nodes) into `fresh` (rendered): same-tag pairs are morphed, the rest replaced. */
  private patch(region: Node[], fresh: Node[], at: Node | null): Node[] {
    const out: Node[] = [];
    const parent = this.root;
    let k = 0;
    for (; k < fresh.length; k++) {
      const f = fresh[k]!;
      const t = region[k];
      if (t && isElement(t) && isElement(f) && t.localName === f.localName) {
        morph(t, f, this.dialect);
        out.push(t);
      } else {
        parent.insertBefore(f, t ?? (at && at.parentNode === parent ? at : null));
        if (t) parent.removeChild(t);
        out.push(f);
      }
    }
    for (; k < region.length; k++) region[k]!.parentNode?.removeChild(region[k]!);
    return out;
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

  /** The DOM selection as text indices, when it is in the editor and touches `region` (or the editor is focused). */
  private selectionIn(index: LineIndex, region: Node[]): { a: number; b: number } | null {
    const sel = this.root.ownerDocument.getSelection();
    if (!sel?.anchorNode || !sel.focusNode || !this.root.contains(sel.anchorNode) || !this.root.contains(sel.focusNode)) return null;
    const tops = [topOf(this.root, sel.anchorNode), topOf(this.root, sel.focusNode)];
    if (!tops.some((t) => t === null || region.includes(t)) && sel.anchorNode !== this.root && sel.focusNode !== this.root) return null;
    const a = index.indexOf(sel.anchorNode, sel.anchorOffset);
    const b = index.indexOf(sel.focusNode, sel.focusOffset);
    return a === null || b === null ? null : { a, b };
  }

  private restore(sel: { a: number; b: number }): void {
    const a = this.index?.pointOf(sel.a);
    const b = sel.b === sel.a ? a : this.index?.pointOf(sel.b);
    if (!a || !b) return;
    try {
      this.root.ownerDocument.getSelection()?.setBaseAndExtent(a.node, a.offset, b.node, b.offset);
    } catch {
      /* a point the browser refuses: the selection stays where the patch left it */
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
    const caret = c.top && c.caret && c.top.parentNode === this.root ? writeSplice(ytext, c.before, this.read(c.top), c.caret, c.caretOffset, this) : null;
    this.observer?.takeRecords();
    this.dirty.clear();
    this.rootDirty = false;
    this.show(null);
    if (caret !== null) this.restore({ a: caret, b: caret });
  };
}
