/** Opens a `Store` from a store URL (`--store` / `WAVE_STORE`). */
import { PostgresStore, parsePostgresUrl } from './postgres.js';
import { SqliteStore } from './sqlite.js';
import type { Store } from './types.js';

/** A store URL that names no supported backend; the message is for people (the CLI prints it). */
export class StoreUrlError extends Error {
  override readonly name = 'StoreUrlError';
}

/**
 * `sqlite:PATH` (relative to the working directory; `sqlite::memory:` for a throw-away store), or
 * `postgres://USER@HOST:PORT/DB[?schema=NAME]` (`postgresql://` too). Opening does not connect: a Postgres store
 * connects and migrates its schema at its first call.
 */
export function openStore(url: string): Store {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (path === '') throw new StoreUrlError(`store ${JSON.stringify(url)}: expected sqlite:PATH, e.g. sqlite:./data/wave.db`);
    return new SqliteStore(path);
  }
  if (/^postgres(ql)?:\/\//i.test(url)) {
    try {
      return new PostgresStore(parsePostgresUrl(url));
    } catch (error) {
      throw new StoreUrlError(`store ${redact(url)}: ${(error as Error).message}`);
    }
  }
  throw new StoreUrlError(`store ${JSON.stringify(redact(url))}: expected sqlite:PATH or postgres://USER@HOST/DATABASE`);
}

/** The URL without its password, for messages. */
function redact(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*:)[^@/]*@/i, '$1***@');
}
