/**
 * `npm run bench [-- --quick] [-- --only keystroke,fanout,manydocs,coldload,size,scaling [--merge]]`: Wave against
 * the reference Yjs stacks on this machine, every comparison measured in the same run. Writes
 * bench/results/latest.json (every number), latest.md (tables, ratios, targets), latency.svg and scaling.svg; raw
 * latency samples go to results/raw/ (ignored).
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { keystroke, type EditorName } from './scenarios/keystroke.ts';
import { fanout, failures as runFailures } from './scenarios/fanout.ts';
import { manydocs } from './scenarios/manydocs.ts';
import { scaling } from './scenarios/scaling.ts';
import { coldload } from './scenarios/coldload.ts';
import { size } from './scenarios/size.ts';
import { BENCH_DIR, REPO_ROOT, SERVER_CORE, LOADGEN_CORE } from './lib/servers.ts';
import { pinned } from './lib/proc.ts';
import { markdown, summarizeResults, targets, type LoadSummary, type Results, type Summaries } from './lib/report.ts';
import type { Summary } from './lib/stats.ts';
import { latencyChart, scalingChart, type Panel, type ScalingPanel } from './lib/chart.ts';
import { diskCommitProbe } from './lib/disk-probe.ts';
import { storeWriteProbe } from './lib/store-probe.ts';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const onlyArg = argv.indexOf('--only');
const only = onlyArg >= 0 ? new Set(argv[onlyArg + 1]!.split(',')) : null;
const want = (name: string): boolean => !reportOnly && (!only || only.has(name));
/** Rebuilds latest.md/json/svg from the last full run's raw results (after editing ANALYSIS.md or the report). */
const reportOnly = argv.includes('--report-only');

/**
 * Full: the issue's parameters, 3 runs each. Quick: one short run of each, to finish in a few minutes.
 * Scaling: documents per size, one insert per client every scalingIntervalMs (scenarios/scaling.ts: why 4 s).
 */
const P = quick
  ? { runs: 1, keystrokes: 30, ksWarmup: 5, fanoutClients: [10], fanoutMs: 5_000, warmupMs: 1_000, docs: 200, manyMs: 6_000, coldRuns: 2, idleDocs: 200, scalingDocs: [200, 400, 800], scalingIntervalMs: 4_000, scalingMs: 6_000 }
  : { runs: 3, keystrokes: 200, ksWarmup: 10, fanoutClients: [10, 2, 50], fanoutMs: 20_000, warmupMs: 2_000, docs: 1_000, manyMs: 30_000, coldRuns: 5, idleDocs: 1_000, scalingDocs: [1_000, 2_000, 4_000], scalingIntervalMs: 4_000, scalingMs: 20_000 };
const EDITORS: EditorName[] = ['textarea', 'quill', 'codemirror', 'froala', 'tinymce'];

