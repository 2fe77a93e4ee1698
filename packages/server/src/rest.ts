/**
 * REST API for integrators' backends (DESIGN.md): `/api/v2/docs/:docId`, authorised by the key's **secret**
 * (`Authorization: Bearer SECRET`) together with its apiKey (`?apiKey=KEY` or header `X-Wave-Api-Key`), never by
 * the public apiKey alone. Failed authorisations count against the caller's address (S1 throttling, HTTP 429).
 * Every document is the flat rich text (`DOC_FORMAT`), whichever editor wrote it; rest-render.ts reads it.
 *
 * - `GET` → the content: `?format=text` (default; `text/plain`), `html` (`text/html`), `delta` (`application/json`,
 *   a Quill Delta `{ ops }`), `json` (`{ docId, epoch, text, delta, html }`); or by `Accept`. 404 for a document that
 *   has no session.
 * - `PUT` → replaces the content for everyone (server-side forceSync): `text/plain` body = the text; `text/html`
 *   body = HTML (rest-input.ts); `application/json` `{ "text" }`, `{ "html" }`, `{ "delta": ops | { ops } }` or
 *   a Delta `{ "ops" }` as `GET ?format=delta` answers. 204.
 * - `DELETE` → deletes the document and ends its session (connected clients reconnect into a new one). 204.
 *
 * A refusal is JSON `{ error, code? }`: `error` for people, `code` (`RestErrorCode`) for programs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as Y from 'yjs';
import { docIdProblem } from './auth.js';
import { contentViews } from './rest-render.js';
import { HttpError } from './http-error.js';
import { putContent } from './rest-input.js';
import type { RoomRegistry } from './rooms/registry.js';
import type { SecretBox } from './secret-box.js';
import type { AuthThrottle } from './throttle.js';
import { clientAddress } from './client-address.js';
import type { DocKey, KeyRecord, Store } from './store/types.js';
import { newDoc } from './new-doc.js';

export { HttpError } from './http-error.js';
export type { RestErrorCode } from './http-error.js';

export const REST_PREFIX = '/api/v2/docs/';

/** Largest PUT body; a document is bounded by `maxDocumentBytes` anyway. */
export interface RestOptions {
  store: Store;
  registry: RoomRegistry;
  secretBox: SecretBox;
  throttle: AuthThrottle;
  maxBodyBytes: number;
  /** Read the client address of the auth-failure budget from proxy headers (`--trust-proxy`, client-address.ts). */
  trustProxy?: boolean;
}

export async function handleRest(req: IncomingMessage, res: ServerResponse, url: URL, opts: RestOptions): Promise<void> {
  const address = clientAddress(req, opts.trustProxy ?? false);
  try {
    if (opts.throttle.blocked(address)) throw new HttpError(429, 'too many failed authorisations; retry later');
    let docId: string;
    try {
      docId = decodeURIComponent(url.pathname.slice(REST_PREFIX.length));
    } catch {
      throw new HttpError(400, 'docId is not valid percent-encoding');
    }
    const problem = docIdProblem(docId);
    if (problem !== undefined) throw new HttpError(400, problem);
    const key = await authorize(req, url, opts, address);
    const doc: DocKey = { account: key.account, docId };
    switch (req.method) {
      case 'GET':
      case 'HEAD':
        return await get(req, res, url, doc, opts);
      case 'PUT':
        return await put(req, res, doc, key, opts);
      case 'DELETE':
        await opts.store.deleteDocument(doc);
        opts.registry.get(doc)?.deleted();
        res.writeHead(204).end();
        return;
      default:
        res.setHeader('Allow', 'GET, HEAD, PUT, DELETE');
        throw new HttpError(405, 'method not allowed');
    }
  } catch (error) {
    const status = error instanceof HttpError ? error.status : 500;
    const message = error instanceof HttpError ? error.message : 'server error';
    const code = error instanceof HttpError ? error.code : undefined;
    const body = JSON.stringify(code === undefined ? { error: message } : { error: message, code });
    if (!res.headersSent) res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
    if (!(error instanceof HttpError)) throw error;
  }
}

