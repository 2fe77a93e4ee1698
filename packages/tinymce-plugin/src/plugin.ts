/**
 * TinyMCE external plugin `wave` (editor D of API.md). Configured by
 *
 *   tinymce.init({
 *     external_plugins: { wave: 'https://wave.example.com/waveEditorD/2.x/plugin.min.js' },
 *     wave: { docId, apiKey, user, autoStart?, serverUrl?, token?, hooks?, … },   // API.md config, no app/editor
 *   })
 *
 * The plugin creates the session with the editor itself and exposes it at `tinymce.get(id).plugins.wave.coedit`
 * (plus `ready`, the Promise of its `init`). It uses the page's `window.Coedit` when wave.client.js is loaded
 * (one copy of Yjs on the page), else the TinyMCE-only client it carries. The server defaults to the origin the
 * plugin was loaded from. The session starts when the editor fires `init` (unless `autoStart: false`; then call
 * `coedit.start()`), and stops when the editor is removed.
 */

interface CoeditLike {
  init(config: unknown): Promise<void>;
  start(config?: unknown): Promise<void>;
  stop(): Promise<void>;
  on(name: string, fn: (payload: unknown) => void): () => void;
  getState(): string;
}

type CoeditClass = new () => CoeditLike;

interface EditorLike {
  id: string;
  options?: { register(name: string, spec: { processor: string; default?: unknown }): void; get(name: string): unknown; isRegistered?(name: string): boolean };
  getParam?(name: string): unknown;
  on(name: string, fn: () => void): void;
}

interface TinymceGlobal {
  PluginManager: { add(name: string, plugin: (editor: EditorLike, url: string) => unknown): void };
}

/** Defined by build.mjs around this file: evaluates the carried client on first use. */
declare const __waveCarriedClient: () => { Coedit: CoeditClass };

const PLUGIN_NAME = 'wave';

let carried: CoeditClass | undefined;

function coeditClass(): CoeditClass {
  const global = (globalThis as { Coedit?: unknown }).Coedit;
  if (typeof global === 'function') return global as CoeditClass;
  carried ??= __waveCarriedClient().Coedit;
  return carried;
}

function readOptions(editor: EditorLike): unknown {
  const options = editor.options;
  if (options) {
    if (!options.isRegistered?.(PLUGIN_NAME)) options.register(PLUGIN_NAME, { processor: 'object' });
    return options.get(PLUGIN_NAME);
  }
  return editor.getParam?.(PLUGIN_NAME); // TinyMCE 5
}

function plugin(editor: EditorLike, url: string): { coedit: CoeditLike; ready: Promise<void>; getMetadata(): { name: string; url: string } } {
  const origin = new URL(url, location.href).origin;
  const coedit = new (coeditClass())();
  let settle!: { resolve: () => void; reject: (err: unknown) => void };
  const ready = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  // A host that does not await `ready` still sees the failure through `coedit.on('error')`.
  ready.catch(() => {});
  editor.on('init', () => {
    const options = readOptions(editor);
    const config = { serverUrl: origin, ...(typeof options === 'object' && options !== null ? options : {}), app: 'tinymce', editor };
    coedit.init(config).then(settle.resolve, settle.reject);
  });
  editor.on('remove', () => {
    void coedit.stop();
  });
  return { coedit, ready, getMetadata: () => ({ name: 'Wave co-editing', url: origin }) };
}

(globalThis as unknown as { tinymce: TinymceGlobal }).tinymce.PluginManager.add(PLUGIN_NAME, plugin);
