// Starts the real Wave server (`packages/server/dist/cli.js`) on a free port with a throw-away SQLite store.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

/** `WAVE_E2E_SERVER` runs another build of the same CLI (same arguments); the default is the workspace's build. */
const CLI = process.env.WAVE_E2E_SERVER ?? join(REPO_ROOT, 'packages/server/dist/cli.js');

/** A cold start (SQLite open + migrations) takes well under a second here; 20 s only bounds a hung process. */
const START_TIMEOUT_MS = 20_000;
/** How long SIGTERM may take (the server flushes pending writes and closes sockets) before SIGKILL. */
const STOP_TIMEOUT_MS = 5_000;
/** Output kept for failure messages; a chatty server must not grow the test process without bound. */
const MAX_OUTPUT_CHARS = 200_000;

export interface WaveServer {
  /** `http://127.0.0.1:PORT`, as printed by the server. */
  readonly url: string;
  readonly dataDir: string;
  /** Everything the server printed so far (stdout and stderr, interleaved, tail-truncated). */
  output(): string;
  /** The last `lines` lines of output, for failure messages. */
  tail(lines?: number): string;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** `--session-grace` in seconds. */
  sessionGrace?: number;
  extraArgs?: string[];
  /** Reuse a data directory (a restart over the same store); by default a fresh temp dir. */
  dataDir?: string;
  /** The CLI to run with node (e.g. the `wave-server` bin of an installed package); by default the workspace's build. */
  cli?: string;
  /** Working directory of the server process; by default the repository root. */
  cwd?: string;
}

const running = new Set<ChildProcess>();
// A test process that dies (assertion in a hook, Ctrl-C) must not leave servers behind.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function startServer(options: StartOptions = {}): Promise<WaveServer> {
  const cli = options.cli ?? CLI;
  if (!existsSync(cli)) {
    throw new Error(`Wave server CLI not found at ${cli}: run \`npm run build\` at the repository root first`);
  }
  const ownsDir = !options.dataDir;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'wave-e2e-'));
  const args = [cli, 'start', '--host', '127.0.0.1', '--port', '0', '--store', `sqlite:${join(dataDir, 'wave.db')}`];
  if (options.sessionGrace !== undefined) args.push('--session-grace', String(options.sessionGrace));
  args.push(...(options.extraArgs ?? []));

  const child = spawn(process.execPath, args, { cwd: options.cwd ?? REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  const echo = Boolean(process.env.WAVE_E2E_SERVER_LOG); // stream the server's output live, for debugging
  const append = (chunk: Buffer) => {
    if (echo) process.stderr.write(chunk);
    output += chunk.toString('utf8');
    if (output.length > MAX_OUTPUT_CHARS) output = `[…truncated…]\n${output.slice(-MAX_OUTPUT_CHARS / 2)}`;
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolveExit({ code, signal });
    });
  });
  const describe = () => `\n--- server: node ${args.slice(1).join(' ')} ---\n${output}`;

  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not print "listening on" within ${START_TIMEOUT_MS} ms${describe()}`));
    }, START_TIMEOUT_MS);
    const onData = () => {
      const match = /listening on (https?:\/\/[^\s]+)/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.stderr!.off('data', onData);
      resolveUrl(match[1]!.replace(/\/$/, ''));
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`server exited before listening (code ${code}, signal ${signal})${describe()}`));
    });
  });

  let stopped: Promise<void> | undefined;
  return {
    url,
    dataDir,
    output: () => output,
    tail: (lines = 40) => output.split('\n').slice(-lines).join('\n'),
    stop() {
      stopped ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
          await exited;
          clearTimeout(timer);
        }
        if (ownsDir && !process.env.WAVE_E2E_KEEP) rmSync(dataDir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}
