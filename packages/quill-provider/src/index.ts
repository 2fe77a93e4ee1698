/**
 * `wave-quill-provider` — the Wave `Coedit` session object restricted to Quill 2, for apps that bundle their code:
 *
 *   import Coedit from 'wave-quill-provider';
 *   await new Coedit().start({ docId, apiKey, user, editor: quill, serverUrl });
 *
 * Same constructor and API as wave.client.js's `Coedit` (API.md); `app` may be left out (it can only be Quill).
 * Only the Quill adapter is included, so the package stays small.
 */
import { CoeditBase, createQuillAdapter } from 'wave-client/quill';

/** The config of `init`/`start` with `app` defaulted to Quill (`'editorC'`). */
function withQuillApp(config: unknown): unknown {
  if (config === null || typeof config !== 'object' || Array.isArray(config) || 'app' in config) return config;
  return { ...config, app: 'editorC' };
}

/** A co-editing session object for one Quill editor: `new Coedit()`, then `start(config)` (or `init(config)`). */
export class Coedit extends CoeditBase {
  constructor() {
    super({ editorC: createQuillAdapter });
  }

  override init(config: unknown): Promise<void> {
    return super.init(withQuillApp(config));
  }

  override start(config?: unknown): Promise<void> {
    return super.start(config === undefined ? undefined : withQuillApp(config));
  }
}

export { CoeditError } from 'wave-client/quill';
export type { CoeditEvents, CoeditState, ErrorEvent, Hooks, SessionUser } from 'wave-client/quill';
export default Coedit;
