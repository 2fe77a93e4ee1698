/**
 * Re-applying a client's unsynced text edits onto the content of a new session (PROTOCOL.md [P8]) as fresh edits,
 * never by merging the old Yjs history (which would duplicate text). The edits are held as the text the server had
 * confirmed (`base`) and the text this client showed (`mine`); applying them onto the new content is a three-way
 * merge of base → mine with base → new content, on characters (RELIABILITY.md D3: unsynced edits kept, nothing
 * duplicated).
 */
import diff from 'fast-diff';
import type * as Y from 'yjs';
import { PlainView, writeSplice } from './plain-view.js';

/** This client's unsynced edits: what it showed (`mine`) over what the server had confirmed (`base`). */
export interface Edits {
  readonly base: string;
  readonly mine: string;
}

/** The edits that turn `base` (server-confirmed) into `mine` (what this client shows); null when there are none. */
export function captureEdits(base: string, mine: string): Edits | null {
  return base === mine ? null : { base, mine };
}

/** One change of a text over `base`: the `del` characters from `at` are removed and `ins` is written at `at`. */
interface Change {
  at: number;
  del: number;
  ins: string;
}

/**
 * The changes turning `base` into `text`, ascending, each one run between two base characters that `text` keeps
 * (a minimal character diff: no semantic cleanup, which would re-insert short unchanged runs as new text and, when
 * both sides rewrote one stretch, write them twice).
 */
function changes(base: string, text: string): Change[] {
  const out: Change[] = [];
  let at = 0;
  for (const [op, chunk] of diff(base, text)) {
    if (op === diff.EQUAL) {
      at += chunk.length;
      continue;
    }
    let last = out[out.length - 1];
    if (!last || last.at + last.del < at) out.push((last = { at, del: 0, ins: '' }));
    if (op === diff.DELETE) {
      last.del += chunk.length;
      at += chunk.length;
    } else last.ins += chunk;
  }
  return out;
}

/**
 * `onto` with the edits merged in. `onto` and `mine` are both compared with `base`: a base character is kept unless
 * either removed it, and the text each inserted is written where it stands among the base characters, so edits to
 * different places both hold, whatever moved the text around them. Where both wrote at the same place, a pure
 * insertion comes before text that replaces base characters, `onto`'s before `mine`'s; the same text written at the
 * same place by both (a host copy that already holds these edits) is written once.
 */
export function applyEdits(edits: Edits, onto: string): string {
  const { base, mine } = edits;
  const removed = new Uint8Array(base.length);
  // [at, rank, text]: rank orders writes at one place (pure insertion before replacement, onto's before mine's).
  const writes: [number, number, string][] = [];
  const theirs = changes(base, onto);
  const written = new Set(theirs.map((c) => `${c.at}:${c.ins}`));
  for (const [side, list] of [[0, theirs], [1, changes(base, mine)]] as const) {
    for (const c of list) {
      removed.fill(1, c.at, c.at + c.del);
      if (c.ins && !(side && written.has(`${c.at}:${c.ins}`))) writes.push([c.at, (c.del ? 2 : 0) + side, c.ins]);
    }
  }
  writes.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let out = '';
  let from = 0;
  const keepTo = (to: number) => {
    for (; from < to; from++) if (!removed[from]) out += base[from];
  };
  for (const [at, , text] of writes) {
    keepTo(at);
    out += text;
  }
  keepTo(base.length);
  return out;
}

/** The text the edits of a `Y.Text` are taken on: its plain view (a rich text's embeds are not characters of it). */
export function plainText(ytext: Y.Text): string {
  return PlainView.of(ytext).text;
}

/**
 * Writes the difference between the text's plain view and `target` into `ytext` as minimal inserts and deletes, at
 * the positions the plain view maps them to (plain-view.ts): a rich text keeps its embeds and the formats of every
 * character the difference does not delete.
 */
export function writeDifference(ytext: Y.Text, target: string): void {
  const view = PlainView.of(ytext);
  // No semantic cleanup: it would turn short unchanged runs into delete + re-insert, re-typing others' text as ours.
  let index = 0;
  for (const [op, text] of diff(view.text, target)) {
    if (op === diff.EQUAL) index += text.length;
    else if (op === diff.DELETE) writeSplice(ytext, view, index, text.length, '');
    else {
      writeSplice(ytext, view, index, 0, text);
      index += text.length;
    }
  }
}
