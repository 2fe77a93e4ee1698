/**
 * Access tokens (issue #6, DESIGN.md "Tokens"): a JWT signed HS256 with the key's secret (the UTF-8 bytes of the
 * secret string exactly as `keys create` printed it), verified with `jose`. Claims:
 * - `docId`: the document, exactly, or a prefix pattern ending in `*` (`"project-7/*"` opens every docId starting
 *   with `project-7/`); a lone `*` opens every document of the key's account;
 * - `permission`: `edit` or `read`;
 * - `user` (optional): the identity shown to others, a name or `{ name, email, avatar, id, color }`; it replaces
 *   whatever the client claims;
 * - `exp` (required), and `nbf`/`iat` when present, checked with ±5 minutes of clock skew: a token whose `iat` or
 *   `nbf` is more than 5 minutes ahead of this server's clock is refused, like one whose `exp` is more than 5 minutes
 *   behind it.
 * A token is checked when the connection joins, and again for each fresh token the client sends in-band
 * (`Token`, PROTOCOL.md P2b); the connection is closed when the newest token's `exp` + the skew passes (token-lease.ts).
 */
import { errors, jwtVerify } from 'jose';
import type { UserInput } from 'wave-protocol';

/** Tolerated clock difference between the integrator's backend and this server. */
export const CLOCK_SKEW_SECONDS = 300;

export interface TokenGrant {
  permission: 'edit' | 'read';
  /** The identity the token asserts, when it carries one. */
  user: UserInput | undefined;
  /** Seconds since the Unix epoch. */
  exp: number;
}

export type TokenCheck =
  | { ok: true; grant: TokenGrant }
  /** `validation_error` (4401): forged, expired, malformed; `access_denied` (4403): valid, but not for this document. */
  | { ok: false; code: 'validation_error' | 'access_denied'; detail: string };

export function docIdMatches(pattern: string, docId: string): boolean {
  if (pattern.endsWith('*')) return docId.startsWith(pattern.slice(0, -1));
  return pattern === docId;
}

export async function verifyToken(token: string, secret: string, docId: string): Promise<TokenCheck> {
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, new TextEncoder().encode(secret), {
      algorithms: ['HS256'],
      clockTolerance: CLOCK_SKEW_SECONDS,
      requiredClaims: ['exp'],
    }));
  } catch (error) {
    if (error instanceof errors.JWTExpired) return { ok: false, code: 'validation_error', detail: 'token expired' };
    if (error instanceof errors.JWSSignatureVerificationFailed) {
      return { ok: false, code: 'validation_error', detail: 'token signature does not match this apiKey' };
    }
    return { ok: false, code: 'validation_error', detail: `bad token: ${(error as Error).message}`.slice(0, 200) };
  }
  // jose checks `iat` only against a maximum token age; a token issued in the future is as suspect as one not yet
  // valid (`nbf`), so it gets the same tolerance.
  const iat = payload['iat'];
  if (typeof iat === 'number' && iat > Date.now() / 1000 + CLOCK_SKEW_SECONDS) {
    return { ok: false, code: 'validation_error', detail: `token: iat is in the future (more than ${CLOCK_SKEW_SECONDS / 60} minutes ahead of the server's clock)` };
  }
  const pattern = payload['docId'];
  if (typeof pattern !== 'string' || pattern === '' || pattern.length > 1024) {
    return { ok: false, code: 'validation_error', detail: 'token: docId claim missing (a docId or a prefix pattern ending in *)' };
  }
  const permission = payload['permission'];
  if (permission !== 'edit' && permission !== 'read') {
    return { ok: false, code: 'validation_error', detail: 'token: permission claim must be "edit" or "read"' };
  }
  if (!docIdMatches(pattern, docId)) return { ok: false, code: 'access_denied', detail: 'token is not valid for this document' };
  const claimed = payload['user'];
  let user: UserInput | undefined;
  if (typeof claimed === 'string') user = { name: claimed };
  else if (claimed !== null && typeof claimed === 'object' && !Array.isArray(claimed)) user = claimed as UserInput;
  return { ok: true, grant: { permission, user, exp: payload['exp'] as number } };
}
