/** Checks and normalises `NewKey` input; shared by every store so that they accept exactly the same keys. */
import { normalizeOriginSpec } from '../origin.js';
import type { NewKey } from './types.js';

export interface ValidKey {
  name: string;
  account: string;
  origins: string[];
  requireToken: boolean;
  persistent: boolean;
  maxUsers: number | null;
}

/** Longest key name or account; they are labels, not content. */
const MAX_LABEL = 200;
/** Largest `--max-users`; far above what one room serves, it only catches typos. */
const MAX_USERS_LIMIT = 100_000;

export function validateNewKey(input: NewKey): ValidKey {
  const name = label('name', input.name);
  const account = input.account === undefined ? name : label('account', input.account);
  const origins = validateOrigins(input.origins ?? []);
  const maxUsers = input.maxUsers ?? null;
  if (maxUsers !== null && (!Number.isSafeInteger(maxUsers) || maxUsers < 1 || maxUsers > MAX_USERS_LIMIT)) {
    throw new TypeError(`maxUsers ${String(maxUsers)}: expected an integer from 1 to ${MAX_USERS_LIMIT}`);
  }
  return { name, account, origins, requireToken: input.requireToken === true, persistent: input.persistent === true, maxUsers };
}

/** Normalised allow-list: each entry checked by `normalizeOriginSpec`, duplicates dropped. Throws `TypeError`. */
export function validateOrigins(origins: readonly string[]): string[] {
  return [...new Set(origins.map((o) => normalizeOriginSpec(o)))];
}

function label(field: string, value: unknown): string {
  // eslint-disable-next-line no-control-regex
  if (typeof value !== 'string' || value.trim() === '' || value.length > MAX_LABEL || /[\u0000-\u001f\u007f]/.test(value)) {
    throw new TypeError(`${field} ${JSON.stringify(value)}: expected 1–${MAX_LABEL} printable characters`);
  }
  return value;
}