export async function authorize(req: IncomingMessage, url: URL, opts: RestOptions, address: string): Promise<KeyRecord> {
  const header = req.headers.authorization ?? '';
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  const apiKey = url.searchParams.get('apiKey') ?? (req.headers['x-wave-api-key'] as string | undefined) ?? '';
  if (!match || apiKey === '' || apiKey.length > 256) {
    opts.throttle.failed(address);
    throw new HttpError(401, 'expected Authorization: Bearer SECRET and the apiKey (?apiKey= or X-Wave-Api-Key)');
  }
  const secret = match[1]!;
  const key = await opts.store.findKey(apiKey);
  if (!key || !(await opts.store.verifySecret(apiKey, secret))) {
    opts.throttle.failed(address);
    throw new HttpError(401, 'unknown apiKey, revoked, or wrong secret');
  }
  // Migration: a key created before secrets were sealed gets its secret sealed now, so that tokens work for it.
  if ((await opts.store.findSealedSecret(apiKey)) === undefined) {
    await opts.store.setSealedSecret(apiKey, opts.secretBox.seal(apiKey, secret));
  }
  return key;
}

async function get(req: IncomingMessage, res: ServerResponse, url: URL, doc: DocKey, opts: RestOptions): Promise<void> {
  const room = opts.registry.get(doc);
  let ydoc: Y.Doc;
  let epoch: number;
  let owned = false;
  if (room && !room.closed && !room.stale) {
    ydoc = room.doc;
    epoch = room.epoch;
  } else {
    const session = await opts.store.getSession(doc);
    if (!session) throw new HttpError(404, 'no such document');
    epoch = session.epoch;
    ydoc = newDoc();
    owned = true;
    const stored = await opts.store.loadDocument(doc, epoch);
    ydoc.transact(() => {
      for (const update of stored.updates) Y.applyUpdate(ydoc, update);
    });
  }
  try {
    const format = pickFormat(url.searchParams.get('format'), req.headers.accept);
    // Only the view asked for is rendered: each walks the whole document.
    const views = contentViews(ydoc);
    let body: string;
    let type: string;
    if (format === 'json') {
      body = JSON.stringify({ docId: doc.docId, epoch, text: views.text(), delta: views.delta(), html: views.html() });
      type = 'application/json; charset=utf-8';
    } else if (format === 'delta') {
      body = JSON.stringify({ ops: views.delta() });
      type = 'application/json; charset=utf-8';
    } else if (format === 'html') {
      body = views.html();
      type = 'text/html; charset=utf-8';
    } else {
      body = views.text();
      type = 'text/plain; charset=utf-8';
    }
    res.writeHead(200, {
      'Content-Type': type,
      'Content-Length': Buffer.byteLength(body),
      'Cache-Control': 'no-store',
      // The content is the users' own; a browser opening this URL must not run it.
      'Content-Security-Policy': "default-src 'none'",
      'X-Content-Type-Options': 'nosniff',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  } finally {
    if (owned) ydoc.destroy();
  }
}

async function put(req: IncomingMessage, res: ServerResponse, doc: DocKey, key: KeyRecord, opts: RestOptions): Promise<void> {
  const body = await readBody(req, opts.maxBodyBytes);
  const write = putContent(req.headers['content-type'], body);
  try {
    await opts.registry.withRoom(doc, key, (room) => room.replaceContent(write));
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw new HttpError(409, (error as Error).message);
  }
  res.writeHead(204).end();
}

function pickFormat(query: string | null, accept: string | undefined): 'text' | 'html' | 'delta' | 'json' {
  if (query === 'text' || query === 'html' || query === 'delta' || query === 'json') return query;
  if (query !== null) throw new HttpError(400, 'format: expected text, html, delta or json', 'invalid_format');
  if (accept?.includes('application/json')) return 'json';
  if (accept?.includes('text/html')) return 'html';
  return 'text';
}

export function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new HttpError(413, `body larger than ${limit} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
