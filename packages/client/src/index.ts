/**
 * `wave-client` — the public entry (ESM). `new Coedit()` binds one editor of any kind included here.
 */
import { CoeditBase, type AdapterTable } from './coedit.js';
import { createCodemirrorAdapter } from './adapters/codemirror.js';
import { createFroalaAdapter } from './adapters/froala.js';
import { createQuillAdapter } from './adapters/quill.js';
import { createTextareaAdapter } from './adapters/textarea.js';
import { createTinymceAdapter } from './adapters/tinymce.js';

/** Every editor kind in this build. */
const ADAPTERS: AdapterTable = {
  text: createTextareaAdapter,
  editorB: createCodemirrorAdapter,
  editorC: createQuillAdapter,
  editorA: createFroalaAdapter,
  tinymce: createTinymceAdapter,
};

/** A co-editing session object (API.md): `new Coedit()`, then `init(config)` or `start(config)`. */
export class Coedit extends CoeditBase {
  constructor() {
    super(ADAPTERS);
  }
}

export { CoeditBase, setDefaultServerUrl } from './coedit.js';
export type { CoeditEvents, CoeditState, AdapterTable } from './coedit.js';
export { CoeditError } from './core/errors.js';
export type { ErrorEvent } from './core/errors.js';
export type { NormalizedConfig, EditorKind, Hooks } from './core/config.js';
export type { SessionUser } from './core/session.js';
export type { EditorAdapter, AdapterFactory } from './adapters/types.js';
/** For builds restricted to one editor kind (the Quill provider package): `class extends CoeditBase` with it alone. */
export { createQuillAdapter } from './adapters/quill.js';
/** For the TinyMCE plugin's own build (editor D only). */
export { createTinymceAdapter } from './adapters/tinymce.js';
export default Coedit;
