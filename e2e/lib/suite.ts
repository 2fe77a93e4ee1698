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
  before(async () => {
    server = await startServer();
    browser = await launchBrowser();
    await use(server, browser);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });
}

/**
 * Whether the randomized fuzz files (`fuzz.test.ts`, `richtext-fuzz.test.ts`) also draw a fresh seed per editor:
 * with `WAVE_LONG=1` (`npm run test:long`) or `WAVE_FUZZ=1`. `npm test` (CI) runs only their named seeds (the seeds
 * that once failed, and one per editor without such a seed): the same operations every run, so that CI does not
 * depend on which seed it drew; new seeds are looked for outside it.
 */
export const FRESH_FUZZ_SEEDS = process.env.WAVE_LONG === '1' || process.env.WAVE_FUZZ === '1';

/** The skip reason for a fuzz file's fresh-seed run outside `FRESH_FUZZ_SEEDS`, printed once per file; `false` when it runs. */
export function freshSeedsSkip(file: string): string | false {
  if (FRESH_FUZZ_SEEDS) return false;
  const reason = 'a fresh random seed: drawn in `npm run test:long` or with WAVE_FUZZ=1; `npm test` replays the named seeds';
  console.warn(`\n*** ${file}: fresh-seed run SKIPPED: ${reason} ***\n`);
  return reason;
}
