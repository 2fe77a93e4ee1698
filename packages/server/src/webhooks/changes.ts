/**
 * The pull feed: `GET /api/v2/changes?since=CURSOR&limit=N`, authorised like the REST API (the key's secret as
 * `Authorization: Bearer`, the apiKey as `?apiKey=` or `X-Wave-Api-Key`). Answers
 * `{ changes: [{ docId, version, epoch, deleted, changedAt, cursor }], next }` — the account's documents whose
 * latest stored change comes after `since`, oldest first, at most `limit` (1–1000, default 100). Pass `next` as
 * the following `since`; an empty `changes` means the caller is up to date (keep `next`, poll again later).
 *
 * Never skips a change: cursors are handed out in commit order (store: change_cursor), and a document changed
 * again moves to a later cursor, so a caller that reads to the end sees every document's latest version. The
 * cursor is stored, so it survives restarts and is valid on every server sharing the store.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError, authorize } from '../rest.js';
import type { RestOptions } from '../rest.js';

export const CHANGES_PATH = '/api/v2/changes';
const MAX_LIMIT = 1000;

export async function handleChanges(req: IncomingMessage, res: ServerResponse, url: URL, opts: RestOptions): Promise<void> {
  const address = req.socket.remoteAddress ?? '';
  try {
    if (opts.throttle.blocked(address)) throw new HttpError(429, 'too many failed authorisations; retry later');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      throw new HttpError(405, 'method not allowed');
    }
    const key = await authorize(req, url, opts, address);
    const since = url.searchParams.get('since') ?? '0';
    if (!/^\d{1,15}$/.test(since)) throw new HttpError(400, 'since: expected a cursor from a previous answer (or 0)');
    const limitText = url.searchParams.get('limit') ?? '100';
    if (!/^\d{1,4}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > MAX_LIMIT) {
      throw new HttpError(400, `limit: expected an integer from 1 to ${MAX_LIMIT}`);
    }
    const changes = await opts.store.listChanges(key.account, Number(since), Number(limitText));
    const next = changes.length > 0 ? String(changes[changes.length - 1]!.cursor) : since;
    const body = JSON.stringify({
      changes: changes.map((c) => ({ docId: c.docId, version: c.version, epoch: c.epoch, deleted: c.deleted, changedAt: c.changedAt, cursor: String(c.cursor) })),
      next,
    });
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : body);
  } catch (error) {
    const status = error instanceof HttpError ? error.status : 500;
    const body = JSON.stringify({ error: error instanceof HttpError ? error.message : 'server error' });
    if (!res.headersSent) res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
    if (!(error instanceof HttpError)) throw error;
  }
}
