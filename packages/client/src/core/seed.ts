/**
 * What a session writes into its doc when it seeds a new epoch (PROTOCOL.md P5) or re-applies unsynced edits after
 * a session reset (P8). Each is one transaction with its own origin: `SEED_ORIGIN` (the host's content, not an edit
 * of this user: never re-applied) or `REAPPLY_ORIGIN` (shown by adapters like a remote edit).
 */
import type * as Y from 'yjs';
import { applyEdits, plainText, writeDifference, type Edits } from './reset.js';
import { REAPPLY_ORIGIN, SEED_ORIGIN, type DocBinding } from './session-types.js';

export interface SeedSource {
  /** The doc holds content kept by offline persistence for this very epoch (this client seeded it before, R3). */
  kept: boolean;
  /** Unsynced edits captured at a reset, or null. */
  edits: Edits | null;
  /** At that reset the editor was bound, so it shows those edits itself. */
  editorShowsEdits: boolean;
}

/**
 * Kept content of this very epoch is the seed; else the editor's content is. Unsynced edits captured while the
 * editor did not show them (loaded from offline storage) go on top, for bindings with a text name.
 */
export function writeSeed(doc: Y.Doc, binding: DocBinding, source: SeedSource): void {
  const name = binding.textName;
  doc.transact(() => {
    if (!source.kept) binding.seed(doc);
    if (source.edits && name && !source.editorShowsEdits) {
      writeDifference(doc.getText(name), applyEdits(source.edits, plainText(doc.getText(name))));
    }
  }, SEED_ORIGIN);
}

/**
 * Seeds with the host's stored copy (`fetchDocOnNetworkReconnect`) plus this client's unsynced edits, into the text
 * named `name`; without a copy (`base` null), with the editor's content.
 */
export function writeHostCopySeed(doc: Y.Doc, binding: DocBinding, base: string | null, edits: Edits, name: string): void {
  const ytext = doc.getText(name);
  doc.transact(() => {
    if (base === null) binding.seed(doc);
    else ytext.insert(0, applyEdits(edits, base));
  }, SEED_ORIGIN);
}

/** After a reset, writes the captured unsynced edits onto the new session's content (text `name`) as new local edits. */
export function reapplyEdits(doc: Y.Doc, edits: Edits, name: string): void {
  const ytext = doc.getText(name);
  const merged = applyEdits(edits, plainText(ytext));
  doc.transact(() => writeDifference(ytext, merged), REAPPLY_ORIGIN);
}
