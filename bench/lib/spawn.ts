/** Bench helper scripts in their own Node processes, pinned to the load-generator core, and their JSON output. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pinned } from './proc.ts';
import { BENCH_DIR, LOADGEN_CORE } from './servers.ts';

/** Starts a helper that prints one JSON line and then keeps running (e.g. a client holding a document open). */
export function holdScript<T>(script: string, args: string[], timeoutMs = 300_000): Promise<{ value: T; stop(): Promise<void> }> {
  const { command, args: full } = pinned(LOADGEN_CORE, process.execPath, ['--import', 'tsx', join(BENCH_DIR, script), ...args]);
  return new Promise((res, rej) => {
    const child = spawn(command, full, { cwd: BENCH_DIR, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const stop = (): Promise<void> =>
      new Promise((done) => {
        clearTimeout(timer);
        if (child.exitCode !== null || child.signalCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGKILL');
      });
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      const line = out.split('\n').find((l) => l.startsWith('{') && l.endsWith('}'));
      if (line) res({ value: JSON.parse(line) as T, stop });
    });
    child.on('exit', (code) => rej(new Error(`${script} ${args.join(' ')} exited ${code}\n${out}\n${err}`)));
  });
}

/**
 * Starts a helper that answers requests: each `ask(line)` writes one line to its stdin and resolves the next JSON
 * line it prints (one request at a time). Lets one process, its code already run warm, measure across a server
 * restart.
 */
export function serveScript<T>(script: string, args: string[], timeoutMs = 300_000): { ask(line: string): Promise<T>; stop(): Promise<void> } {
  const { command, args: full } = pinned(LOADGEN_CORE, process.execPath, ['--import', 'tsx', join(BENCH_DIR, script), ...args]);
  const child = spawn(command, full, { cwd: BENCH_DIR, stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  let partial = '';
  let exited: Error | undefined;
  let pending: { res(v: T): void; rej(e: Error): void } | undefined;
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    if (err.length < 20_000) err += c;
  });
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    const lines = (partial + c).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      const p = pending;
      pending = undefined;
      p?.res(JSON.parse(line) as T);
    }
  });
  child.on('exit', (code) => {
    clearTimeout(timer);
    exited = new Error(`${script} ${args.join(' ')} exited ${code}\n${err}`);
    pending?.rej(exited);
    pending = undefined;
  });
  return {
    ask: (line) =>
      new Promise<T>((res, rej) => {
        if (exited) return rej(exited);
        if (pending) return rej(new Error(`${script}: one request at a time`));
        pending = { res, rej };
        child.stdin.write(`${line}\n`);
      }),
    stop: () =>
      new Promise<void>((done) => {
        clearTimeout(timer);
        if (child.exitCode !== null || child.signalCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGKILL');
      }),
  };
}
