/**
 * Runs the real built server (`packages/server/dist/cli.js start --port 0 …`) as a child process on a throw-away
 * SQLite store (or the `store` URL given, e.g. Postgres, plus `--redis` for fan-out), and the real CLI for keys.
 * Build first: `npx tsc -b packages/protocol packages/server`.
 */
import { spawn, execFile } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
export const CLI = join(REPO_ROOT, 'packages', 'server', 'dist', 'cli.js');
/** A server entry that exits right after its first ack (RELIABILITY.md D2); see the file. Run with `entry`. */
export const EXIT_AFTER_ACK_SERVER = join(REPO_ROOT, 'packages', 'server', 'test', 'helpers', 'exit-after-ack-server.ts');
/** A server entry with a short idle time before documents are compacted (`--compact-idle-after-ms`); see the file. */
export const COMPACT_IDLE_SERVER = join(REPO_ROOT, 'packages', 'server', 'test', 'helpers', 'compact-idle-server.ts');
/** Exit code of `EXIT_AFTER_ACK_SERVER` after its ack (not one Node or the CLI uses: 1, 2, 12–13, 128+signal). */
export const EXIT_AFTER_ACK_CODE = 75;

/** A cold start of Node + better-sqlite3 takes < 1 s here; 15 s only guards against a hung start. */
const START_TIMEOUT_MS = 15_000;

export interface KeyOptions {
  name: string;
  account?: string;
  origins?: string[];
  requireToken?: boolean;
  persistent?: boolean;
  maxUsers?: number;
}

export interface ServerProcessOptions {
  /** `--session-grace` seconds. */
  sessionGrace?: number;
  extraArgs?: string[];
  /** Reuse a data folder (restart on the same store); a new temporary one by default. */
  dir?: string;
  /** `--store` URL; default a SQLite file in `dir`. */
  store?: string;
  /** `--redis` URL (fan-out across servers). */
  redis?: string;
  /** `--port`; default 0 (any free port). A restart on the same port lets clients reconnect to the same URL. */
  port?: number;
  /**
   * A TypeScript entry run (under tsx) instead of `cli.js start`, with the same `--host`, `--port`, `--store` flags
   * and the same `listening on` line: a test's own server wrapper such as `EXIT_AFTER_ACK_SERVER`. Default the CLI.
   */
  entry?: string;
  /**
   * Run node with `--expose-gc` and the `gc-on-signal.mjs` preload, so that `collectGarbage()` can run a full
   * collection in the server before a test reads its memory from `/metrics`. Default false.
   */
  collectableHeap?: boolean;
}

const GC_ON_SIGNAL = join(REPO_ROOT, 'packages', 'server', 'test', 'helpers', 'gc-on-signal.mjs');

export class ServerProcess {
  url = '';
  port = 0;
  stdout = '';
  stderr = '';
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private exited = false;
  private collections = 0;

  private constructor(
    readonly dir: string,
    readonly options: ServerProcessOptions,
    private readonly child: ChildProcess,
  ) {
    this.exit = new Promise((r) =>
      child.once('exit', (code, signal) => {
        this.exited = true;
        r({ code, signal });
      }),
    );
  }

  get storeUrl(): string {
    return this.options.store ?? `sqlite:${join(this.dir, 'wave.db')}`;
  }

  get dbPath(): string {
    return join(this.dir, 'wave.db');
  }

  get running(): boolean {
    return !this.exited;
  }

