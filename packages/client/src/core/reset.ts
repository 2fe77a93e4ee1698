/**
 * Re-applying a client's unsynced text edits onto the content of a new session (PROTOCOL.md [P8]): the edits are
 * captured as diff-match-patch patches (context-anchored, so they land on the right text even when the new base
 * differs) and applied as fresh edits, never by merging the old Yjs history (which would duplicate text).
 */
import DiffMatchPatch from 'diff-match-patch';
import type * as Y from 'yjs';
import { PlainView, writeSplice } from './plain-view.js';

export type Patches = ReturnType<DiffMatchPatch['patch_make']>;

const dmp = new DiffMatchPatch();

/** The edits that turn `base` (server-confirmed) into `mine` (what this client shows); null when there are none. */
export function captureEdits(base: string, mine: string): Patches | null {
  return base === mine ? null : dmp.patch_make(base, mine);
}

/** `onto` with `patches` applied; patches whose context cannot be found are dropped by diff-match-patch. */
export function applyEdits(patches: Patches, onto: string): string {
  return dmp.patch_apply(patches, onto)[0];
}

/** The text the patches of a `Y.Text` are made on: its plain view (a rich text's embeds are not characters of it). */
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
  const diffs = dmp.diff_main(view.text, target);
  // No semantic cleanup: it would turn short unchanged runs into delete + re-insert, re-typing others' text as ours.
  let index = 0;
  for (const [op, text] of diffs) {
    if (op === DiffMatchPatch.DIFF_EQUAL) index += text.length;
    else if (op === DiffMatchPatch.DIFF_DELETE) writeSplice(ytext, view, index, text.length, '');
    else {
      writeSplice(ytext, view, index, 0, text);
      index += text.length;
    }
  }
}
