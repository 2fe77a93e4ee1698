/**
 * Failed webhook deliveries over REST, authorised like the REST API (the key's secret as `Authorization: Bearer`,
 * the apiKey as `?apiKey=` or `X-Wave-Api-Key`); a key sees and replays only its own endpoints' events.
 * - `GET /api/v2/webhooks/failed` → `{ events: [{ id, endpointId, type, docId, attempts, lastError, createdAt }] }`
 * - `POST /api/v2/webhooks/replay` with `{ "ids": ["msg_…"] }` or `{ "all": true }` → `{ replayed: N }`: those
 *   failed events are delivered again (same id), with a fresh retry schedule.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseJsonSafely } from 'wave-protocol';
import { HttpError, authorize, readBody } from '../rest.js';
import type { RestOptions } from '../rest.js';

export const WEBHOOKS_REST_PREFIX = '/api/v2/webhooks/';

export async function handleWebhooksRest(req: IncomingMessage, res: ServerResponse, url: URL, opts: RestOptions): Promise<void> {
  const address = req.socket.remoteAddress ?? '';
  try {
    if (opts.throttle.blocked(address)) throw new HttpError(429, 'too many failed authorisations; retry later');
    const action = url.pathname.slice(WEBHOOKS_REST_PREFIX.length);
    if (action !== 'failed' && action !== 'replay') throw new HttpError(404, 'not found');
    const expected = action === 'failed' ? 'GET' : 'POST';
    if (req.method !== expected) {
      res.setHeader('Allow', expected);
      throw new HttpError(405, 'method not allowed');
    }
    const key = await authorize(req, url, opts, address);
    const failed = await opts.store.listEvents('failed', key.apiKey);
    let body: unknown;
    if (action === 'failed') {
      body = {
        events: failed.map((e) => ({ id: e.id, endpointId: e.endpointId, type: e.type, docId: e.doc.docId, attempts: e.attempts, lastError: e.lastError, createdAt: e.createdAt })),
      };
    } else {
      const raw = await readBody(req, 1024 * 1024);
      let request: { ids?: unknown; all?: unknown } | null;
      try {
        request = parseJsonSafely(raw) as typeof request;
      } catch {
        throw new HttpError(400, 'the body is not JSON');
      }
      const own = new Set(failed.map((e) => e.id));
      let ids: string[];
      if (request?.all === true) ids = [...own];
      else if (Array.isArray(request?.ids) && request.ids.every((id) => typeof id === 'string')) ids = (request.ids as string[]).filter((id) => own.has(id));
      else throw new HttpError(400, 'expected JSON { "ids": ["msg_…"] } or { "all": true }');
      body = { replayed: ids.length === 0 ? 0 : await opts.store.replayEvents(ids, Date.now()) };
    }
    const text = JSON.stringify(body);
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-store' });
    res.end(text);
  } catch (error) {
    const status = error instanceof HttpError ? error.status : 500;
    const text = JSON.stringify({ error: error instanceof HttpError ? error.message : 'server error' });
    if (!res.headersSent) res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
    if (!(error instanceof HttpError)) throw error;
  }
}
