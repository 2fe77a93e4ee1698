/**
 * One simulated editor per stack, in Node, as each stack's users run it: Wave's DOM-free `Session` (the core of
 * wave.client.js) over `ws`; y-websocket's `WebsocketProvider`; Hocuspocus's `HocuspocusProvider` with its own socket
 * or multiplexed over one shared `HocuspocusProviderWebsocket`. Each stack loads its own copy of Yjs (the root's for
 * Wave, bench/'s for the peers), so a process only ever loads one stack.
 */
import WebSocket from 'ws';

export type ClientKind = 'wave' | 'y-websocket' | 'hocuspocus' | 'hocuspocus-mux';

/** The part of a Y.Doc the load generator uses (methods only, so it does not matter which Yjs copy made it). */
export interface DocLike {
  clientID: number;
  getText(name?: string): { insert(index: number, text: string): void; length: number; toString(): string };
  on(event: 'afterTransaction', fn: (tr: { local: boolean; beforeState: Map<number, number>; afterState: Map<number, number> }) => void): void;
}

export interface BenchClient {
  doc: DocLike;
  /** Name of the shared text this stack's editors bind to. */
  textName: string;
  /** Resolves when the first sync with the server is complete. */
  synced: Promise<void>;
  /** Wave only: called with the number of local edits not yet acked after commit, whenever it changes. */
  onPending?: (fn: (pending: number) => void) => void;
  destroy(): void;
}

export interface ClientOptions {
  url: string;
  docId: string;
  apiKey?: string;
  /** hocuspocus-mux: the shared socket of this group of documents. */
  shared?: unknown;
}

export interface ClientFactory {
  create(options: ClientOptions): BenchClient;
  /** hocuspocus-mux: one socket carrying many documents. */
  sharedSocket?(url: string): unknown;
}

export async function loadFactory(kind: ClientKind): Promise<ClientFactory> {
  if (kind === 'wave') return waveFactory();
  if (kind === 'y-websocket') return yWebsocketFactory();
  return hocuspocusFactory(kind === 'hocuspocus-mux');
}

async function waveFactory(): Promise<ClientFactory> {
  // The built ESM (what wave.client.js bundles), typed by its source.
  const { Session } = (await import('../../packages/client/dist/esm/core/session.js' as string)) as typeof import('../../packages/client/dist/types/core/session.js');
  return {
    create({ url, docId, apiKey }) {
      let doc!: DocLike;
      let boundResolve!: () => void;
      const bound = new Promise<void>((r) => (boundResolve = r));
      const pendingListeners: Array<(n: number) => void> = [];
      // A string editor reduced to what the session needs: the text lives in the Y.Doc only.
      const binding = {
        textName: 'text',
        seed() {},
        bind(d: unknown) {
          doc = d as DocLike;
          boundResolve();
        },
        unbind() {},
      };
      const session = new Session({
        wsUrl: `${url.replace(/^http/, 'ws')}/v2/ws`,
        apiKey: apiKey!,
        docId,
        user: { name: 'bench' },
        binding: binding as never,
        socketFactory: (u: string) => new WebSocket(u) as never,
        emit: (name: string, payload: unknown) => {
          if (name === 'status') for (const fn of pendingListeners) fn((payload as { pending: number }).pending);
          if (process.env.BENCH_DEBUG) console.error(performance.now().toFixed(0), name, JSON.stringify(payload));
        },
      });
      const synced = session.start().then(() => bound);
      const client: BenchClient = {
        get doc() {
          return doc;
        },
        textName: 'text',
        synced,
        onPending: (fn) => pendingListeners.push(fn),
        destroy: () => void session.stop().catch(() => {}),
      };
      return client;
    },
  };
}

async function yWebsocketFactory(): Promise<ClientFactory> {
  const Y = await import('yjs');
  const { WebsocketProvider } = await import('y-websocket');
  return {
    create({ url, docId }) {
      const doc = new Y.Doc();
      // disableBc: in Node, lib0's BroadcastChannel fallback is an in-process bus, so two clients of one document in
      // one load-generator process would get each other's edits without the server (a browser's other tabs, in the
      // README's terms). Every edit must cross the server, as between two browsers.
      const provider = new WebsocketProvider(url.replace(/^http/, 'ws'), docId, doc, { WebSocketPolyfill: WebSocket as never, disableBc: true });
      const synced = new Promise<void>((res) => {
        const on = (isSynced: boolean): void => {
          if (!isSynced) return;
          provider.off('sync', on);
          res();
        };
        provider.on('sync', on);
      });
      return { doc: doc as unknown as DocLike, textName: 'quill', synced, destroy: () => provider.destroy() };
    },
  };
}

async function hocuspocusFactory(multiplex: boolean): Promise<ClientFactory> {
  const Y = await import('yjs');
  const { HocuspocusProvider, HocuspocusProviderWebsocket } = await import('@hocuspocus/provider');
  return {
    sharedSocket: (url: string) => new HocuspocusProviderWebsocket({ url: url.replace(/^http/, 'ws'), WebSocketPolyfill: WebSocket }),
    create({ url, docId, shared }) {
      const doc = new Y.Doc();
      let resolveSynced!: () => void;
      const synced = new Promise<void>((r) => (resolveSynced = r));
      const common = { name: docId, document: doc, onSynced: () => resolveSynced() };
      const provider = multiplex
        ? new HocuspocusProvider({ ...common, websocketProvider: shared as InstanceType<typeof HocuspocusProviderWebsocket> })
        : new HocuspocusProvider({ ...common, url: url.replace(/^http/, 'ws'), WebSocketPolyfill: WebSocket } as never);
      if (multiplex) provider.attach();
      return { doc: doc as unknown as DocLike, textName: 'quill', synced, destroy: () => provider.destroy() };
    },
  };
}
