/**
 * The HTML adapter core shared by Froala (A) and TinyMCE (D): binds a contenteditable root to the shared
 * `Y.XmlFragment('html')`.
 *
 * Local edits: a MutationObserver marks the top-level blocks that changed (the editor's change events only ask
 * for the same flush); those blocks are re-read through the normaliser and the document is updated with a
 * minimal tree and text diff in one transaction whose origin is this binding. Blocks whose new content the
 * editor spells differently from the canonical rendering are re-rendered once — only after a write, so an
 * editor that insists on its own spelling cannot start a loop (the model did not change the second time).
 *
 * Remote edits (and undo/redo, whose origin is the undo manager): only the top-level blocks that changed are
 * patched, element by element; the local selection is recorded as Yjs relative positions before the foreign
 * transaction and restored after.
 *
 * IME and key presses: while a composition is open, or a key other than Enter is down (keydown → keyup), nothing
 * is written and the block under the caret is not patched; at the end the typed or composed text is applied at the
 * relative position where it began (so remote edits that arrived meanwhile are kept), then the block is shown as
 * the document has it. When that text is not one splice of one run, the editor's version of the block wins.
 *
 * Typing a peer's write took away: Yjs has no move, so a peer that restructures blocks (indents a list item, splits
 * or merges paragraphs) deletes nodes and re-creates their text elsewhere. What this user typed there concurrently
 * would stay in the deleted node, or behind in the old place; `successor.ts` finds where the text went, this
 * binding puts its own characters there (never a peer's: only their author moves them) and moves the caret along.
 *
 * Undo: the session's `LocalUndo` tracks this binding as origin; the editor's own undo/redo are routed to it, and
 * its transactions are patched into the DOM like remote ones.
 */
import * as Y from 'yjs';
import type { Awareness } from 'y-protocols/awareness';
import type { EditorKind } from '../../core/config.js';
import { invalidConfig } from '../../core/errors.js';
import type { LocalUndo } from '../../core/undo.js';
import type { EditorAdapter } from '../types.js';
import { htmlPresence } from '../../presence/host-html.js';
import type { PresenceHost } from '../../presence/types.js';
import { domHtml, isBlockNode, isElement, isText, morph, readNodes, renderDom, type EditorDialect } from './dom.js';
import { plainText, type MElement, type MNode, type MText } from './model.js';
import { isEmptyParagraph } from './normalize.js';
import { pointToModel, textsOf } from './selection.js';
import { caretText, recordUpdates, tid, trace, traceOn } from './trace.js';
import { Removal } from './successor.js';
import { Positions, topOf, type Saved, type YPoint } from './positions.js';
import { writeTyping } from './typing.js';
import { Copies, dropCopies, liveOwnText, sameOwnPlace, type CopyPair } from './copies.js';
import { dropChars, TextCopies } from './textcopies.js';
import { updateDeleteSet, type DeleteSet } from '../../core/remote-update.js';
import { buildY, HTML_TYPE, keyOf, modelOfY, syncChildren, type YNode } from './ydoc.js';

/** What one editor offers the core: its contenteditable root, its dialect and its events. */
export interface RichTextHost {
  readonly kind: EditorKind;
  /** The contenteditable element holding the content (TinyMCE: the iframe's body). */
  readonly root: HTMLElement;
  /** Where presence UI is placed. */
  readonly container: HTMLElement;
  readonly dialect: EditorDialect;
  /** Subscribes `onChange` to the editor's change events; returns the unsubscribe function. */
  listen(onChange: () => void): () => void;
  /** Routes the editor's undo and redo (keys, toolbar, commands) to `undo`/`redo`; returns the function that gives them back. */
  takeOverUndo(undo: () => void, redo: () => void, state: UndoState): () => void;
  /** Tells the editor that Wave changed its content (refresh placeholder, toolbar state…). */
  contentUpdated(): void;
  /** The editor's own read-only switch (Froala `edit.off()`, TinyMCE `mode.set('readonly')`). */
  setReadOnly?(readOnly: boolean): void;
}

/** Whether undo and redo have anything to do, for the editor's toolbar buttons. */
export interface UndoState {
  canUndo(): boolean;
  canRedo(): boolean;
}

interface Entry {
  /** The top-level Y node. */
  y: YNode;
  /** Canonical HTML of its block when in normal form; a key nothing equals otherwise. */
  key: string;
  /** Its block when the Y node is in normal form. */
  model: MElement | null;
  /** What it shows (normalised). */
  blocks: MElement[];
  /** Its top-level DOM nodes in the editor (empty when it shows nothing or is not placed yet). */
  doms: Node[];
}

/** A key press or IME composition in progress (see `HtmlBinding.composing`). */
interface Composing {
  /** The top-level DOM node it began in. */
  top: Node | null;
  /** That node's entry, as it was when it began (its `model` is the block before the typing). */
  entry: Entry | null;
  /** Where it began in the document. */
  start: YPoint | null;
  key: boolean;
  /**
   * Where its typing belongs after a peer's write moved the text it began in (`rescue`); `start.rel` still points
   * into the old text.
   */
  moved: Y.RelativePosition | null;
  /** `moved ?? start` as a text and an offset in it, just before the remote transaction being applied. */
  before: { text: Y.XmlText; offset: number } | null;
}

/** Quiet time after a local edit before its blocks get their second canonical check (see `settle`). */
const SETTLE_MS = 400;

/** Longest a key press may hold the block under the caret if its keyup never arrives (auto-repeat re-arms it). */
const KEY_HOLD_MS = 1_000;

/** How long a peer's insertion counts as where that peer is typing (ms; a few keystrokes and a round trip). */
const RECENT_TYPING_MS = 1_500;
/** At most this many recent insertions are remembered (a paste of many runs counts once per run). */
const RECENT_TYPING_MAX = 32;
/**
 * How long this user's own writes count as possibly not yet seen by a peer whose write arrives now (ms; a few round
 * trips): such characters left at the edge of a text the peer moved were not part of what it moved (`successor.ts`).
 */
const UNSEEN_OWN_MS = 1_500;

/** Origin of the one-time write-back of content the binding itself normalised (not an undoable user edit). */
const NORMALIZE_ORIGIN = Symbol('wave-html-normalize');
/**
 * Origin of putting back this user's typing that a peer's write deleted with its node, or left stranded when it moved
 * the text around it (see `successor.ts`).
 */
const RESCUE_ORIGIN = Symbol('wave-html-rescue');
/**
 * Origin of deleting a second copy of what this user and a peer moved at the same time (see `copies.ts`,
 * `textcopies.ts`). Not undoable: an undo would bring the second copy back.
 */
const COPY_ORIGIN = Symbol('wave-html-copy');

const OBSERVE: MutationObserverInit = {
  childList: true,
  characterData: true,
  subtree: true,
  attributes: true,
  // Only attributes the schema keeps; editors flip many others (selection state, drag handles) all the time.
  attributeFilter: ['href', 'src', 'alt', 'width', 'height', 'style', 'class', 'colspan', 'rowspan', 'scope', 'border', 'span', 'start', 'type'],
};

let uniqueKey = 0;

