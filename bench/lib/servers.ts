/**
 * Starts and stops the servers under test, each pinned to core 0: Wave, the y-websocket server, Hocuspocus in
 * memory, and Hocuspocus storing through its Database extension into SQLite.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pinned } from './proc.ts';
import type { ClientKind } from './clients.ts';

export const BENCH_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const REPO_ROOT = resolve(BENCH_DIR, '..');
export const WAVE_CLI = join(REPO_ROOT, 'packages', 'server', 'dist', 'cli.js');
export const SERVER_CORE = 0;
export const LOADGEN_CORE = 1;

/**
 * Server stacks. Wave acks each edit after a durable SQLite commit; y-websocket and `hocuspocus` keep documents in
 * memory only; `hocuspocus-sqlite` stores each document through @hocuspocus/extension-database into better-sqlite3
 * on Hocuspocus's debounce (servers/hocuspocus-sqlite.mjs), after relaying and acking the edits.
 */
export type ServerKind = 'wave' | 'y-websocket' | 'hocuspocus' | 'hocuspocus-sqlite';

/** A stack as the results name it: a server and the client its users run with it. */
export interface Stack {
  name: string;
  server: ServerKind;
  client: ClientKind;
}

export interface RunningBenchServer {
  kind: ServerKind;
  /** http://127.0.0.1:PORT */
  url: string;
  pid: number;
  /** Wave only: an API key for the clients. */
  apiKey?: string;
  dataDir?: string;
  stop(): Promise<void>;
  /** Wave and hocuspocus-sqlite: kill (SIGKILL) and start again on the same store (cold start). */
  restart?(): Promise<RunningBenchServer>;
  /** hocuspocus-sqlite only: how many documents its `store` callback has written so far. */
  storeCount?(): Promise<number>;
}

/** A cold start of any of these takes < 1 s; this only catches a hung start. */
const START_TIMEOUT_MS = 20_000;

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

function nodeArgs(): string[] {
  // BENCH_CPU_PROF=DIR profiles the servers (V8 .cpuprofile files in DIR), for the "profile where not met" step.
  const dir = process.env.BENCH_CPU_PROF;
  // BENCH_SERVER_NODE_ARGS adds Node flags to the servers alone (e.g. --trace-gc), not to the load generators.
  const extra = process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  return [...(dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []), ...extra];
}

async function spawnUntilListening(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ child: ChildProcess; url: string; lines: (fn: (line: string) => void) => void }> {
  const { command, args: full } = pinned(SERVER_CORE, process.execPath, [...nodeArgs(), ...args]);
  const child = spawn(command, full, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  /** Lines the server prints after it listens, for whoever asked (lineListeners). */
  let listening = false;
  let partial = '';
  const lineListeners: Array<(line: string) => void> = [];
  child.stderr!.setEncoding('utf8').on('data', (c: string) => {
    if (err.length < 20_000) err += c;
  });
  const url = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`server did not start: ${args.join(' ')}\n${out}\n${err}`)), START_TIMEOUT_MS);
    child.stdout!.setEncoding('utf8').on('data', (c: string) => {
      if (listening) {
        const lines = (partial + c).split('\n');
        partial = lines.pop()!.slice(-10_000);
        for (const line of lines) for (const fn of lineListeners) fn(line);
        return;
      }
      if (out.length < 20_000) out += c;
      const m = /listening on (http:\/\/[^\s]+)\n?/.exec(out);
      if (m) {
        clearTimeout(timer);
        listening = true;
        partial = out.slice(m.index + m[0].length);
        res(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      rej(new Error(`server exited (${code}) before listening: ${args.join(' ')}\n${out}\n${err}`));
    });
  });
  return { child, url, lines: (fn) => lineListeners.push(fn) };
}

function stopper(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): () => Promise<void> {
  return () =>
    new Promise((res) => {
      if (child.exitCode !== null || child.signalCode !== null) return res();
      const t = setTimeout(() => child.kill('SIGKILL'), 5_000);
      child.once('exit', () => {
        clearTimeout(t);
        res();
      });
      child.kill(signal);
    });
}

export interface WaveOptions {
  /** Keys created with --persistent keep the server's copy as the truth across restarts (cold-load scenario). */
  persistent?: boolean;
  dataDir?: string;
  apiKey?: string;
}

/** Far above the clients of any run (scaling: 4,000 documents × 2 clients). */
const MAX_CLIENTS_PER_RUN = 100_000;

