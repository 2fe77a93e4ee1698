/** Mints tokens the way an integrator's backend does (README "Security"): HS256 with the key's secret. */
import { SignJWT } from 'jose';

export interface TokenClaims {
  docId: string;
  permission: 'edit' | 'read';
  user?: string | Record<string, unknown>;
  /** Seconds from now until `exp` (negative: already expired). Default 600. */
  expiresIn?: number;
  /** Seconds from now of `iat` (positive: issued in the future). Default 0. */
  issuedIn?: number;
}

export async function mintToken(secret: string, claims: TokenClaims): Promise<string> {
  const { expiresIn = 600, issuedIn = 0, ...rest } = claims;
  return new SignJWT({ ...rest })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt(Math.floor(Date.now() / 1000) + issuedIn)
    .setExpirationTime(Math.floor(Date.now() / 1000) + expiresIn)
    .sign(new TextEncoder().encode(secret));
}