export class RichTextBinding implements EditorAdapter {
  private doc: Y.Doc | null = null;
  private frag: Y.XmlFragment | null = null;
  private entries: Entry[] = [];
  private readonly byY = new Map<YNode, Entry>();
  private readonly byDom = new Map<Node, Entry>();
  /** Top-level nodes edited locally since the editor last went quiet, and the timer of that moment. */
  private readonly settling = new Set<Node>();
  private settleTimer: ReturnType<typeof setTimeout> | null = null;
  /** The content key each top-level DOM node was re-checked for once the editor went quiet. */
  private settled = new WeakMap<Node, string>();
  /** The content key each top-level DOM node was last found (or made) canonical for, while it has not changed since. */
  private checked = new WeakMap<Node, string>();
  /**
   * Per top-level DOM node, the spellings of one content (its key) that were already re-rendered once: an editor
   * that puts the same spelling back is then left alone, so the two can never loop. Forgotten once the node is
   * found canonical again (the editor let the re-render stand).
   */
  private respelled = new WeakMap<Node, { key: string; seen: Set<string> }>();
  /** Where peers inserted text in the last RECENT_TYPING_MS (see `noteRemoteTyping`). */
  private recentTyping: Array<{ rel: Y.RelativePosition; at: number }> = [];
  /** This user's transactions in the last UNSEEN_OWN_MS: when each began and its client's clock then (`ownRecent`). */
  private ownWrites: Array<{ at: number; clock: number }> = [];
  /** Blocks read from a top-level DOM node that has not changed since. */
  private cache = new WeakMap<Node, MElement[]>();
  /** Top-level nodes changed since the last flush (the root itself when its child list changed). */
  private readonly dirty = new Set<Node>();
  /**
   * Top-level nodes the editor added, and removed, since the last flush. During a key press or composition nothing
   * is written, and they are the user's unwritten edit (a paste made while Shift was held, Ctrl+Shift+V, replaces
   * the paragraph with new ones): `place` leaves the added nodes where the editor put them and does not put the
   * removed ones back, until the key press ends and the edit is written.
   */
  private readonly editorAdded = new Set<Node>();
  private readonly editorRemoved = new Set<Node>();
  private observer: MutationObserver | null = null;
  /**
   * An IME composition, or a key press (keydown → keyup), is in progress: the block under the caret is not
   * patched and nothing is written until it ends. Editors keep state across the two events of a key press
   * (TinyMCE re-spells spaces at keyup from what it saw at keydown), so a remote patch in between would be undone.
   */
  private composing: Composing | null = null;
  private keyTimer: ReturnType<typeof setTimeout> | null = null;
  /** Top-level Y nodes changed remotely while their block was under composition. */
  private readonly deferred = new Set<YNode>();
  /**
   * Top-level Y nodes changed remotely while their block was not patched (composition, or an unwritten local edit).
   * When such a block is then written from the DOM, the document merges both edits and the DOM lacks the remote
   * one: `showDocumentVersion` shows it the document's version.
   */
  private readonly staleY = new Set<YNode>();
  private saved: Saved | null = null;
  /**
   * The selection a rescue moved, restored by the patch of the rescue's own transaction. Not kept in `saved`: a
   * transaction begun in between (any other origin) captures the selection there, still in the old place.
   */
  private rescueSaved: Saved | null = null;
  /** Blocks this user's writes moved, and peers' new blocks, to find a peer's concurrent copy of a moved block. */
  private readonly copies = new Copies(() => this.doc?.clientID ?? 0);
  private readonly textCopies = new TextCopies(() => this.doc?.clientID ?? 0);
  /** Local DOM changes were still unwritten when a foreign transaction began: they win in their blocks. */
  private localPending = false;
  private cleanups: Array<() => void> = [];
  /** Collaborators' carets (their awareness `cursor`), to keep a split paragraph's Y node where they type. */
  private awareness: Awareness | null = null;

  private readonly positions: Positions;

  constructor(private readonly host: RichTextHost) {
    this.positions = new Positions({
      get root() {
        return host.root;
      },
      get dialect() {
        return host.dialect;
      },
      fragment: () => this.frag,
      placedByDom: (top) => this.byDom.get(top),
      placedByY: (y) => this.byY.get(y),
    });
  }

  setReadOnly(readOnly: boolean): void {
    this.host.setReadOnly?.(readOnly);
  }