export async function startWave(options: WaveOptions = {}): Promise<RunningBenchServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'wave-bench-'));
  const store = `sqlite:${join(dataDir, 'wave.db')}`;
  let apiKey = options.apiKey;
  if (!apiKey) {
    const args = [WAVE_CLI, 'keys', 'create', '--name', 'bench', '--json', '--store', store, '--max-users', '200'];
    if (options.persistent) args.push('--persistent');
    apiKey = (JSON.parse(execFileSync(process.execPath, args, { cwd: REPO_ROOT, encoding: 'utf8' })) as { apiKey: string }).apiKey;
  }
  const port = await freePort();
  // Every simulated client connects from 127.0.0.1, so the per-address connection cap (a guard against one abusive
  // address, default 1,000) is raised above the largest run (4,000 documents × 2 clients); the peers have no such cap.
  const { child, url } = await spawnUntilListening(
    [WAVE_CLI, 'start', '--host', '127.0.0.1', '--port', String(port), '--store', store, '--max-connections-per-address', String(MAX_CLIENTS_PER_RUN)],
    {},
    REPO_ROOT,
  );
  const server: RunningBenchServer = {
    kind: 'wave',
    url,
    pid: child.pid!,
    apiKey,
    dataDir,
    stop: async () => {
      await stopper(child)();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
    restart: async () => {
      await stopper(child, 'SIGKILL')();
      return startWave({ ...options, dataDir, apiKey });
    },
  };
  return server;
}

export async function startYWebsocket(): Promise<RunningBenchServer> {
  const port = await freePort();
  const script = join(BENCH_DIR, 'node_modules', '@y', 'websocket-server', 'src', 'server.js');
  // The reference server prints "running at 'HOST' on port PORT"; wait for the port to accept instead.
  const { command, args } = pinned(SERVER_CORE, process.execPath, [...nodeArgs(), script]);
  const child = spawn(command, args, { cwd: BENCH_DIR, env: { ...process.env, HOST: '127.0.0.1', PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.resume();
  child.stderr!.resume();
  await waitForPort(port);
  return { kind: 'y-websocket', url: `http://127.0.0.1:${port}`, pid: child.pid!, stop: stopper(child) };
}

export async function startHocuspocus(): Promise<RunningBenchServer> {
  const port = await freePort();
  const { child, url } = await spawnUntilListening([join(BENCH_DIR, 'servers', 'hocuspocus.mjs')], { HOST: '127.0.0.1', PORT: String(port) }, BENCH_DIR);
  return { kind: 'hocuspocus', url, pid: child.pid!, stop: stopper(child) };
}

/** `dataDir`: reuse this store (kept on stop unless `removeOnStop`); by default a new one, removed on stop. */
export async function startHocuspocusSqlite(options: { dataDir?: string; removeOnStop?: boolean } = {}): Promise<RunningBenchServer> {
  const port = await freePort();
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'wave-bench-hocuspocus-'));
  const removeOnStop = options.dataDir === undefined || options.removeOnStop === true;
  const { child, url, lines } = await spawnUntilListening(
    [join(BENCH_DIR, 'servers', 'hocuspocus-sqlite.mjs')],
    { HOST: '127.0.0.1', PORT: String(port), SQLITE_FILE: join(dataDir, 'hocuspocus.db') },
    BENCH_DIR,
  );
  const waiting: Array<(n: number) => void> = [];
  lines((line) => {
    const m = /^stores (\d+)$/.exec(line);
    if (m) waiting.shift()?.(Number(m[1]));
  });
  const stop = stopper(child);
  return {
    kind: 'hocuspocus-sqlite',
    url,
    pid: child.pid!,
    dataDir,
    stop: async () => {
      await stop();
      if (removeOnStop) rmSync(dataDir, { recursive: true, force: true });
    },
    restart: async () => {
      await stopper(child, 'SIGKILL')();
      return startHocuspocusSqlite({ dataDir, removeOnStop });
    },
    storeCount: () =>
      new Promise((res, rej) => {
        const t = setTimeout(() => rej(new Error('hocuspocus-sqlite did not report its store count')), 5_000);
        waiting.push((n) => {
          clearTimeout(t);
          res(n);
        });
        child.kill('SIGUSR2');
      }),
  };
}

export function startServer(kind: ServerKind, options: WaveOptions = {}): Promise<RunningBenchServer> {
  if (kind === 'wave') return startWave(options);
  if (kind === 'y-websocket') return startYWebsocket();
  return kind === 'hocuspocus' ? startHocuspocus() : startHocuspocusSqlite();
}

async function waitForPort(port: number): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const ok = await new Promise<boolean>((res) => {
      fetch(`http://127.0.0.1:${port}/`).then(() => res(true), () => res(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listening on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
