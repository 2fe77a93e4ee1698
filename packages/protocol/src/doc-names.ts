/**
 * Names of the shared types in a Wave document, for both ends: the client's adapters and session open them, the
 * server's REST views read them and its forceSync writes them. A document holds `TEXT_TYPE` (written in the format
 * `DOC_FORMAT`) and the `META_MAP`.
 */

/**
 * The document format a client writes and the server stores (PROTOCOL.md [P2d]): all content is one flat `Y.Text`
 * named `TEXT_TYPE` in the Quill Delta convention (wave-richtext, RICHTEXT.md). Sent in `Hello.format`; the server
 * refuses a client of any other format, or of none (earlier clients wrote the `Y.XmlFragment` tree), before any
 * document byte, so that two formats never meet in one document. A new value means a new layout of the shared types.
 */
export const DOC_FORMAT = 'flat-delta/1';

/**
 * The `Y.Text` every editor kind opens: `doc.getText(TEXT_TYPE)`. Equal to wave-richtext's `RICHTEXT_TYPE`, the flat
 * rich text in Quill's Delta convention, which the textarea and CodeMirror show as its plain text.
 */
export const TEXT_TYPE = 'text';

/** The `Y.Map` of session metadata: `doc.getMap(META_MAP)`. */
export const META_MAP = 'wave';

/**
 * Key of `META_MAP` whose value (a string unique to each replacement) changes on every forceSync, from a client or a
 * REST `PUT`: each peer that sees it change remotely clears its undo stacks.
 */
export const META_REPLACED_KEY = 'replaced';
