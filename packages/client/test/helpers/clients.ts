/** A `Session` core bound to a `StringEditor`, over real WebSockets through a `WsLab` link. */
import { Session, type SessionEvents, type SessionStatus } from '../../src/core/session.js';
import { StringEditor } from './string-editor.js';
import type { LinkOptions, WsLab } from './ws-lab.js';

export interface LabClient {
  name: string;
  editor: StringEditor;
  session: Session;
  /** Every `status` event with its time. */
  statuses: Array<SessionStatus & { at: number }>;
  errors: Array<{ code: string; detail: string; at: number }>;
  started: Promise<void>;
  /** Number of `editor.localUpdates` known to be acked: those made before a `status` with `saved: true`. */
  ackedUpdates: number;
}

export interface LabClientOptions {
  lab: WsLab;
  name: string;
  /** `http://host:port` of the server. */
  url: string;
  apiKey: string;
  docId: string;
  initial?: string;
  link?: LinkOptions;
}

export function labClient(options: LabClientOptions): LabClient {
  const editor = new StringEditor(options.initial ?? '');
  const client: LabClient = {
    name: options.name,
    editor,
    session: undefined as unknown as Session,
    statuses: [],
    errors: [],
    started: Promise.resolve(),
    ackedUpdates: 0,
  };
  client.session = new Session({
    wsUrl: `${options.url.replace(/^http/, 'ws')}/v2/ws`,
    apiKey: options.apiKey,
    docId: options.docId,
    user: { name: options.name },
    binding: editor,
    socketFactory: options.lab.factory(options.name, options.link),
    emit: <K extends keyof SessionEvents>(name: K, payload: SessionEvents[K]) => {
      if (name === 'status') {
        const status = payload as SessionStatus;
        client.statuses.push({ ...status, at: Date.now() });
        // "An edit is acked when saved was true after it": every local update so far is durably stored.
        if (status.saved) client.ackedUpdates = editor.localUpdates.length;
      } else if (name === 'error') {
        const error = payload as { code: string; detail: string };
        client.errors.push({ code: error.code, detail: error.detail, at: Date.now() });
      }
    },
  });
  client.started = client.session.start();
  return client;
}
