/**
 * Key secrets at rest. Tokens are HS256 JWTs signed with a key's secret, so the server must be able to read the
 * secret back; a hash (what the store kept before) is not enough. The secret is stored **sealed**: AES-256-GCM
 * under a server master key that lives outside the store (a 0600 file), with the apiKey as associated data so a
 * sealed secret copied onto another key's row does not open. A leaked database dump alone reveals no secret.
 *
 * The master key comes from `--secret-key-file` / `WAVE_SECRET_KEY_FILE`, else `secret.key` next to the SQLite file
 * (for Postgres: `./data/secret.key`); it is generated there on first use. Servers sharing a Postgres store must
 * share the file.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** Format byte of a sealed secret: 1 = AES-256-GCM, 12-byte IV, 16-byte tag. */
const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretBox {
  constructor(private readonly masterKey: Buffer) {
    if (masterKey.length !== 32) throw new TypeError('master key: expected 32 bytes');
  }

  seal(apiKey: string, secret: string): Uint8Array {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.masterKey, iv);
    cipher.setAAD(Buffer.from(apiKey, 'utf8'));
    const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
  }

  /** The secret, or `undefined` when `sealed` was not sealed for `apiKey` by this master key. */
  open(apiKey: string, sealed: Uint8Array): string | undefined {
    const buf = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
    if (buf.length < 1 + IV_BYTES + TAG_BYTES || buf[0] !== VERSION) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.masterKey, buf.subarray(1, 1 + IV_BYTES));
      decipher.setAAD(Buffer.from(apiKey, 'utf8'));
      decipher.setAuthTag(buf.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(buf.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}

/** Where the master key lives for a store URL when no file is given. */
export function defaultSecretKeyFile(storeUrl: string): string {
  if (storeUrl.startsWith('sqlite:') && storeUrl !== 'sqlite::memory:') {
    return join(dirname(resolve(storeUrl.slice('sqlite:'.length))), 'secret.key');
  }
  return resolve('data', 'secret.key');
}

/**
 * Reads the master key file (64 hex characters or 44 base64 characters), creating it with 32 random bytes and mode
 * 0600 when it does not exist. Two processes creating it at once: each writes a private temporary file and links it
 * into place; `link` is atomic and fails with EEXIST for the loser, so nobody ever reads a half-written key (an
 * exclusive create alone makes the file visible while still empty, to a second server starting at the same time).
 */
export function loadSecretBox(file: string): SecretBox {
  const path = resolve(file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    mkdirSync(dirname(path), { recursive: true });
    const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(temporary, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    try {
      linkSync(temporary, path);
    } catch (createError) {
      if ((createError as NodeJS.ErrnoException).code !== 'EEXIST') throw createError;
    } finally {
      unlinkSync(temporary);
    }
    text = readFileSync(path, 'utf8');
  }
  const trimmed = text.trim();
  const key = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) throw new Error(`${path}: expected a 32-byte key (64 hex characters)`);
  if (process.platform !== 'win32' && (statSync(path).mode & 0o077) !== 0) {
    console.error(`warning: ${path} is readable by other users; chmod 600 it`);
  }
  return new SecretBox(key);
}
