/**
 * The REST API's views of a document (rest.ts) and the content webhooks send. Every document is one flat `Y.Text`
 * (`TEXT_TYPE`, `DOC_FORMAT`) in the Quill Delta convention, whichever editor wrote it, and every view is read from
 * it through wave-richtext (RICHTEXT.md):
 * - `html`: the shared renderer, every text and attribute value escaped and re-checked ([RT-X1], RELIABILITY.md
 *   S18), the same HTML the rich editors show;
 * - `text`: one line per line of the document, a break as a line break, an image as nothing ([RT-R3]), each line
 *   ended by its `"\n"` as in the document (so a plain text written by `PUT` reads back unchanged);
 * - `delta`: the insert ops as stored.
 */
import type * as Y from 'yjs';
import { TEXT_TYPE } from 'wave-protocol';
import { docLines, readLines, renderHtml, renderText, type Op } from 'wave-richtext';

/** A document's views in the REST API's formats, each rendered when called (each reads the whole document). */
export interface ContentViews {
  text(): string;
  delta(): Op[];
  html(): string;
}

export function contentViews(ydoc: Y.Doc): ContentViews {
  const ytext = ydoc.getText(TEXT_TYPE);
  return {
    text: () => {
      // renderText joins lines with "\n"; the last line's own "\n", when the document has it, is put back.
      const delta = ytext.toDelta() as Op[];
      const text = renderText(readLines(delta));
      const last = delta[delta.length - 1]?.insert;
      return typeof last === 'string' && last.endsWith('\n') ? `${text}\n` : text;
    },
    delta: () => ytext.toDelta() as Op[],
    html: () => renderHtml(docLines(ytext)),
  };
}

/** All of a document's views (`?format=json` minus docId and epoch); webhooks send the same. */
export function renderContent(ydoc: Y.Doc): { text: string; delta: Op[]; html: string } {
  const views = contentViews(ydoc);
  return { text: views.text(), delta: views.delta(), html: views.html() };
}
