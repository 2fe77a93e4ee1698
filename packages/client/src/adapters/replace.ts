/** Content writers for `forceSync(content)` (API.md): they empty the shared type and write the host's content. */
import type * as Y from 'yjs';
import { invalidConfig } from '../core/errors.js';
import { TEXT_TYPE } from 'wave-protocol';

/** For editors whose content is a plain string (text, B). Throws `invalid_config` for anything else. */
export function replaceText(doc: Y.Doc, content: unknown, app: string): void {
  if (typeof content !== 'string') throw invalidConfig('forceSync(content)', `a string for app '${app}'`, content);
  const ytext = doc.getText(TEXT_TYPE);
  ytext.delete(0, ytext.length);
  ytext.insert(0, content);
}

/** For Delta-based editors (C): `ops` are the Delta's operations. */
export function replaceDelta(doc: Y.Doc, ops: ReadonlyArray<Record<string, unknown>>): void {
  const ytext = doc.getText(TEXT_TYPE);
  ytext.delete(0, ytext.length);
  ytext.applyDelta(ops as Array<Record<string, unknown>>);
}
