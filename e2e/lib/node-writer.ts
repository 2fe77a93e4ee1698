// A collaborator without an editor: a `Coedit` session in this Node process (wave-client's public `CoeditBase` with
// an adapter of the test's own), holding the shared `Y.Doc` itself. It writes what no editor page can (attribute
// names of ours, embeds) and reads the `Y.Text` with its attributes, so a test can check exactly what a browser
// editor left in the document. It talks to the server like any page, over a WebSocket (`ws`).
import * as Y from 'yjs';
import { WebSocket } from 'ws';
import { CoeditBase, type EditorAdapter } from 'wave-client';
import type { WaveServer } from './server.ts';
import { waitUntil } from './util.ts';

/** A Yjs text delta op. */
export interface DeltaOp {
  insert?: string | Record<string, unknown>;
  retain?: number;
  delete?: number;
  attributes?: Record<string, unknown>;
}

export interface NodeWriter {
  readonly ytext: Y.Text;
  /** Waits (bounded) until the shared text satisfies `ok`; throws naming `what` with the last delta seen. */
  until(what: string, ok: (delta: DeltaOp[]) => boolean): Promise<DeltaOp[]>;
  stop(): Promise<void>;
}

/** The `text` adapter of this writer: seeds `seed` (a Delta) when it starts the document, and keeps the doc. */
class DocHolder implements EditorAdapter {
  readonly kind = 'text' as const;
  readonly textName = 'text';
  // No presence UI outside a browser (Coedit skips it without `document`); nothing reads the container.
  readonly container = undefined as unknown as HTMLElement;
  doc: Y.Doc | null = null;

  constructor(private readonly seedOps: DeltaOp[]) {}

  seed(doc: Y.Doc): void {
    doc.getText('text').applyDelta(this.seedOps);
  }

  bind(doc: Y.Doc): void {
    this.doc = doc;
  }

  unbind(): void {
    this.doc = null;
  }

  destroy(): void {}
}

/** Opens `docId` on `server` from Node; `seed` is written when this writer is the first to open the document. */
export async function openNodeWriter(server: WaveServer, docId: string, seed: DeltaOp[] = []): Promise<NodeWriter> {
  (globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;
  const served = (await (await fetch(`${server.url}/demo/config.json`)).json()) as { apiKey: string };
  const holder = new DocHolder(seed);
  const session = new (class extends CoeditBase {
    constructor() {
      super({ text: () => holder });
    }
  })();
  await session.start({ app: 'text', editor: {}, docId, apiKey: served.apiKey, serverUrl: server.url, user: { name: 'Node writer' } });
  const doc = holder.doc;
  if (!doc) throw new Error('the Node writer started without binding its document');
  const ytext = doc.getText('text');
  return {
    ytext,
    async until(what, ok) {
      let last: DeltaOp[] = [];
      await waitUntil(async () => ok((last = ytext.toDelta() as DeltaOp[])), {
        timeoutMs: 15_000,
        message: () => `${what}; the shared text is ${JSON.stringify(last)}`,
      });
      return last;
    },
    stop: () => session.stop(),
  };
}
