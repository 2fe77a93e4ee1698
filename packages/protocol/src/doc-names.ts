/**
 * Names of the shared types in a Wave document, for both ends: the client's adapters and session open them, the
 * server's REST views read them and its forceSync writes them. A document holds the content type of the editor kind
 * that seeded it (`TEXT_TYPE` or `HTML_TYPE`) and the `META_MAP`.
 */

/**
 * The `Y.Text` of the plain-text and Delta editors (`<textarea>`, CodeMirror 5, Quill): `doc.getText(TEXT_TYPE)`.
 * Equal to wave-richtext's `RICHTEXT_TYPE`, the flat rich text, which is Quill's Delta convention on the same type.
 */
export const TEXT_TYPE = 'text';

/** The `Y.XmlFragment` of the rich-text HTML editors (Froala, TinyMCE): `doc.getXmlFragment(HTML_TYPE)`. */
export const HTML_TYPE = 'html';

/** The `Y.Map` of session metadata: `doc.getMap(META_MAP)`. */
export const META_MAP = 'wave';

/**
 * Key of `META_MAP` whose value (a string unique to each replacement) changes on every forceSync, from a client or a
 * REST `PUT`: each peer that sees it change remotely clears its undo stacks.
 */
export const META_REPLACED_KEY = 'replaced';
