/** Starts and stops the servers under test, each pinned to core 0: Wave, the y-websocket server, Hocuspocus. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pinned } from './proc.ts';

export const BENCH_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const REPO_ROOT = resolve(BENCH_DIR, '..');
export const WAVE_CLI = join(REPO_ROOT, 'packages', 'server', 'dist', 'cli.js');
export const SERVER_CORE = 0;
export const LOADGEN_CORE = 1;

/** Server stacks: the peers do not persist before relaying; Wave acks after a durable SQLite commit. */
export type ServerKind = 'wave' | 'y-websocket' | 'hocuspocus';

export interface RunningBenchServer {
  kind: ServerKind;
  /** http://127.0.0.1:PORT */
  url: string;
  pid: number;
  /** Wave only: an API key for the clients. */
  apiKey?: string;
  dataDir?: string;
  stop(): Promise<void>;
  /** Wave only: kill and start again on the same store (cold start). */
  restart?(): Promise<RunningBenchServer>;
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
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

async function spawnUntilListening(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ child: ChildProcess; url: string }> {
  const { command, args: full } = pinned(SERVER_CORE, process.execPath, [...nodeArgs(), ...args]);
  const child = spawn(command, full, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => {
    if (err.length < 20_000) err += c;
  });
  const url = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`server did not start: ${args.join(' ')}\n${out}\n${err}`)), START_TIMEOUT_MS);
    child.stdout!.setEncoding('utf8').on('data', (c: string) => {
      if (out.length < 20_000) out += c;
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        res(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      rej(new Error(`server exited (${code}) before listening: ${args.join(' ')}\n${out}\n${err}`));
    });
  });
  return { child, url };
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

export function startServer(kind: ServerKind, options: WaveOptions = {}): Promise<RunningBenchServer> {
  return kind === 'wave' ? startWave(options) : kind === 'y-websocket' ? startYWebsocket() : startHocuspocus();
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
