/**
 * A fake editor for the DOM-free `Session` core (STYLE.md §4: the contract's string-backed editor in Node): a string
 * edited through `edit()`/`format()` and kept equal to the shared `Y.Text` while bound. Same behaviour as the copy in
 * session-ws.test.ts, plus what the reliability tests need to judge the result: every update this editor (and its
 * seed) produced, so that a test can rebuild "everything anyone typed" and check that the store holds exactly that.
 */
import * as Y from 'yjs';
import { SEED_ORIGIN, type DocBinding } from '../../src/core/session.js';

export class StringEditor implements DocBinding {
  readonly textName = 'text';
  private text: string;
  private stale = false;
  /**
   * Every update made locally in the bound doc, in order: this editor's edits, its seed (when it seeded), and the
   * transactions Yjs itself makes after remote formatting changes (`Y.Text` formatting cleanup, origin null). The
   * session counts and sends all of them as this client's edits, so a reference rebuilt from "what was typed" must
   * include them too.
   */
  readonly localUpdates: Uint8Array[] = [];
  private ytext: Y.Text | null = null;
  private doc: Y.Doc | null = null;
  /**
   * A remote change only marks the string stale; it is read from the shared text when next needed. (Reading it on
   * every remote update — as the copy in session-ws.test.ts does — walks the whole text each time and dominated long
   * runs; so does the event's Delta.) The editor's own edits are spliced into the string directly.
   */
  private readonly observer = (_event: Y.YTextEvent, tr: Y.Transaction): void => {
    if (tr.origin !== this) this.stale = true;
  };
  private readonly onUpdate = (update: Uint8Array, _origin: unknown, _doc: Y.Doc, tr: Y.Transaction): void => {
    if (tr.local) this.localUpdates.push(update);
  };

  constructor(initial: string) {
    this.text = initial;
  }

  /** The bound document's state vector (empty when unbound): it changes with every struct the document takes. */
  stateVector(): Uint8Array {
    return this.doc ? Y.encodeStateVector(this.doc) : new Uint8Array();
  }

  /** What the editor shows. */
  get value(): string {
    if (this.stale && this.ytext) {
      this.text = this.ytext.toString();
      this.stale = false;
    }
    return this.text;
  }

  set value(text: string) {
    this.text = text;
    this.stale = false;
  }

  seed(doc: Y.Doc): void {
    // The session wraps this in a SEED_ORIGIN transaction; its update is the seed (recorded once it is emitted).
    const grab = (update: Uint8Array, origin: unknown): void => {
      if (origin !== SEED_ORIGIN) return;
      this.localUpdates.push(update);
      doc.off('update', grab);
    };
    doc.on('update', grab);
    doc.getText(this.textName).insert(0, this.value);
  }

  bind(doc: Y.Doc): void {
    this.doc = doc;
    this.ytext = doc.getText(this.textName);
    this.value = this.ytext.toString();
    this.ytext.observe(this.observer);
    doc.on('update', this.onUpdate);
  }

  unbind(): void {
    // The editor keeps what it showed.
    this.text = this.value;
    this.ytext?.unobserve(this.observer);
    this.doc?.off('update', this.onUpdate);
    this.ytext = null;
    this.doc = null;
  }

  /** The bound `Y.Doc` (the session's), or null. */
  get ydoc(): Y.Doc | null {
    return this.doc;
  }

  get bound(): boolean {
    return this.ytext !== null;
  }

  /** A user edit: splice the string and write the same splice into the shared text. */
  edit(index: number, remove: number, insert: string): void {
    const at = Math.min(index, this.value.length);
    const del = Math.min(remove, this.value.length - at);
    this.value = this.value.slice(0, at) + insert + this.value.slice(at + del);
    const ytext = this.ytext;
    if (!ytext) return;
    ytext.doc?.transact(() => {
      if (del > 0) ytext.delete(at, del);
      if (insert) ytext.insert(at, insert);
    }, this);
  }

  /** A formatting command (bold on/off) over a range; the text is unchanged, the Delta is not. */
  format(index: number, length: number, bold: boolean): void {
    const ytext = this.ytext;
    if (!ytext) return;
    const at = Math.min(index, this.value.length);
    const len = Math.min(length, this.value.length - at);
    if (len <= 0) return;
    ytext.doc?.transact(() => ytext.format(at, len, { bold: bold ? true : null }), this);
  }

  /** True when the string equals the shared text (the editor shows what the doc holds). */
  consistent(): boolean {
    return this.ytext === null || this.ytext.toString() === this.text || this.stale;
  }

  /** The shared text with its formatting, as a Delta (JSON, for comparisons). */
  delta(): string {
    return JSON.stringify(this.ytext?.toDelta() ?? null);
  }
}

/** A fresh Y.Doc holding every given update (Yjs merges them in any order). */
export function docFrom(updates: Iterable<Uint8Array>): Y.Doc {
  const doc = new Y.Doc();
  doc.transact(() => {
    for (const update of updates) Y.applyUpdate(doc, update);
  });
  return doc;
}

/** Text and Delta of `doc`'s `text`, for comparisons with an editor. */
export function docView(doc: Y.Doc): { text: string; delta: string } {
  const ytext = doc.getText('text');
  return { text: ytext.toString(), delta: JSON.stringify(ytext.toDelta()) };
}

/**
 * How many of `updates` are not fully contained in `doc` (an update is contained when applying it changes
 * nothing: no new struct, no new deletion). `doc` is left unchanged.
 */
export function missingFrom(doc: Y.Doc, updates: readonly Uint8Array[]): number {
  const base = Y.encodeStateAsUpdate(doc);
  const probe = new Y.Doc();
  Y.applyUpdate(probe, base);
  const before = Y.encodeSnapshot(Y.snapshot(probe));
  // Cheap path: all at once. Only when something is missing, count them one by one.
  probe.transact(() => {
    for (const update of updates) Y.applyUpdate(probe, update);
  });
  const after = Y.encodeSnapshot(Y.snapshot(probe));
  probe.destroy();
  if (Buffer.from(before).equals(Buffer.from(after))) return 0;
  let missing = 0;
  for (const update of updates) {
    const one = new Y.Doc();
    Y.applyUpdate(one, base);
    Y.applyUpdate(one, update);
    if (!Buffer.from(Y.encodeSnapshot(Y.snapshot(one))).equals(Buffer.from(before))) missing++;
    one.destroy();
  }
  return missing;
}