  static async start(options: ServerProcessOptions = {}): Promise<ServerProcess> {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npx tsc -b packages/protocol packages/server" first`);
    const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'wave-it-')));
    const store = options.store ?? `sqlite:${join(dir, 'wave.db')}`;
    const command = options.entry === undefined ? [CLI, 'start'] : ['--import', 'tsx', options.entry];
    const preload = options.collectableHeap === true ? ['--expose-gc', '--import', pathToFileURL(GC_ON_SIGNAL).href] : [];
    const args = [...preload, ...command, '--host', '127.0.0.1', '--port', String(options.port ?? 0), '--store', store];
    if (options.redis !== undefined) args.push('--redis', options.redis);
    if (options.sessionGrace !== undefined) args.push('--session-grace', String(options.sessionGrace));
    args.push(...(options.extraArgs ?? []));
    const env = { ...process.env };
    for (const name of ['WAVE_HOST', 'WAVE_PORT', 'WAVE_STORE', 'WAVE_REDIS_URL', 'WAVE_SESSION_GRACE']) delete env[name];
    const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const server = new ServerProcess(dir, options, child);
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      server.stderr += chunk;
    });
    await new Promise<void>((resolveStart, rejectStart) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        rejectStart(new Error(`server did not print "listening on" within ${START_TIMEOUT_MS} ms\n${server.stdout}\n${server.stderr}`));
      }, START_TIMEOUT_MS);
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        server.stdout += chunk;
        const match = /^listening on (http:\/\/[^\s]+)$/m.exec(server.stdout);
        if (match && server.url === '') {
          clearTimeout(timer);
          server.url = match[1]!;
          server.port = Number(new URL(server.url).port);
          resolveStart();
        }
      });
      void server.exit.then(({ code, signal }) => {
        clearTimeout(timer);
        rejectStart(new Error(`server exited (${code ?? signal}) before listening\n${server.stdout}\n${server.stderr}`));
      });
    });
    return server;
  }

  /**
   * Runs a full garbage collection in the server (needs `collectableHeap: true`) and resolves once it is done, so a
   * following `/metrics` read reports live memory.
   */
  async collectGarbage(): Promise<void> {
    if (this.options.collectableHeap !== true) throw new Error('collectGarbage needs ServerProcess.start({ collectableHeap: true })');
    const n = ++this.collections;
    this.child.kill('SIGUSR2');
    await this.waitForOutput(new RegExp(`^gc ${n}$`, 'm'));
  }

  /** Resolves once stdout matches (it arrives in chunks); rejects when the process exits first. */
  waitForOutput(pattern: RegExp, timeoutMs = 5_000): Promise<void> {
    return new Promise((resolveWait, rejectWait) => {
      const check = (): void => {
        if (!pattern.test(this.stdout)) return;
        cleanup();
        resolveWait();
      };
      const timer = setTimeout(() => {
        cleanup();
        rejectWait(new Error(`stdout did not match ${pattern} within ${timeoutMs} ms:\n${this.stdout}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.child.stdout!.off('data', check);
      };
      this.child.stdout!.on('data', check);
      void this.exit.then(() => {
        cleanup();
        if (pattern.test(this.stdout)) resolveWait();
        else rejectWait(new Error(`process exited before stdout matched ${pattern}`));
      });
      check();
    });
  }

  /** Sends `signal` and waits for the process to exit. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (!this.exited) this.child.kill(signal);
    return this.exit;
  }

  /** Starts a new server process on the same store (after this one exited), with `changes` to this one's options. */
  async restart(changes: Omit<ServerProcessOptions, 'dir'> = {}): Promise<ServerProcess> {
    if (!this.exited) await this.kill('SIGKILL');
    return ServerProcess.start({ ...this.options, ...changes, dir: this.dir });
  }

  /** Runs the CLI against this server's store. */
  async cli(args: string[]): Promise<{ stdout: string; stderr: string }> {
    return execFileAsync(process.execPath, [CLI, ...args, '--store', this.storeUrl], { cwd: REPO_ROOT });
  }

  async createKey(options: KeyOptions): Promise<{ apiKey: string; secret: string }> {
    const args = ['keys', 'create', '--name', options.name, '--json'];
    if (options.account !== undefined) args.push('--account', options.account);
    for (const origin of options.origins ?? []) args.push('--origin', origin);
    if (options.requireToken) args.push('--require-token');
    if (options.persistent) args.push('--persistent');
    if (options.maxUsers !== undefined) args.push('--max-users', String(options.maxUsers));
    const { stdout } = await this.cli(args);
    return JSON.parse(stdout) as { apiKey: string; secret: string };
  }

  async revokeKey(apiKey: string): Promise<void> {
    await this.cli(['keys', 'revoke', apiKey]);
  }

  /** Kills the process (if running) and removes the data folder. */
  async cleanup(): Promise<void> {
    await this.kill('SIGKILL');
    await rm(this.dir, { recursive: true, force: true });
  }
}
