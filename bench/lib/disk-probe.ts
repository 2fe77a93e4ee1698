/**
 * How long a small SQLite commit takes on this machine's disk right now (WAL, synchronous=FULL, like Wave's store):
 * better-sqlite3 commits on the event loop, so this is how long each of Wave's group commits blocks it. Measured at
 * the start and end of a run, so that a reader can tell a quiet disk from one shared with busy neighbours.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './servers.ts';
import { distribution, type Distribution } from './stats.ts';

const COMMITS = 200;

export function diskCommitProbe(): Distribution | null {
  const dir = mkdtempSync(join(tmpdir(), 'wave-bench-disk-'));
  try {
    const require = createRequire(join(REPO_ROOT, 'packages', 'server', 'package.json'));
    const Database = require('better-sqlite3') as new (path: string) => {
      pragma(s: string): unknown;
      exec(s: string): void;
      prepare(s: string): { run(...a: unknown[]): unknown };
      transaction<A extends unknown[]>(f: (...a: A) => void): (...a: A) => void;
      close(): void;
    };
    const db = new Database(join(dir, 'probe.db'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE u (id INTEGER PRIMARY KEY, d BLOB)');
    const insert = db.prepare('INSERT INTO u (d) VALUES (?)');
    const tx = db.transaction((n: number) => {
      for (let i = 0; i < n; i++) insert.run(Buffer.alloc(40));
    });
    const times: number[] = [];
    for (let i = 0; i < COMMITS; i++) {
      const t = performance.now();
      tx(2);
      times.push(performance.now() - t);
    }
    db.close();
    return distribution(times);
  } catch {
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