  get kind(): EditorKind {
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

  createPresence(): PresenceHost {
    return htmlPresence(this.root, this.host.container, {
      selection: () => {
        const sel = this.doc ? this.root.ownerDocument.getSelection() : null;
        if (!sel?.anchorNode || !sel.focusNode || !this.root.contains(sel.anchorNode) || !this.root.contains(sel.focusNode)) return null;
        const anchor = this.positions.publishedPoint(sel.anchorNode, sel.anchorOffset);
        const head = this.positions.publishedPoint(sel.focusNode, sel.focusOffset);
        return anchor && head ? { anchor, head } : null;
      },
      toDom: (rel) => this.positions.yToDom(rel),
    });
  }

  seed(doc: Y.Doc): void {
    const blocks = this.readAll().flatMap((u) => u.blocks);
    const content = blocks.length === 1 && isEmptyParagraph(blocks[0]!) ? [] : blocks;
    if (content.length > 0) doc.getXmlFragment(HTML_TYPE).insert(0, content.map(buildY));
  }

  /** Session hook before a remote update: DOM edits the MutationObserver has not delivered yet are written now. */
  flushLocal(): void {
    if (this.frag && !this.composing) this.flush();
  }

  /**
   * `forceSync(content)`: `content` is an HTML string, read like pasted HTML — parsed in an inert document (no
   * script runs, no image loads), sanitised and normalised by the same schema as the editor's own DOM.
   * Throws `invalid_config` for anything but a string.
   */
  replaceContent(doc: Y.Doc, content: unknown): void {
    if (typeof content !== 'string') throw invalidConfig('forceSync(content)', `an HTML string for app '${this.kind}'`, content);
    // DOMParser's document has scripting disabled and loads nothing (an image's onerror never even fires).
    const Parser = this.root.ownerDocument.defaultView?.DOMParser ?? DOMParser;
    const inert = new Parser().parseFromString(content, 'text/html');
    const blocks = readNodes(Array.from(inert.body.childNodes), inert.body, this.dialect);
    const frag = doc.getXmlFragment(HTML_TYPE);
    frag.delete(0, frag.length);
    const kept = blocks.length === 1 && isEmptyParagraph(blocks[0]!) ? [] : blocks;
    if (kept.length > 0) frag.insert(0, kept.map(buildY));
  }

  bind(doc: Y.Doc, awareness?: Awareness, undo?: LocalUndo): void {
    this.unbind();
    this.doc = doc;
    this.awareness = awareness ?? null;
    const frag = doc.getXmlFragment(HTML_TYPE);
    this.frag = frag;
    this.showDocument();

    const observer = new MutationObserver((records) => {
      this.collect(records);
      if (!this.composing) this.flush();
    });
    observer.observe(this.root, OBSERVE);
    this.observer = observer;
    frag.observeDeep(this.onDeep);
    doc.on('beforeTransaction', this.onBeforeTransaction);
    const unrecord = recordUpdates(doc);
    this.root.addEventListener('compositionstart', this.onCompositionStart);
    this.root.addEventListener('compositionend', this.onCompositionEnd);
    this.root.addEventListener('keydown', this.onKeyDown);
    this.root.addEventListener('keyup', this.onKeyUp);
    this.root.addEventListener('blur', this.onKeyUp);
    const unlisten = this.host.listen(() => {
      if (!this.composing) this.flush();
    });
    this.cleanups.push(() => {
      observer.disconnect();
      frag.unobserveDeep(this.onDeep);
      doc.off('beforeTransaction', this.onBeforeTransaction);
      unrecord();
      this.root.removeEventListener('compositionstart', this.onCompositionStart);
      this.root.removeEventListener('compositionend', this.onCompositionEnd);
      this.root.removeEventListener('keydown', this.onKeyDown);
      this.root.removeEventListener('keyup', this.onKeyUp);
      this.root.removeEventListener('blur', this.onKeyUp);
      if (this.keyTimer !== null) clearTimeout(this.keyTimer);
      if (this.settleTimer !== null) clearTimeout(this.settleTimer);
      this.settleTimer = null;
      this.settling.clear();
      unlisten();
    });
    if (undo) {
      this.cleanups.push(undo.track(this));
      // Typing put back after a peer's write deleted it is still this user's, to undo like the rest.
      this.cleanups.push(undo.track(RESCUE_ORIGIN));
      this.cleanups.push(
        this.host.takeOverUndo(
          () => {
            this.flush();
            const step = undo.undoStep();
            if (step) this.dropRestoredCopies(step.deletions);
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
    // If the editor re-spelled what was just shown, the document takes its normal form once.
    this.flush(NORMALIZE_ORIGIN);
  }

  unbind(): void {
    for (const cleanup of this.cleanups.splice(0).reverse()) cleanup();
    this.observer = null;
    this.doc = null;
    this.awareness = null;
    this.frag = null;
    this.entries = [];
    this.byY.clear();
    this.byDom.clear();
    this.dirty.clear();
    this.deferred.clear();
    this.staleY.clear();
    this.composing = null;
    this.saved = null;
    this.rescueSaved = null;
    this.localPending = false;
    this.cache = new WeakMap();
    this.checked = new WeakMap();
    this.respelled = new WeakMap();
    this.recentTyping = [];
    this.ownWrites = [];
    this.settled = new WeakMap();
  }

  destroy(): void {
    this.unbind();
  }

  // ---- reading the DOM ----

  private collect(records: readonly MutationRecord[]): void {
    for (const record of records) {
      if (record.target === this.root) {
        this.dirty.add(this.root);
        for (const n of record.removedNodes) if (!this.editorAdded.delete(n)) this.editorRemoved.add(n);
        for (const n of record.addedNodes) {
          this.editorRemoved.delete(n);
          this.editorAdded.add(n);
        }
        continue;
      }
      const top = topOf(this.root, record.target);
      if (top) {
        this.dirty.add(top);
        this.cache.delete(top);
        // Changed by the editor: its spelling is checked again, even when its content turns out the same.
        this.checked.delete(top);
      }
    }
  }

  /** The content as groups of top-level DOM nodes and the blocks each holds (cached per unchanged block). */
  private readAll(): Array<{ nodes: Node[]; blocks: MElement[] }> {
    const root = this.root;
    const d = this.dialect;
    const units: Array<{ nodes: Node[]; blocks: MElement[] }> = [];
    let loose: Node[] = [];
    const flushLoose = () => {
      if (loose.length > 0) units.push({ nodes: loose, blocks: readNodes(loose, root, d) });
      loose = [];
    };
    for (let c = root.firstChild; c; c = c.nextSibling) {
      if (isElement(c) && d.skip(c)) continue;
      if (isBlockNode(c)) {
        flushLoose();
        let blocks = this.cache.get(c);
        if (!blocks || this.dirty.has(c)) {
          blocks = readNodes([c], root, d);
          this.cache.set(c, blocks);
        }
        units.push({ nodes: [c], blocks });
      } else if (loose.length === 0 && isText(c) && /^[ \t\n\r]*$/.test(c.data)) {
        continue;
      } else loose.push(c);
    }
    flushLoose();
    return units;
  }

  // ---- local edits ----

  private flush(origin: unknown = this): void {
    const frag = this.frag;
    const doc = this.doc;
    if (!frag || !doc || this.composing) return;
    if (this.observer) this.collect(this.observer.takeRecords());
    if (this.dirty.size === 0 && origin !== NORMALIZE_ORIGIN) return;
    const units = this.readAll();
    this.editorAdded.clear();
    this.editorRemoved.clear();
    for (const n of this.dirty) this.settling.add(n);
    this.scheduleSettle();
    this.dirty.clear();
    this.scrub(units);
    let items = units.flatMap((unit) => unit.blocks.map((block) => ({ block, unit })));
    if (items.length === 1 && isEmptyParagraph(items[0]!.block)) items = [];
    const keys = items.map((it) => keyOf(it.block));
    const entries = this.entries;
    const single = (it: { unit: { nodes: Node[]; blocks: MElement[] } }) => it.unit.nodes.length === 1 && it.unit.blocks.length === 1;
    if (keys.length === entries.length && keys.every((k, i) => k === entries[i]!.key)) {
      // Same content (the editor rebuilt or re-spelled a block): only the DOM nodes may be new.
      items.forEach((it, i) => {
        if (single(it)) entries[i]!.doms = it.unit.nodes;
      });
      this.index();
      // A remote edit deferred for this (unchanged) DOM is still to be shown.
      this.showDocumentVersion(entries.filter((e) => this.staleY.has(e.y)));
      this.canonicalize(items.map((it) => it.unit));
      return;
    }
    const caret = this.caretHint(items.map((it) => it.block));
    let held: Map<YNode, number[]> | null = null; // computed only when a changed block needs pairing
    let ys: YNode[] = [];
    doc.transact(() => {
      ys = syncChildren(
        frag,
        'root',
        items.map((it) => it.block),
        {
          caret,
          sameHint: (i, j) => {
            const e = entries[i]!;
            const it = items[j]!;
            return e.doms.length === 1 && it.unit.nodes.length === 1 && e.doms[0] === it.unit.nodes[0];
          },
          heldIn: (y) => (held ??= this.collaboratorCarets()).get(y) ?? [],
        },
        entries.map((e) => ({ y: e.y, key: e.key, model: e.model })),
      );
    }, origin);
    const before = new Map(entries.map((e) => [e.y, e.key]));
    trace('write', () => ys.map((y, j) => (before.get(y) === keys[j] ? '' : `${tid(y)}${before.has(y) ? '' : '+'}=${keys[j]}`)).filter(Boolean).join(' '));
    this.entries = items.map((it, j) => ({
      y: ys[j]!,
      key: keys[j]!,
      model: it.block,
      blocks: [it.block],
      doms: single(it) ? it.unit.nodes : [],
    }));
    this.index();
    // Blocks this write changed are read back from the document: what it holds can differ from what was read from
    // the DOM (a deferred remote edit merged in, or markup the schema keeps in the DOM reading but drops on the
    // way into Y, such as a link without href), and every peer shows the document's version.
    this.showDocumentVersion(this.entries.filter((e) => before.get(e.y) !== e.key || this.staleY.has(e.y)));
    this.canonicalize(items.map((it) => it.unit));
    // A peer's copy of a block this write moved may have arrived just before it.
    this.dropCopies();
  }

  /**
   * Re-renders those of `candidates` whose DOM does not show what their Y node holds (keeping the selection), so
   * that this editor shows exactly what every peer shows. Without it the editor would keep its own version.
   */
  private showDocumentVersion(candidates: readonly Entry[]): void {
    let saved: Saved | null | undefined;
    for (const entry of candidates) {
      if (entry.doms.length !== 1 || this.isComposingIn(entry)) continue;
      this.staleY.delete(entry.y);
      const fresh = this.entryFromY(entry.y);
      if (fresh.key === entry.key) continue;
      if (saved === undefined) saved = this.positions.captureSelection();
      trace('show-doc', () => `${tid(entry.y)}: ${entry.key} -> ${fresh.key}`);
      fresh.doms = entry.doms;
      this.patchNodes(fresh, renderDom(fresh.blocks, this.root.ownerDocument, this.dialect));
      this.entries = this.entries.map((e) => (e === entry ? fresh : e));
      for (const n of fresh.doms) {
        this.cache.set(n, fresh.blocks);
        this.checked.set(n, fresh.key);
      }
    }
    // Nodes no longer in the document (replaced by a write) have nothing left to show.
    for (const y of this.staleY) if (!this.byY.has(y)) this.staleY.delete(y);
    if (saved === undefined) return;
    this.index();
    if (saved) this.positions.restoreSelection(saved);
    this.dropOwnRecords('show-doc');
    this.host.contentUpdated();
  }

  private scheduleSettle(): void {
    if (this.settleTimer !== null) clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => {
      this.settleTimer = null;
      this.settle();
    }, SETTLE_MS);
  }

  /**
   * Once the editor is quiet, blocks edited since are compared with their canonical spelling once more: an editor
   * command can leave markup the document does not keep (a link element without href) after the first check. At
   * most once per block and content, so an editor that insists cannot start a loop.
   */
  private settle(): void {
    if (!this.frag || this.composing) return;
    this.flush();
    const d = this.dialect;
    const doc = this.root.ownerDocument;
    let saved: Saved | null = null;
    for (const entry of this.entries) {
      const dom = entry.doms[0];
      if (entry.doms.length !== 1 || !dom || !this.settling.has(dom) || this.settled.get(dom) === entry.key) continue;
      this.settled.set(dom, entry.key);
      const fresh = renderDom(entry.blocks, doc, d);
      if (fresh.length === 1 && domHtml(dom, d) === domHtml(fresh[0]!, d)) continue;
      saved ??= this.positions.captureSelection();
      trace('settle', () => `${tid(entry.y)}: dom ${domHtml(dom, d)} -> ${entry.key}`);
      this.patchNodes(entry, fresh);
      for (const n of entry.doms) {
        this.checked.set(n, entry.key);
        this.settled.set(n, entry.key);
      }
    }
    this.settling.clear();
    if (saved === null) return;
    this.index();
    this.positions.restoreSelection(saved);
    this.dropOwnRecords('settle');
  }

  /**
   * Removes top-level nodes that hold nothing the document keeps but markup (a `<noscript>`, an `<iframe>` the
   * editor let through): the sanitiser dropped them, so they must not stay in this editor either.
   */
  private scrub(units: ReadonlyArray<{ nodes: Node[]; blocks: MElement[] }>): void {
    const hasContent = units.some((u) => u.blocks.length > 0);
    for (const unit of units) {
      if (unit.blocks.length > 0) continue;
      // A lone <br> may be the editor's own placeholder in an empty editor; next to content it is debris.
      if (!hasContent && !unit.nodes.some((n) => isElement(n) && n.localName.toLowerCase() !== 'br')) continue;
      for (const n of unit.nodes) n.parentNode?.removeChild(n);
    }
  }

  /**
   * Re-renders blocks whose DOM is not the canonical spelling of their content, so that every peer shows the same
   * HTML and nothing the sanitiser dropped (an event handler, an iframe) stays even in the local editor. A DOM block
   * is checked when its content or its DOM changed (an editor may re-spell spaces without changing content), and
   * each spelling of one content is re-rendered once: an editor that puts the same spelling back is left alone
   * until the content changes, so the two can never loop.
   */
  private canonicalize(units: ReadonlyArray<{ nodes: Node[]; blocks: MElement[] }>): void {
    const d = this.dialect;
    const doc = this.root.ownerDocument;
    let saved: Saved | null = null;
    const save = () => (saved ??= this.positions.captureSelection());
    const done = new Set<object>();
    this.entries.forEach((entry, j) => {
      const unit = units[j]!;
      if (entry.doms.length === 0) {
        if (done.has(unit)) return;
        done.add(unit);
        // Loose inline content or a node holding several blocks: replaced by one node per block.
        save();
        const group = this.entries.filter((_, k) => units[k] === unit);
        const anchor = unit.nodes[0] ?? null;
        for (const e of group) {
          e.doms = renderDom(e.blocks, doc, d);
          for (const n of e.doms) this.root.insertBefore(n, anchor);
        }
        for (const n of unit.nodes) n.parentNode?.removeChild(n);
        return;
      }
      const dom = entry.doms[0]!;
      if (this.checked.get(dom) === entry.key) return;
      this.checked.set(dom, entry.key);
      const fresh = renderDom(entry.blocks, doc, d);
      const spelled = domHtml(dom, d);
      if (fresh.length === 1 && spelled === domHtml(fresh[0]!, d)) {
        // Canonical again: a later re-spelling of this content (the editor's, around a later edit) is put right
        // once more.
        this.respelled.delete(dom);
        return;
      }
      let tried = this.respelled.get(dom);
      if (tried?.key !== entry.key) this.respelled.set(dom, (tried = { key: entry.key, seen: new Set() }));
      if (tried.seen.has(spelled)) return;
      tried.seen.add(spelled);
      save();
      trace('canonical', () => `${tid(entry.y)}: dom ${spelled} -> ${entry.key}`);
      this.patchNodes(entry, fresh);
      for (const n of entry.doms) this.checked.set(n, entry.key);
    });
    if (saved === null) return;
    this.index();
    for (const e of this.entries) if (e.doms.length === 1) this.cache.set(e.doms[0]!, e.blocks);
    this.positions.restoreSelection(saved);
    this.dropOwnRecords('canonical');
  }

  /** The caret (a collapsed selection) as an offset in one of `blocks`' texts, to place ambiguous insertions. */
  private caretHint(blocks: readonly MElement[]): { text: MText; offset: number } | null {
    const sel = this.root.ownerDocument.getSelection();
    if (!sel || !sel.isCollapsed || !sel.focusNode || !this.root.contains(sel.focusNode)) return null;
    const point = pointToModel(blocks, sel.focusNode, sel.focusOffset);
    if (!point) return null;
    const found = textsOf(blocks).find((t) => t.path.join() === point.path.join());
    return found ? { text: found.text, offset: point.offset } : null;
  }

  /**
   * Collaborators' carets per Y node holding them — the top-level block and each element and text on the way down —
   * as offsets in the `plainText` of that node's part of the block the binding last knew (`Entry.model`). A caret is
   * the anchor or head of a remote awareness `cursor`, or the end of a peer's insertion in the last
   * RECENT_TYPING_MS (`noteRemoteTyping`). Positions that do not resolve (yet) are left out.
   */
  private collaboratorCarets(): Map<YNode, number[]> {
    const out = new Map<YNode, number[]>();
    const doc = this.doc;
    if (!doc) return out;
    const positions: Y.RelativePosition[] = [];
    for (const [client, state] of this.awareness?.getStates() ?? []) {
      if (client === doc.clientID) continue;
      const cursor = (state as { cursor?: { anchor?: unknown; head?: unknown } }).cursor;
      for (const json of [cursor?.anchor, cursor?.head]) {
        if (!json || typeof json !== 'object') continue;
        try {
          positions.push(Y.createRelativePositionFromJSON(json));
        } catch {
          // a malformed cursor from a peer: it only loses its say in pairing
        }
      }
    }
    const now = Date.now();
    for (const r of this.recentTyping) if (now - r.at < RECENT_TYPING_MS) positions.push(r.rel);
    for (const rel of positions) {
      let abs: Y.AbsolutePosition | null = null;
      try {
        abs = Y.createAbsolutePositionFromRelativePosition(rel, doc);
      } catch {
        continue;
      }
      const place = abs && this.positions.placeOfY(abs.type);
      const entry = place && this.byY.get(place.top);
      if (!abs || !place || !entry?.model) continue;
      // The block, and each Y node on the way down to the text the caret is in (their models match by index).
      let model: MNode | undefined = entry.model;
      let y: YNode | undefined = entry.y;
      for (let depth = 0; model && y; depth++) {
        const at = plainOffset(model, place.path.slice(depth), abs.index);
        if (at === null) break;
        const list = out.get(y) ?? [];
        list.push(at);
        out.set(y, list);
        const i = place.path[depth];
        if (i === undefined || model.kind !== 'el' || !(y instanceof Y.XmlElement)) break;
        model = model.children[i];
        y = y.get(i) as YNode | undefined;
      }
    }
    trace('held', () => [...out].filter(([y]) => this.byY.has(y)).map(([y, at]) => `${tid(y)}@${at.join(',')}`).join(' ') || 'no carets');
    return out;
  }

  // ---- the document → the DOM ----

  private entryFromY(y: YNode): Entry {
    const blocks = modelOfY(y, 'root') as MElement[];
    const normal = blocks.length === 1 && y instanceof Y.XmlElement && y.nodeName === blocks[0]!.name;
    return {
      y,
      key: normal ? keyOf(blocks[0]!) : `\u0000${++uniqueKey}`,
      model: normal ? blocks[0]! : null,
      blocks,
      doms: [],
    };
  }

  private index(): void {
    this.byY.clear();
    this.byDom.clear();
    for (const e of this.entries) {
      this.byY.set(e.y, e);
      for (const n of e.doms) this.byDom.set(n, e);
    }
  }

  /** Shows the whole document, reusing DOM blocks that already show the same content (the seeding editor's). */
  private showDocument(): void {
    const frag = this.frag!;
    const d = this.dialect;
    const units = this.readAll();
    let u = 0;
    this.entries = (frag.toArray() as YNode[]).map((y) => this.entryFromY(y));
    for (const e of this.entries) {
      let match = -1;
      for (let k = u; k < units.length; k++) {
        const unit = units[k]!;
        if (unit.nodes.length === 1 && unit.blocks.length === 1 && keyOf(unit.blocks[0]!) === e.key) {
          match = k;
          break;
        }
      }
      if (match >= 0) {
        e.doms = units[match]!.nodes;
        u = match + 1;
      } else e.doms = renderDom(e.blocks, this.root.ownerDocument, d);
    }
    this.index();
    this.place();
    if (this.entries.length === 0) this.ensurePlaceholder();
    this.dropOwnRecords('show-all');
  }

  /** Puts the entries' DOM nodes in document order; removes top-level nodes that belong to no entry. */
  private place(): void {
    const root = this.root;
    const d = this.dialect;
    const skip = (n: Node) => isElement(n) && d.skip(n);
    const wanted = new Set(this.entries.flatMap((e) => e.doms));
    // The editor's unwritten edit stays: nodes it added where they are (passed over like editor UI), nodes it
    // removed out of the DOM.
    const unwritten = (n: Node) => !wanted.has(n) && this.editorAdded.has(n) && n.parentNode === root;
    const removed = (n: Node) => this.editorRemoved.has(n) && n.parentNode !== root;
    for (const child of Array.from(root.childNodes)) {
      if (wanted.has(child) || skip(child)) continue;
      if (unwritten(child)) trace('place', () => `kept unwritten ${caretText(child, 0)}`);
      else root.removeChild(child);
    }
    // New blocks go before editor UI that trails the content (Froala's "Powered by" paragraph).
    let trailing: Node | null = null;
    for (let c = root.lastChild; c && skip(c); c = c.previousSibling) trailing = c;
    const nextContent = (n: Node | null): Node | null => {
      while (n && (skip(n) || unwritten(n))) n = n.nextSibling;
      return n;
    };
    let cursor = nextContent(root.firstChild);
    for (const e of this.entries) {
      for (const n of e.doms) {
        if (removed(n)) {
          trace('place', () => `left out ${caretText(n, 0)}, which the editor removed`);
          continue;
        }
        if (n === cursor) {
          cursor = nextContent(n.nextSibling);
          continue;
        }
        root.insertBefore(n, cursor ?? trailing);
      }
    }
  }

  private ensurePlaceholder(): void {
    const root = this.root;
    for (let c = root.firstChild; c; c = c.nextSibling) if (isElement(c) && !this.dialect.skip(c)) return;
    const empty: MElement = { kind: 'el', name: 'p', attrs: {}, children: [{ kind: 'text', ops: [] }] };
    let trailing: Node | null = null;
    for (let c = root.lastChild; c && isElement(c) && this.dialect.skip(c); c = c.previousSibling) trailing = c;
    for (const n of renderDom([empty], root.ownerDocument, this.dialect)) root.insertBefore(n, trailing);
  }

  /** Makes `entry`'s DOM show `nodes` (freshly rendered): patched in place when it is one element of the same tag. */
  private patchNodes(entry: Entry, nodes: Node[]): void {
    const old = entry.doms;
    const first = old[0];
    const fresh = nodes[0];
    if (old.length === 1 && nodes.length === 1 && first && fresh && isElement(first) && isElement(fresh) && first.localName === fresh.localName) {
      const tracing = traceOn();
      const expected = tracing ? domHtml(fresh, this.dialect) : '';
      morph(first, fresh, this.dialect);
      if (tracing && domHtml(first, this.dialect) !== expected) trace('morph-mismatch', () => `${tid(entry.y)}: wanted ${expected} got ${domHtml(first, this.dialect)}`);
      return;
    }
    if (first?.parentNode) for (const n of nodes) first.parentNode.insertBefore(n, first);
    for (const n of old) n.parentNode?.removeChild(n);
    entry.doms = nodes;
  }

  private topOfY(type: Y.AbstractType<unknown> | null): YNode | null {
    let t: Y.AbstractType<unknown> | null = type;
    while (t && t.parent !== this.frag) t = t.parent as Y.AbstractType<unknown> | null;
    return t as YNode | null;
  }

  /**
   * Remembers where peers just inserted text (after the last character of each inserted run): a peer typing there is
   * about to type there again. Awareness carets arrive throttled and may be a keystroke or two behind; these arrive
   * with the text itself. Reads the text's items with `YEvent.adds`, never `YTextEvent.delta`: that getter runs a
   * transaction of its own (yjs src/types/YText.js), whose `beforeTransaction` would re-capture the local selection
   * between the document update and its DOM patch.
   */
  private noteRemoteTyping(events: ReadonlyArray<Y.YEvent<Y.AbstractType<unknown>>>): void {
    const now = Date.now();
    this.recentTyping = this.recentTyping.filter((r) => now - r.at < RECENT_TYPING_MS);
    for (const ev of events) {
      if (!(ev.target instanceof Y.XmlText)) continue;
      let index = 0;
      let run = false; // inside a run of live characters this event added
      for (let item = ev.target._start; item; item = item.right) {
        if (item.deleted || !item.countable) continue;
        const added = ev.adds(item);
        if (run && !added) this.recentTyping.push({ rel: Y.createRelativePositionFromTypeIndex(ev.target, index, -1), at: now });
        run = added;
        index += item.length;
      }
      if (run) this.recentTyping.push({ rel: Y.createRelativePositionFromTypeIndex(ev.target, index, -1), at: now });
    }
    if (this.recentTyping.length > RECENT_TYPING_MAX) this.recentTyping.splice(0, this.recentTyping.length - RECENT_TYPING_MAX);
  }

  /** Whether item `id` is this user's and was written in the last UNSEEN_OWN_MS. */
  private readonly ownRecent = (id: Y.ID): boolean => {
    this.pruneOwnWrites(Date.now());
    const first = this.ownWrites[0];
    return first !== undefined && id.client === this.doc?.clientID && id.clock >= first.clock;
  };

  private pruneOwnWrites(now: number): void {
    let old = 0;
    while (old < this.ownWrites.length && now - this.ownWrites[old]!.at > UNSEEN_OWN_MS) old++;
    if (old > 0) this.ownWrites.splice(0, old);
  }

  private readonly onBeforeTransaction = (tr: Y.Transaction): void => {
    if (tr.local && this.doc) {
      const now = Date.now();
      this.pruneOwnWrites(now);
      this.ownWrites.push({ at: now, clock: Y.getState(this.doc.store, this.doc.clientID) });
    }
    if (this.rescueSaved && tr.origin !== RESCUE_ORIGIN) trace('caret', () => `a transaction (${String(tr.origin)}) began between a rescue and its patch`);
    // A rescue runs inside `onDeep`, which sets the selection its patch restores (`rescueSaved`).
    if (tr.origin === this || tr.origin === NORMALIZE_ORIGIN || tr.origin === RESCUE_ORIGIN || !this.frag) return;
    if (this.observer) this.collect(this.observer.takeRecords());
    // Assigned, not only set: a transaction that changes no block (an empty sync step) never reaches `onDeep`,
    // and a stale flag would later make a key press's block lose the remote edit it defers (see `onDeep`).
    this.localPending = this.dirty.size > 0 && !this.composing;
    // During a key press or composition the caret's block is neither patched nor in step with the document:
    // its selection is left exactly as the browser has it. Where the typing began is kept, for `rescue`.
    this.saved = this.composing ? null : this.positions.captureSelection();
    const comp = this.composing;
    if (comp?.start) {
      const abs = Y.createAbsolutePositionFromRelativePosition(comp.moved ?? comp.start.rel, this.doc!);
      comp.before = abs && abs.type instanceof Y.XmlText ? { text: abs.type, offset: abs.index } : null;
    }
  };

  private readonly onDeep = (events: Array<Y.YEvent<Y.AbstractType<unknown>>>, tr: Y.Transaction): void => {
    if (tr.origin === this || tr.origin === NORMALIZE_ORIGIN) {
      this.copies.noteWrite(tr);
      this.textCopies.noteWrite(tr);
      return;
    }
    if (!tr.local) {
      this.copies.noteRemote(tr);
      this.textCopies.noteRemote(tr, () => updateDeleteSet(tr));
    }
    const frag = this.frag!;
    let structural = false;
    const changed = new Set<YNode>();
    if (!tr.local) this.noteRemoteTyping(events);
    // A peer's write that removed text (never this user's own undo: that is local).
    const removal = tr.local ? null : Removal.of(events, tr, this.doc!.clientID, this.ownRecent);
    for (const ev of events) {
      if (ev.target === frag) structural = true;
      else {
        const top = this.topOfY(ev.target);
        if (top) changed.add(top);
      }
    }
    const pendingLocal = this.localPending;
    this.localPending = false;
    const list = structural ? (frag.toArray() as YNode[]) : this.entries.map((e) => e.y);
    const gone = new Set(this.entries);
    const next: Entry[] = [];
    let needPlace = structural;
    for (const y of list) {
      const old = this.byY.get(y);
      if (old) gone.delete(old);
      if (old && !changed.has(y)) {
        next.push(old);
        continue;
      }
      const composingHere = old !== undefined && this.isComposingIn(old);
      if (old && (composingHere || (pendingLocal && old.doms.some((n) => this.dirty.has(n))))) {
        // Not now: the composition (or an unwritten local edit) owns this block; it is reconciled afterwards.
        this.deferred.add(y);
        this.staleY.add(y);
        trace('defer', () => `${tid(y)} (${composingHere ? 'key/composition' : 'unwritten local edit'})`);
        next.push(old);
        continue;
      }
      const fresh = this.entryFromY(y);
      this.staleY.delete(y);
      if (old) {
        fresh.doms = old.doms;
        if (fresh.key !== old.key) {
          trace('remote', () => `${tid(y)}: ${old.key} -> ${fresh.key}`);
          this.patchNodes(fresh, renderDom(fresh.blocks, this.root.ownerDocument, this.dialect));
          if (old.doms.length === 0) needPlace = true;
        }
      } else {
        trace('remote', () => `${tid(y)}+ ${fresh.key}`);
        fresh.doms = renderDom(fresh.blocks, this.root.ownerDocument, this.dialect);
      }
      for (const n of fresh.doms) {
        this.cache.set(n, fresh.blocks);
        this.checked.set(n, fresh.key);
      }
      next.push(fresh);
    }
    for (const e of gone) {
      if (this.isComposingIn(e)) continue;
      for (const n of e.doms) n.parentNode?.removeChild(n);
    }
    this.entries = next;
    this.index();
    if (needPlace) this.place();
    if (this.entries.length === 0) this.ensurePlaceholder();
    let saved = this.saved;
    this.saved = null;
    if (tr.origin === RESCUE_ORIGIN) {
      saved = this.rescueSaved;
      this.rescueSaved = null;
      const moved = saved;
      trace('rescue', () => {
        const sel = this.root.ownerDocument.getSelection();
        const now = sel?.focusNode ? caretText(sel.focusNode, sel.focusOffset) : 'none';
        return moved?.anchor ? `its patch restores ${this.positions.traceRel(moved.anchor.rel)}; the caret is at ${now}` : 'its patch has no selection to restore';
      });
    }
    if (removal) saved = this.rescue(removal, saved);
    if (saved && (!tr.local || tr.origin === COPY_ORIGIN)) saved = { anchor: this.intoKeptChar(saved.anchor), focus: this.intoKeptChar(saved.focus) };
    if (saved) this.positions.restoreSelection(saved);
    this.dropOwnRecords('remote');
    this.host.contentUpdated();
    // During a key press or composition nothing is written: its deferred blocks are merged when it ends.
    if (pendingLocal && !this.composing) {
      this.deferred.clear();
      this.flush();
    }
    if (!tr.local) this.dropCopies();
  };

  /**
   * Deletes second copies of what this user's write and a peer's concurrent one both moved: this user's copy of a
   * block (`copies.ts`), either copy of characters (`textcopies.ts`). In a transaction of its own, patched into the
   * DOM by the `onDeep` it causes, where a selection in a deleted copy goes to the same place in the copy that stays.
   * Not during a key press or composition (its block is not patched then): the pairs wait for the next write or
   * peer's transaction.
   */
  private dropCopies(): void {
    const doc = this.doc;
    if (!doc || this.composing) return;
    const pairs = this.copies.pairs();
    const chars = this.textCopies.drops(doc);
    if (pairs.length === 0 && chars.length === 0) return;
    doc.transact(() => {
      // `saved` is this transaction's, captured by `onBeforeTransaction`, restored by its patch.
      if (this.saved) this.saved = { anchor: this.intoKept(this.saved.anchor, pairs), focus: this.intoKept(this.saved.focus, pairs) };
      const count = dropCopies(pairs);
      const dropped = dropChars(doc, chars);
      trace('copies', () => `${count} own copies dropped: ${pairs.map((p) => `${tid(p.mine)} for ${tid(p.theirs)} ${JSON.stringify(liveOwnText(p.theirs))}`).join(', ')}; ${dropped} copied characters dropped`);
    }, COPY_ORIGIN);
  }

  /**
   * After this user's undo of a step whose deletions were `undone`: the characters it restored that a peer has moved
   * on since (`TextCopies.restoredMovedOn`) are deleted again, so the text is there once, where the peer put it.
   */
  private dropRestoredCopies(undone: DeleteSet): void {
    const doc = this.doc;
    if (!doc) return;
    const drops = this.textCopies.restoredMovedOn(doc, undone);
    if (drops.length === 0) return;
    doc.transact(() => {
      const dropped = dropChars(doc, drops);
      trace('copies', () => `${dropped} characters the undo restored dropped: a peer had moved them on`);
    }, COPY_ORIGIN);
  }

  /** `point` when it is not in a copy about to be dropped; else the same place in the copy that stays. */
  private intoKept(point: YPoint | null, pairs: readonly CopyPair[]): YPoint | null {
    if (!point || !this.doc || pairs.length === 0) return point;
    const abs = Y.createAbsolutePositionFromRelativePosition(point.rel, this.doc);
    const text = abs?.type;
    const pair = text instanceof Y.XmlText ? pairs.find((p) => text.parent === p.mine) : undefined;
    if (!abs || !pair) return point;
    const place = sameOwnPlace(pair.mine, text as Y.XmlText, abs.index, pair.theirs);
    if (!place) return point;
    trace('caret', () => `moved from ${tid(pair.mine)} (dropped) to ${tid(place.text)} at ${place.index}`);
    return { rel: Y.createRelativePositionFromTypeIndex(place.text, place.index, -1), path: [], offset: place.index, text: place.text };
  }

  /**
   * After a transaction that deleted second copies of characters (this user's `dropCopies`, or a peer's that
   * deleted this user's copy): `point` when its place is still there; else the same place in the copy that stays
   * (`TextCopies.keptPlace`). A point with `assoc` < 0 (all of this binding's) is right after its character, or at
   * the start of its text when it has none.
   */
  private intoKeptChar(point: YPoint | null): YPoint | null {
    const doc = this.doc;
    if (!point || !doc) return point;
    let id: Y.ID | null = null;
    let after = true;
    const rel = point.rel.item;
    if (rel) {
      // (A position from a document this one replaced names a client or clock it lacks.)
      if (Y.getState(doc.store, rel.client) > rel.clock && Y.getItem(doc.store, rel).deleted) id = rel;
    } else if (point.text._item?.deleted) {
      // At the start of a text that went: the place is before its first character.
      for (let item = point.text._start; item && !id; item = item.right) {
        if (item.content instanceof Y.ContentString) id = item.id;
      }
      after = false;
    }
    const place = id && this.textCopies.keptPlace(doc, id);
    if (!place) return point;
    const index = place.index + (after ? 1 : 0);
    trace('caret', () => `moved from a second copy that went to ${tid(place.text)} at ${index}`);
    return { rel: Y.createRelativePositionFromTypeIndex(place.text, index, -1), path: [], offset: index, text: place.text };
  }

  /**
   * After a peer's write removed text (deleted nodes, or moved part of a text elsewhere): puts this user's typing
   * that went with it, or stayed behind, into the texts that received it (a transaction of its own, patched
   * into the DOM by the `onDeep` it causes), and moves the selection saved in removed text to the same place in its
   * receiver. Returns the selection to restore now; after a rescue that is null, and the rescue's patch restores it.
   */
  private rescue(removal: Removal, saved: Saved | null): Saved | null {
    const doc = this.doc!;
    let count = 0;
    if (removal.lostAny) doc.transact(() => (count = removal.rescue()), RESCUE_ORIGIN);
    if (count > 0) trace('rescue', () => `${count} units of own typing put back`);
    const relocate = (text: Y.XmlText, offset: number): { rel: Y.RelativePosition; text: Y.XmlText; index: number } | null => {
      const place = removal.locate(text, offset);
      if (!place) return null;
      const rel = Y.createRelativePositionFromTypeIndex(place.text, place.index, -1);
      trace('caret', () => `relocated from ${tid(text)} at ${offset} to ${tid(place.text)} at ${place.index} (${this.positions.traceRel(rel)})`);
      return { rel, text: place.text, index: place.index };
    };
    // A key held (or a composition) while its text moved: its typing is written at the new place when it ends.
    const comp = this.composing;
    if (comp?.before) comp.moved = relocate(comp.before.text, comp.before.offset)?.rel ?? comp.moved;
    const point = (p: YPoint | null): YPoint | null => {
      const to = p ? relocate(p.text, p.offset) : null;
      return to ? { rel: to.rel, path: [], offset: to.index, text: to.text } : p;
    };
    let moved: Saved | null = null;
    if (saved && saved.focus === saved.anchor) {
      const at = point(saved.anchor);
      moved = { anchor: at, focus: at };
    } else if (saved) {
      // A selection moves only whole, into one text: with one end in text the peer kept, it stays where it was
      // (the end in moved text resolves to the cut). Moving one end made a selection from one paragraph into
      // another (the TinyMCE fuzz), which the next key would have replaced.
      const anchor = point(saved.anchor);
      const focus = point(saved.focus);
      const whole = anchor !== saved.anchor && focus !== saved.focus && anchor?.text === focus?.text;
      moved = whole ? { anchor, focus } : saved;
    }
    if (count === 0) return moved;
    trace('rescue', () => (moved ? 'the selection is restored after its patch' : `no selection to restore (${comp ? 'key/composition' : 'none saved'})`));
    this.rescueSaved = moved;
    return null;
  }

  /** Discards the MutationObserver records of the binding's own DOM patches (traced, to catch any that were not). */
  private dropOwnRecords(where: string): void {
    const records = this.observer?.takeRecords() ?? [];
    if (records.length > 0) trace('drop', () => `${where}: ${records.length} records in ${[...new Set(records.map((r) => {
      const top = r.target === this.root ? null : topOf(this.root, r.target);
      const e = top ? this.byDom.get(top) : undefined;
      return e ? tid(e.y) : top ? 'detached' : 'root';
    }))].join(' ')}`);
  }

  private isComposingIn(entry: Entry): boolean {
    const top = this.composing?.top;
    return top !== undefined && top !== null && entry.doms.includes(top);
  }

  // ---- IME ----

  private readonly onKeyDown = (event: KeyboardEvent): void => {
    // Shortcuts run editor commands; IME keys belong to the composition.
    if (this.composing || event.isComposing || event.ctrlKey || event.metaKey || event.altKey) return;
    // Enter splits the block in the editor's own keydown handler: written at once, the split is paired with the
    // document as it is (and with collaborators' carets); held, a remote edit of the block arriving before keyup
    // could only lose to the editor's version.
    if (event.key === 'Enter') return;
    this.begin(true);
    if (this.keyTimer !== null) clearTimeout(this.keyTimer);
    // A keyup that never comes (focus moved away mid-press) must not hold the block forever.
    this.keyTimer = setTimeout(() => this.onKeyUp(), KEY_HOLD_MS);
  };

  private readonly onKeyUp = (): void => {
    if (this.keyTimer !== null) clearTimeout(this.keyTimer);
    this.keyTimer = null;
    if (this.composing?.key) this.end();
  };

  private readonly onCompositionStart = (): void => {
    if (this.composing?.key) this.end();
    this.begin(false);
  };

  private readonly onCompositionEnd = (): void => {
    if (this.composing && !this.composing.key) this.end();
  };

  private begin(key: boolean): void {
    this.flush();
    const sel = this.root.ownerDocument.getSelection();
    const top = sel?.anchorNode ? topOf(this.root, sel.anchorNode) : null;
    let start: YPoint | null = null;
    if (sel && sel.rangeCount > 0) {
      const range = sel.getRangeAt(0);
      start = this.positions.domToY(range.startContainer, range.startOffset);
    }
    const entry = top ? this.byDom.get(top) ?? null : null;
    this.composing = { top, entry, start, key, moved: null, before: null };
  }

  private end(): void {
    const comp = this.composing;
    this.composing = null;
    if (!comp) return;
    // Where the caret and the typing belong: where the key began, or where a peer's write moved that text.
    const caret = comp.start ? { ...comp.start, rel: comp.moved ?? comp.start.rel } : null;
    const began = comp.entry;
    if (began && caret && comp.moved && this.byY.get(began.y) !== began) {
      // The block it began in was deleted meanwhile (an indent, a merge) and its text went elsewhere: what was
      // typed goes there too, and the editor's stale copy of the block leaves.
      const now = readNodes(began.doms, this.root, this.dialect);
      const into = this.mergeTyping(began, caret, now, true);
      trace('key-end', () => `${tid(began.y)} gone: typing ${into ? `moved to ${tid(into)}` : 'not placed'}`);
      for (const n of began.doms) n.parentNode?.removeChild(n);
      const receiver = into ? this.byY.get(into) : undefined;
      if (receiver?.doms.length === 1) this.showFromY(receiver, caret);
    }
    const deferred = [...this.deferred];
    this.deferred.clear();
    for (const y of deferred) {
      const entry = this.byY.get(y);
      if (!entry || entry.doms.length !== 1) {
        trace('key-end', () => `${tid(y)} ${entry ? `shown by ${entry.doms.length} DOM nodes` : 'gone'}: not merged`);
        continue;
      }
      const now = readNodes(entry.doms, this.root, this.dialect);
      const untouched = now.length === 1 && keyOf(now[0]!) === entry.key;
      trace('key-end', () => `${tid(y)} ${untouched ? 'untouched' : `now ${now.map((b) => keyOf(b)).join('')}`}`);
      // The block changed remotely meanwhile: show the document's version, with what was typed placed into it
      // (into the block a peer moved its text to, shown too).
      const into = untouched ? y : caret ? this.mergeTyping(entry, caret, now, comp.moved !== null) : null;
      if (into) {
        const receiver = into === y ? undefined : this.byY.get(into);
        if (receiver?.doms.length === 1) this.showFromY(receiver, null);
        this.showFromY(entry, caret);
        continue;
      }
      // Could not place the local change exactly: the block is written as the editor shows it.
      trace('key-end', () => `${tid(y)} editor's version wins`);
      this.dirty.add(entry.doms[0]!);
      this.cache.delete(entry.doms[0]!);
    }
    this.flush();
  }

  /** Re-renders `entry` from the document (keeping the selection, or putting the caret at `caret`). */
  private showFromY(entry: Entry, caret: YPoint | null): void {
    const saved = caret ? null : this.positions.captureSelection();
    const fresh = this.entryFromY(entry.y);
    this.staleY.delete(entry.y);
    fresh.doms = entry.doms;
    this.patchNodes(fresh, renderDom(fresh.blocks, this.root.ownerDocument, this.dialect));
    this.entries = this.entries.map((e) => (e === entry ? fresh : e));
    this.index();
    for (const n of fresh.doms) {
      this.cache.set(n, fresh.blocks);
      this.checked.set(n, fresh.key);
    }
    if (caret) {
      const point = this.positions.yToDom(caret.rel);
      const sel = this.root.ownerDocument.getSelection();
      trace('caret', () => `key-end ${sel ? caretText(sel.focusNode, sel.focusOffset) : '?'} -> ${point ? caretText(point.node, point.offset) : 'nowhere'}`);
      if (point && sel) sel.setBaseAndExtent(point.node, point.offset, point.node, point.offset);
    } else if (saved) this.positions.restoreSelection(saved);
    this.dropOwnRecords('key-end');
    this.host.contentUpdated();
  }

  /** Writes what was typed in `entry`'s block at `start` (`typing.ts`); returns the top-level node written into, or null. */
  private mergeTyping(entry: Entry, start: YPoint, now: MElement[], moved: boolean): YNode | null {
    if (!this.doc) return null;
    return writeTyping(this.doc, this.positions, { top: entry.y, before: entry.model, now, start, moved }, this);
  }
}

/** The offset in `plainText(node)` of `offset` in the text at child `path` under `node`; null when the path is not there. */
function plainOffset(node: MNode, path: readonly number[], offset: number): number | null {
  if (node.kind === 'text') return path.length === 0 ? offset : null;
  const [i, ...rest] = path;
  const child = i === undefined ? undefined : node.children[i];
  if (!child) return null;
  let before = 0;
  for (let k = 0; k < i!; k++) before += plainText(node.children[k]!).length + 1;
  const inner = plainOffset(child, rest, offset);
  return inner === null ? null : before + inner;
}
