/**
 * REST API for integrators' backends (DESIGN.md): `/api/v2/docs/:docId`, authorised by the key's **secret**
 * (`Authorization: Bearer SECRET`) together with its apiKey (`?apiKey=KEY` or header `X-Wave-Api-Key`), never by
 * the public apiKey alone. Failed authorisations count against the caller's address (S1 throttling, HTTP 429).
 *
 * - `GET` → the content: `?format=text` (default; `text/plain`), `html` (`text/html`), `json`
 *   (`{ docId, epoch, text, delta, html }`); or by `Accept`. 404 for a document that has no session.
 * - `PUT` → replaces the content for everyone (server-side forceSync): `text/plain` body = the text;
 *   `application/json` `{ "text": "…" }` or `{ "delta": [ops] }`. 204.
 * - `DELETE` → deletes the document and ends its session (connected clients reconnect into a new one). 204.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as Y from 'yjs';
import { TEXT_TYPE, parseJsonSafely } from 'wave-protocol';
import { docIdProblem } from './auth.js';
import { contentViews } from './rest-render.js';
import { DEFAULT_MAX_VALUE_DEPTH, valueDepth } from './rooms/depth-check.js';
import type { RoomRegistry } from './rooms/registry.js';
import type { SecretBox } from './secret-box.js';
import type { AuthThrottle } from './throttle.js';
import { clientAddress } from './client-address.js';
import type { DocKey, KeyRecord, Store } from './store/types.js';

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

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
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
    const body = JSON.stringify({ error: message });
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
    ydoc = new Y.Doc();
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
  const type = (req.headers['content-type'] ?? 'text/plain').split(';')[0]!.trim().toLowerCase();
  let write: (ydoc: Y.Doc) => void;
  if (type === 'text/plain') {
    write = (ydoc) => replaceText(ydoc, body);
  } else if (type === 'application/json') {
    let value: unknown;
    try {
      value = parseJsonSafely(body);
    } catch {
      throw new HttpError(400, 'body is not JSON');
    }
    const o = (value ?? {}) as Record<string, unknown>;
    if (typeof o['text'] === 'string') {
      const text = o['text'];
      write = (ydoc) => replaceText(ydoc, text);
    } else if (Array.isArray(o['delta']) && o['delta'].every((op) => op !== null && typeof op === 'object')) {
      const ops = o['delta'] as Array<Record<string, unknown>>;
      // An op is `{ insert, attributes: { name: value } }`: two levels above its values (rooms/depth-check.ts).
      if (ops.some((op) => valueDepth(op, DEFAULT_MAX_VALUE_DEPTH + 2) > DEFAULT_MAX_VALUE_DEPTH + 2)) {
        throw new HttpError(400, `delta: embeds and attribute values may be nested at most ${DEFAULT_MAX_VALUE_DEPTH} levels deep`);
      }
      write = (ydoc) => {
        const t = ydoc.getText(TEXT_TYPE);
        t.delete(0, t.length);
        t.applyDelta(ops);
      };
    } else {
      throw new HttpError(400, 'expected { "text": string } or { "delta": [ops] }');
    }
  } else {
    throw new HttpError(415, 'expected text/plain or application/json (HTML documents: replace them from an editor with forceSync)');
  }
  try {
    await opts.registry.withRoom(doc, key, (room) => room.replaceContent(write));
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw new HttpError(409, (error as Error).message);
  }
  res.writeHead(204).end();
}

function replaceText(ydoc: Y.Doc, text: string): void {
  const t = ydoc.getText(TEXT_TYPE);
  t.delete(0, t.length);
  t.insert(0, text);
}

function pickFormat(query: string | null, accept: string | undefined): 'text' | 'html' | 'json' {
  if (query === 'text' || query === 'html' || query === 'json') return query;
  if (query !== null) throw new HttpError(400, 'format: expected text, html or json');
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
