/** API keys and secrets, shared by every store so that they mint and check them the same way. */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** 18 random bytes → 24 base64url characters: a public identifier, unguessable enough to list nothing. */
export function newApiKey(): string {
  return `wk_${randomBytes(18).toString('base64url')}`;
}

/** 32 random bytes (256 bits) → 43 base64url characters: signs tokens (HS256) and authorises REST calls. */
export function newSecret(): string {
  return `wsk_${randomBytes(32).toString('base64url')}`;
}

/** Only this hash is stored; the secret itself is shown once at creation. */
export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/**
 * Constant-time check of `secret` against a stored hash. An unknown key is compared against a dummy hash too, so
 * the timing does not tell which keys exist.
 */
export function secretMatches(stored: Uint8Array | undefined, secret: string): boolean {
  const given = hashSecret(secret);
  const against = stored ?? Buffer.alloc(given.length);
  return against.length === given.length && timingSafeEqual(against, given) && stored !== undefined;
}
