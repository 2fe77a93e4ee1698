/**
 * `wave-client/quill` — the session object's base and the Quill adapter, nothing else: the entry for builds restricted
 * to Quill (the `wave-quill-provider` package). Importing it never loads another editor's adapter, whatever the
 * bundler's tree shaking does with the full entry (`wave-client`).
 */
export { CoeditBase } from './coedit.js';
export type { CoeditEvents, CoeditState, AdapterTable } from './coedit.js';
export { createQuillAdapter } from './adapters/quill.js';
export { CoeditError } from './core/errors.js';
export type { ErrorEvent } from './core/errors.js';
export type { Hooks } from './core/config.js';
export type { SessionUser } from './core/session.js';