const started = Date.now();
const log = (s: string): void => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${s}`);

function version(dir: string, pkg: string): string | null {
  try {
    return (JSON.parse(readFileSync(join(dir, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return null;
  }
}

const dir = join(BENCH_DIR, 'results');
const suffix = quick ? 'quick' : 'latest';
const rawFile = join(dir, 'raw', `${suffix}-samples.json`);
const latencySvg = join(dir, quick ? 'latency-quick.svg' : 'latency.svg');
/**
 * `--merge`: run only the `--only` scenarios and put them into the last run's results (the others are kept), e.g.
 * to redo a scenario that failed or to add one; meta.merged records what was redone and when.
 * The last run's results come from results/raw/ when it holds latest.json's results (that run was made on this
 * machine, and nothing ran since); otherwise (raw/ is not committed) from latest.json, which holds every number but
 * not the latency samples, so latency.svg is redrawn only when every panel's samples are at hand (else the
 * committed chart is kept and the notes say so).
 */
const merge = argv.includes('--merge');
const previous = reportOnly || merge ? (JSON.parse(readFileSync(join(dir, `${suffix}.json`), 'utf8')) as { meta: Record<string, unknown>; errors?: Record<string, string>; results: Results }) : null;
/** Results as latest.json keeps them: without the latency samples. */
const strip = (r: Results): Results =>
  JSON.parse(JSON.stringify(r, (key, value: unknown) => (key === 'sample' || key === 'values' ? undefined : value))) as Results;
/**
 * raw/ is used only when it holds the very results of latest.json (with their samples): a run without `--merge`
 * (e.g. `--only keystroke` to try something) rewrites raw/ with its scenarios alone, and latest.json may have been
 * restored from git since.
 */
const raw = (reportOnly || merge) && existsSync(rawFile) ? (JSON.parse(readFileSync(rawFile, 'utf8')) as Results) : null;
const rawMissing = (reportOnly || merge) && (raw === null || JSON.stringify(strip(raw)) !== JSON.stringify(previous!.results));
const results: Results = reportOnly || merge ? (rawMissing ? previous!.results : raw!) : {};
if (rawMissing) log(`${raw ? `${rawFile} holds other results than ${suffix}.json` : `${rawFile} not found`}: the other scenarios' numbers come from ${suffix}.json (no latency samples)`);
if (merge && only) for (const name of only) delete (previous?.errors ?? {})[name];
const errors: Record<string, string> = previous?.errors ?? {};
/** A scenario that throws is reported (in the notes and latest.json) and the others still run. */
function failed(name: string, err: unknown): void {
  errors[name] = err instanceof Error ? (err.stack ?? err.message) : String(err);
  log(`${name} FAILED: ${errors[name]}`);
}
const diskBefore = reportOnly ? null : diskCommitProbe();
/** CPU of Wave's durable write per update, measured once per run (lib/store-probe.ts). */
const storeWrite = reportOnly ? null : await storeWriteProbe();
/**
 * Writes latest.json/md/svg from what has been measured so far: called after every scenario, so that a run that
 * is stopped early (or a scenario that dies) still leaves the finished scenarios on disk.
 */
