// The hooks nearly every e2e file needs: one real Wave server and one Chromium for the whole file.
import { after, before } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser } from './browser.ts';
import { startServer, type WaveServer } from './server.ts';

/**
 * Registers `before`/`after` hooks that start a server (throw-away SQLite store) and launch Chromium once for the
 * file, hand both to `use`, and close them at the end.
 */
export function serverAndBrowser(use: (server: WaveServer, browser: Browser) => void | Promise<void>): void {
  let server: WaveServer | undefined;
  let browser: Browser | undefined;
  let closing = false;
  before(async () => {
    server = await startServer();
    browser = await launchBrowser();
    // A browser that ends before `after` fails every later test of the file at newContext; this line says when.
    browser.on('disconnected', () => {
      if (!closing) console.warn(`\n*** ${process.argv[1] ?? 'e2e'}: the shared Chromium ended before the file did ***\n`);
    });
    await use(server, browser);
  });
  after(async () => {
    closing = true;
    await browser?.close();
    await server?.stop();
  });
}

/**
 * Whether the randomized fuzz files (`fuzz.test.ts`, `richtext-fuzz.test.ts`) also draw a fresh seed per editor and
 * replay every named seed: with `WAVE_LONG=1` (`npm run test:long`) or `WAVE_FUZZ=1`. `npm test` (CI) replays one
 * named seed per editor (see `laterSeedSkip`): the same operations every run, so that CI does not depend on which
 * seed it drew; new seeds are looked for outside it.
 */
export const FRESH_FUZZ_SEEDS = process.env.WAVE_LONG === '1' || process.env.WAVE_FUZZ === '1';

/** The skip reason for a fuzz file's fresh-seed run outside `FRESH_FUZZ_SEEDS`, printed once per file; `false` when it runs. */
export function freshSeedsSkip(file: string): string | false {
  if (FRESH_FUZZ_SEEDS) return false;
  const reason = 'a fresh random seed: drawn in `npm run test:long` or with WAVE_FUZZ=1; `npm test` replays the named seeds';
  console.warn(`\n*** ${file}: fresh-seed run SKIPPED: ${reason} ***\n`);
  return reason;
}

const warnedLater = new Set<string>();

/**
 * The skip reason for a fuzz file's named seed after the first one of its editor (`rank` ≥ 1) outside
 * `FRESH_FUZZ_SEEDS`, printed once per file; `false` when it runs. `npm test` replays the first named seed of each
 * editor (each list puts first the one that guards the most), `npm run test:long` and WAVE_FUZZ=1 all of them: one
 * 300-operation run takes 1–2 minutes on a two-core machine, and CI is to stay near 30 minutes.
 */
export function laterSeedSkip(file: string, rank: number): string | false {
  if (FRESH_FUZZ_SEEDS || rank === 0) return false;
  const reason = "a further named seed of this editor: replayed in `npm run test:long` or with WAVE_FUZZ=1; `npm test` replays each editor's first";
  if (!warnedLater.has(file)) console.warn(`\n*** ${file}: further named seeds SKIPPED: ${reason} ***\n`);
  warnedLater.add(file);
  return reason;
}
