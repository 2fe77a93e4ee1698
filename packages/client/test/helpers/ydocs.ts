/**
 * Rich-text documents in plain Y.Docs, for DOM-free tests of the HTML adapter's document side: models built by hand,
 * written with the binding's diff (`syncChildren`), updates exchanged between docs by hand.
 */
import * as Y from 'yjs';
import { applyRemoteUpdate } from '../../src/core/remote-update.ts';
import { normalizeDocument, type RawNode } from '../../src/adapters/html/normalize.ts';
import { toHtml, type MElement } from '../../src/adapters/html/model.ts';
import { buildY, documentOfY, HTML_TYPE, syncChildren } from '../../src/adapters/html/ydoc.ts';

export const t = (text: string): RawNode => ({ t: 'text', text });
export const h = (name: string, attrs: Record<string, string> = {}, ...children: RawNode[]): RawNode => ({ t: 'el', name, attrs, children });
export const frag = (doc: Y.Doc) => doc.getXmlFragment(HTML_TYPE);
export const load = (doc: Y.Doc, blocks: MElement[]) => frag(doc).insert(0, blocks.map(buildY));
/** A local write of `blocks` as the whole document, with origin `origin`. */
export const write = (doc: Y.Doc, blocks: MElement[], origin: unknown = 'local') => doc.transact(() => syncChildren(frag(doc), 'root', blocks), origin);
export const show = (doc: Y.Doc) => toHtml(documentOfY(frag(doc)));
/** What `to` lacks of `from`, applied as the session applies a peer's update. */
export const send = (from: Y.Doc, to: Y.Doc) => applyRemoteUpdate(to, Y.encodeStateAsUpdate(from, Y.encodeStateVector(to)), 'remote');
export const sync = (a: Y.Doc, b: Y.Doc) => {
  send(a, b);
  send(b, a);
};
/** A list with one item per array of children. */
export const list = (...items: RawNode[][]) => normalizeDocument([h('ul', {}, ...items.map((children) => h('li', {}, ...children)))]);