function writeOutputs(final: boolean): void {
  const diskAfter = reportOnly || !final ? null : diskCommitProbe();
  const pinning = pinned(0, 'true', []).pinnedTo !== null;
  const fresh = {
    date: new Date().toISOString(),
    quick,
    /** False in the checkpoints written after each scenario, before the run has finished. */
    complete: final,
    durationSeconds: Math.round((Date.now() - started) / 1000),
    cores: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    node: process.versions.node,
    chromium: results.keystroke?.chromium ?? null,
    serverCore: pinning ? SERVER_CORE : null,
    loadgenCore: pinning ? LOADGEN_CORE : null,
    parameters: P,
    /** ms per small SQLite commit (WAL, synchronous=FULL) on this disk at the start and end of the run. */
    diskCommitMs: { before: diskBefore, after: diskAfter },
    /** µs of CPU per update of Wave's SqliteStore.appendUpdates (lib/store-probe.ts). */
    storeWriteCost: storeWrite,
    manydocs: P.docs,
    versions: {
      wave: (JSON.parse(readFileSync(join(REPO_ROOT, 'packages', 'server', 'package.json'), 'utf8')) as { version: string }).version,
      yjs: version(REPO_ROOT, 'yjs'),
      '@y/websocket-server': version(BENCH_DIR, '@y/websocket-server'),
      'y-websocket': version(BENCH_DIR, 'y-websocket'),
      '@hocuspocus/server': version(BENCH_DIR, '@hocuspocus/server'),
      '@hocuspocus/provider': version(BENCH_DIR, '@hocuspocus/provider'),
      '@hocuspocus/extension-database': version(BENCH_DIR, '@hocuspocus/extension-database'),
      'better-sqlite3 (Wave)': version(REPO_ROOT, 'better-sqlite3'),
      'better-sqlite3 (hocuspocus-sqlite)': version(BENCH_DIR, 'better-sqlite3'),
      'y-quill': version(BENCH_DIR, 'y-quill'),
      'quill-cursors': version(BENCH_DIR, 'quill-cursors'),
      'y-codemirror': version(BENCH_DIR, 'y-codemirror'),
      quill: version(BENCH_DIR, 'quill'),
      codemirror: version(BENCH_DIR, 'codemirror'),
      'peer yjs': version(BENCH_DIR, 'yjs'),
    },
  };
  const meta = previous
    ? ({
        ...(previous.meta as Record<string, unknown>),
        ...(merge
          ? {
              // The merged scenarios' packages (e.g. a peer added since) join the versions list.
              versions: { ...(previous.meta.versions as Record<string, string | null>), ...fresh.versions },
              merged: [...(((previous.meta as { merged?: unknown[] }).merged) ?? []), { scenarios: [...(only ?? [])], date: fresh.date, durationSeconds: fresh.durationSeconds, diskCommitMs: fresh.diskCommitMs, storeWriteCost: fresh.storeWriteCost, parameters: P }],
            }
          : { reportRebuiltAt: fresh.date }),
      } as unknown as typeof fresh)
    : fresh;

  const summaries = summarizeResults(results);
  const t = targets(results, summaries);

  // Automatic notes: what could make a number unfair.
  const notes: string[] = [];
  for (const [n, stacks] of Object.entries(summaries.fanout)) {
    for (const [stack, x] of Object.entries(stacks)) {
      if (x.loadgenCpuPercent.median > 80) notes.push(`fan-out ${n} clients, ${stack}: the load generator used ${x.loadgenCpuPercent.median.toFixed(0)} % of its core — at this size it, not the server, may bound the latencies.`);
      if (x.delivered.median < 0.999) notes.push(`fan-out ${n} clients, ${stack}: only ${(100 * x.delivered.median).toFixed(1)} % of the expected deliveries arrived within the run.`);
    }
  }
  const docsRuns: Array<[string, Record<string, LoadSummary>]> = [
    ['many documents', summaries.manydocs],
    ...Object.entries(summaries.scaling).map(([docs, stacks]): [string, Record<string, LoadSummary>] => [`scaling ${docs} documents`, stacks]),
  ];
  for (const [scenario, stacks] of docsRuns) {
    for (const [stack, x] of Object.entries(stacks)) {
      if (x.loadgenCpuPercent.median > 80) notes.push(`${scenario}, ${stack}: the load generator used ${x.loadgenCpuPercent.median.toFixed(0)} % of its core.`);
      if (x.serverCpuPercent.median > 85) notes.push(`${scenario}, ${stack}: the server used ${x.serverCpuPercent.median.toFixed(0)} % of its core — near saturation, its latencies are those of a saturated server.`);
      if (x.connectFailures.median > 0) notes.push(`${scenario}, ${stack}: ${x.connectFailures.median} clients failed to connect.`);
      if (x.delivered.median < 0.999) notes.push(`${scenario}, ${stack}: only ${(100 * x.delivered.median).toFixed(1)} % of the expected deliveries arrived within the run.`);
    }
  }
  const busyRuns: string[] = [];
  for (const [n, stacks] of Object.entries(results.fanout ?? {})) {
    for (const [stack, runs] of Object.entries(stacks)) {
      runs.forEach((r, i) => r.quiet === false && busyRuns.push(`fan-out ${n} ${stack} run ${i + 1} (other processes ${r.otherCpuPercent?.toFixed(0)} %)`));
    }
  }
  for (const [stack, runs] of Object.entries(results.manydocs ?? {})) {
    runs.forEach((r, i) => r.quiet === false && busyRuns.push(`many documents ${stack} run ${i + 1} (other processes ${r.otherCpuPercent?.toFixed(0)} %)`));
  }
  for (const [docs, stacks] of Object.entries(results.scaling?.runs ?? {})) {
    for (const [stack, runs] of Object.entries(stacks)) {
      runs.forEach((r, i) => r.quiet === false && busyRuns.push(`scaling ${docs} documents ${stack} run ${i + 1} (other processes ${r.otherCpuPercent?.toFixed(0)} %)`));
    }
  }
  if (busyRuns.length) notes.push(`Runs measured while other jobs used more than 70 % of a core (repeated once while the repeat budget of 6 per run lasted): ${busyRuns.join('; ')}. Their numbers are kept in the medians; see latest.json.`);
  for (const x of runFailures) notes.push(`run failed and left out of the medians: ${x}`);
  for (const [name, e] of Object.entries(errors)) notes.push(`scenario ${name} failed: ${e.split('\n')[0]}`);
  // Chart: fan-out at 10 clients, many documents, keystroke (Quill and CodeMirror), pooled over runs. Results read
  // from latest.json carry no samples: a series without them leaves the whole chart as it was.
  const panels: Panel[] = [];
  const unsampled = new Set<string>();
  const pooled = (title: string, runs: Array<{ sample?: number[]; values?: number[] }>): number[] => {
    if (runs.some((r) => !(r.sample ?? r.values))) unsampled.add(title);
    return runs.flatMap((r) => r.sample ?? r.values ?? []);
  };
  const f10 = results.fanout?.['10'] ?? Object.values(results.fanout ?? {})[0];
  if (f10) panels.push({ title: 'Fan-out, 1 doc × 10 clients', series: Object.entries(f10).map(([name, runs]) => ({ name, values: pooled('fan-out', runs) })) });
  if (results.manydocs) panels.push({ title: `${meta.manydocs} docs × 2 clients`, series: Object.entries(results.manydocs).map(([name, runs]) => ({ name, values: pooled('many documents', runs) })) });
  for (const editor of ['quill', 'codemirror']) {
    const k = results.keystroke?.runs[editor];
    if (k) panels.push({ title: `Keystroke → remote render, ${editor}`, series: Object.entries(k).map(([name, runs]) => ({ name, values: pooled('keystroke', runs) })) });
  }
  const svg = unsampled.size ? null : latencyChart(panels, `Cumulative latency distributions (${quick ? 'quick run' : 'full run'}, ${meta.date.slice(0, 16)}Z, ${meta.cores} cores): the further left, the faster.`);
  if (!svg && existsSync(latencySvg)) {
    const drawn = /\((?:quick|full) run, ([^,]+),/.exec(readFileSync(latencySvg, 'utf8'))?.[1] ?? 'an earlier run';
    const since = [...new Set(((meta as { merged?: Array<{ scenarios: string[] }> }).merged ?? []).flatMap((m) => m.scenarios))];
    const rerun = since.length ? ` and does not show what was re-run since (${since.join(', ')})` : '';
    notes.push(`${quick ? 'latency-quick.svg' : 'latency.svg'} is the chart of ${drawn}${rerun}: the latency samples of ${[...unsampled].join(', ')} are not on this machine (results/raw/ is not committed), so it was not redrawn.`);
  }

  // Scaling chart: CPU per 1,000 documents, delivery p99 and RSS per document against the number of documents, dated
  // by the run that measured them (the last merge that re-ran scaling, else the run itself).
  const scalingDate = [...((meta as { merged?: Array<{ scenarios: string[]; date: string }> }).merged ?? [])].reverse().find((m) => m.scenarios.includes('scaling'))?.date ?? meta.date;
  const scalingSvg = Object.keys(summaries.scaling).length
    ? scalingChart(
        (
          [
            ['Server CPU per 1,000 documents', '% of a core', (x) => x.cpuPerKDoc],
            ['Delivery p99', 'ms', (x) => x.p99],
            ['RSS per document', 'KB', (x) => x.rssPerDocKB],
          ] as Array<[string, string, (x: Summaries['scaling'][string][string]) => Summary]>
        ).map(([title, unit, pick]): ScalingPanel => ({
          title,
          unit,
          series: [...new Set(Object.values(summaries.scaling).flatMap((stacks) => Object.keys(stacks)))].map((name) => ({
            name,
            points: Object.entries(summaries.scaling).flatMap(([docs, stacks]) => {
              const x = stacks[name];
              return x ? [{ x: Number(docs), y: pick(x).median, lo: pick(x).min, hi: pick(x).max }] : [];
            }),
          })),
        })),
        `Scaling, 1 insert / ${((results.scaling?.intervalMs ?? NaN) / 1000).toFixed(0)} s per client (${quick ? 'quick run' : 'full run'}, ${scalingDate.slice(0, 16)}Z, ${meta.cores} cores): median and min–max over runs; flat = per-document cost independent of the number of documents.`,
      )
    : null;

  const analysisFile = join(BENCH_DIR, 'ANALYSIS.md');
  let md = markdown(meta, results, summaries, t, notes);
  if (existsSync(analysisFile)) md += `\n${readFileSync(analysisFile, 'utf8')}`;

  mkdirSync(join(dir, 'raw'), { recursive: true });
  const json = { meta, targets: t, summaries, errors, runFailures, results: strip(results) };
  writeFileSync(join(dir, `${suffix}.json`), `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(join(dir, `${suffix}.md`), md);
  if (svg) writeFileSync(latencySvg, svg);
  if (scalingSvg) writeFileSync(join(dir, quick ? 'scaling-quick.svg' : 'scaling.svg'), scalingSvg);
  writeFileSync(join(dir, 'raw', `${suffix}-samples.json`), JSON.stringify(results));
  if (final) log(`wrote bench/results/${suffix}.json, ${suffix}.md and the chart`);
  if (final) for (const x of t) log(`${x.met === null ? 'n/a' : x.met ? 'MET    ' : 'NOT MET'}  ${x.target}: ${x.wave.toFixed(2)}${x.peerName ? ` vs ${x.peer!.toFixed(2)} (${x.peerName}), ratio ${x.ratio?.toFixed(2)}` : ''} (${x.limit})`);
}

/** Runs one scenario when selected: logs its heading, stores its result (or its error), writes the outputs so far. */
async function stage<K extends keyof Results>(key: K, heading: string, run: () => Promise<Results[K]>): Promise<void> {
  if (!want(key)) return;
  log(heading);
  try {
    results[key] = await run();
  } catch (err) {
    failed(key, err);
  }
  writeOutputs(false);
}

await stage('size', '6. size and idle memory', () => size({ idleDocs: P.idleDocs, runs: P.runs, log }));
await stage('coldload', '5. cold load (B4)', () => coldload({ runs: P.coldRuns, log }));
await stage('keystroke', '1. keystroke → remote render (Chromium)', () =>
  keystroke({ keystrokes: P.keystrokes, warmup: P.ksWarmup, runs: P.runs, editors: EDITORS, log }));
await stage('manydocs', '3. many documents', () =>
  manydocs({ docs: P.docs, runs: P.runs, durationMs: P.manyMs, warmupMs: P.warmupMs, log }));
await stage('scaling', '7. scaling', async () => {
  const out = {} as NonNullable<Results['scaling']>;
  results.scaling = out;
  await scaling({ sizes: P.scalingDocs, intervalMs: P.scalingIntervalMs, runs: P.runs, durationMs: P.scalingMs, warmupMs: P.warmupMs, log, out, checkpoint: () => writeOutputs(false) });
  return out;
});
// Fan-out fills its result as it goes (and checkpoints), so that a late failure keeps the client counts already measured.
await stage('fanout', '2. fan-out', async () => {
  const out: NonNullable<Results['fanout']> = {};
  results.fanout = out;
  await fanout({ clients: P.fanoutClients, runs: P.runs, durationMs: P.fanoutMs, warmupMs: P.warmupMs, log, out, checkpoint: () => writeOutputs(false) });
  return out;
});

writeOutputs(true);
process.exit(0);
