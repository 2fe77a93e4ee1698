/** Starts the server in this process on a throw-away SQLite store (fast tests of protocol details). */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../../src/server.js';
import type { RunningServer, ServerOptions } from '../../src/server.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { silentLogger } from '../../src/log.js';
import type { Store } from '../../src/store/types.js';

export interface InProcessServer extends RunningServer {
  dir: string;
  sqlite: SqliteStore;
  /** Closes the server and the store and removes the folder. */
  cleanup(): Promise<void>;
}

export async function startInProcess(
  options: Omit<ServerOptions, 'store' | 'port'> = {},
  /** Lets a test put a wrapper (delays, failures) between the server and the SQLite store. */
  wrapStore: (store: SqliteStore) => Store = (store) => store,
): Promise<InProcessServer> {
  const dir = await mkdtemp(join(tmpdir(), 'wave-ip-'));
  const sqlite = new SqliteStore(join(dir, 'wave.db'));
  const server = await startServer({ port: 0, log: silentLogger, ...options, store: wrapStore(sqlite) });
  return {
    ...server,
    dir,
    sqlite,
    async cleanup() {
      await server.close();
      await sqlite.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A store whose `appendUpdates` waits while `hold()` is in effect (to observe what happens before a commit). */
export function holdableStore(store: SqliteStore): { store: Store; hold(): void; release(): void } {
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;
  const wrapped = new Proxy(store, {
    get(target, prop) {
      if (prop === 'appendUpdates') {
        return async (entries: Parameters<Store['appendUpdates']>[0]) => {
          if (gate) await gate;
          return target.appendUpdates(entries);
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return {
    store: wrapped,
    hold() {
      gate ??= new Promise<void>((r) => (open = r));
    },
    release() {
      open?.();
      gate = undefined;
    },
  };
}
