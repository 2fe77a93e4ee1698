/**
 * Authorisation of `GET /v2/ws?apiKey=…&docId=…` upgrades (P1). Decides before any document byte is sent:
 * - missing, unknown or revoked apiKey, a bad docId, or an `Origin` outside the key's allow-list (S11) → upgraded
 *   only to send `Error{validation_error}` and close, because a browser cannot read the HTTP status of a failed
 *   upgrade: a page refused with HTTP 403 would only see a lost connection and retry forever, while the integrator
 *   must learn why (the detail names the page's origin and how to allow it). Nothing of the document is sent.
 * Keys are read from the store on every upgrade (one indexed lookup), so keys created or revoked with the CLI while
 * the server runs take effect at the next connection; connections already open are re-checked when the store
 * reports the change (ws/key-guard.ts).
 */
import type { IncomingMessage } from 'node:http';
import { CloseCode } from 'wave-protocol';
import type { ServerErrorCode } from 'wave-protocol';
import { isOriginAllowed } from './origin.js';
import type { DocKey, KeyRecord, Store } from './store/types.js';

export { isOriginAllowed } from './origin.js';

/** Path of the WebSocket endpoint. */
export const WS_PATH = '/v2/ws';

/** Longest docId (API.md: 1–256 characters). */
export const MAX_DOC_ID_LENGTH = 256;

export type UpgradeDecision =
  /** Refuse without upgrading. */
  | { kind: 'http'; status: number; reason: string }
  /** Upgrade, send `Error{code, detail}` and close with `close`. */
  | { kind: 'refuse'; code: ServerErrorCode; detail: string; close: number }
  /** `origin`/`host`: the request's headers, kept to re-check the connection when the key changes (S15). */
  | { kind: 'accept'; apiKey: string; docId: string; key: KeyRecord; doc: DocKey; origin: string | undefined; host: string | undefined };

/** Why `docId` is not acceptable, or `undefined` when it is: 1–256 characters, no control characters. */
export function docIdProblem(docId: string | null | undefined): string | undefined {
  if (docId === null || docId === undefined || docId === '') return 'docId is missing';
  if (docId.length > MAX_DOC_ID_LENGTH) return `docId is longer than ${MAX_DOC_ID_LENGTH} characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(docId)) return 'docId contains control characters';
  return undefined;
}

export async function authorizeUpgrade(req: IncomingMessage, store: Pick<Store, 'findKey'>): Promise<UpgradeDecision> {
  let url: URL;
  try {
    url = new URL(req.url ?? '/', 'http://wave.invalid');
  } catch {
    return { kind: 'http', status: 400, reason: 'Bad Request' };
  }
  if (url.pathname !== WS_PATH) return { kind: 'http', status: 404, reason: 'Not Found' };

  const apiKeys = url.searchParams.getAll('apiKey');
  const docIds = url.searchParams.getAll('docId');
  const unauthorized = (detail: string): UpgradeDecision => ({
    kind: 'refuse',
    code: 'validation_error',
    detail,
    close: CloseCode.Unauthorized,
  });
  if (apiKeys.length !== 1 || apiKeys[0] === '') return unauthorized('apiKey is missing from the connection URL');
  const apiKey = apiKeys[0]!;
  if (apiKey.length > 256) return unauthorized('unknown apiKey');
  const key = await store.findKey(apiKey);
  if (!key) return unauthorized('unknown apiKey');
  if (key.revokedAt !== null) return unauthorized('this apiKey has been revoked');

  const origin = req.headers.origin;
  if (!isOriginAllowed(origin, key.origins, req.headers.host)) return unauthorized(originRefusal(origin ?? ''));

  const problem = docIds.length > 1 ? 'docId is given more than once' : docIdProblem(docIds[0]);
  if (problem !== undefined) {
    return { kind: 'refuse', code: 'validation_error', detail: problem, close: CloseCode.BadMessage };
  }
  const docId = docIds[0]!;
  return { kind: 'accept', apiKey, docId, key, doc: { account: key.account, docId }, origin: req.headers.origin, host: req.headers.host };
}

/**
 * The detail of a refused `Origin` (S11): names the page's origin (quoted, at most 200 characters: the header is the
 * client's) and the fix. The key's allow-list itself is not shown: it is the key owner's business, not the page's.
 */
export function originRefusal(origin: string): string {
  const shown = JSON.stringify(origin.slice(0, 200));
  return (
    `this page's origin ${shown} is not allowed for this apiKey; ` +
    `allow it with a key created with: wave-server keys create --name NAME --origin ${shown}`
  );
}
