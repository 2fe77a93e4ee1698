/** CPU and RSS of a process from /proc (Linux), sampled by the benchmark itself, and core pinning with taskset. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** USER_HZ: /proc/<pid>/stat counts CPU time in ticks of 1/100 s on Linux. */
const TICKS_PER_SECOND = 100;

export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15 of the whole line.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(rest[11]) + Number(rest[12])) / TICKS_PER_SECOND;
}

export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
  return match ? Number(match[1]) * 1024 : NaN;
}

/** Samples a process over a measurement window: CPU share of one core, RSS at the end and at its peak. */
export class ProcSampler {
  private cpu0 = 0;
  private t0 = 0;
  private peak = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(readonly pid: number) {}

  start(): void {
    this.cpu0 = cpuSeconds(this.pid);
    this.t0 = performance.now();
    this.peak = rssBytes(this.pid);
    // 250 ms: often enough to catch the RSS peak of a 20 s run, rare enough to cost nothing.
    this.timer = setInterval(() => {
      try {
        this.peak = Math.max(this.peak, rssBytes(this.pid));
      } catch {
        /* the process exited */
      }
    }, 250);
  }

  stop(): { cpuPercent: number; rssBytes: number; peakRssBytes: number; seconds: number } {
    if (this.timer) clearInterval(this.timer);
    const seconds = (performance.now() - this.t0) / 1000;
    const cpu = cpuSeconds(this.pid) - this.cpu0;
    const rss = rssBytes(this.pid);
    return { cpuPercent: (100 * cpu) / seconds, rssBytes: rss, peakRssBytes: Math.max(this.peak, rss), seconds };
  }
}

let tasksetChecked: boolean | undefined;

/** `taskset -c CORE` prefix when taskset exists and the machine has more than one core, else nothing. */
export function pinned(core: number, command: string, args: string[]): { command: string; args: string[]; pinnedTo: number | null } {
  if (tasksetChecked === undefined) {
    try {
      execFileSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore' });
      tasksetChecked = true;
    } catch {
      tasksetChecked = false;
    }
  }
  if (!tasksetChecked) return { command, args, pinnedTo: null };
  return { command: 'taskset', args: ['-c', String(core), command, ...args], pinnedTo: core };
}

/** Busy CPU time of the whole machine so far (all cores, seconds): to tell how much else ran during a measurement. */
export function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  // cpu user nice system idle iowait irq softirq steal …: busy = all but idle and iowait.
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  const busy = f.reduce((a, b) => a + b, 0) - (f[3] ?? 0) - (f[4] ?? 0);
  return busy / TICKS_PER_SECOND;
}
