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
 * Whether this run includes the randomized fuzz files (`fuzz.test.ts`, `richtext-fuzz.test.ts`): with `WAVE_LONG=1`
 * (`npm run test:long`) or `WAVE_FUZZ=1`. Outside them the fuzz is skipped, loudly: a random run (a new seed and new
 * page timing every time) is not a deterministic check, and `npm test` is what CI runs.
 */
export const FUZZ_ENABLED = process.env.WAVE_LONG === '1' || process.env.WAVE_FUZZ === '1';

/** The skip reason for a fuzz suite outside `FUZZ_ENABLED`, printed once per file; `false` when it runs. */
export function fuzzSkip(file: string): string | false {
  if (FUZZ_ENABLED) return false;
  const reason = `randomized fuzz: runs in \`npm run test:long\` or with WAVE_FUZZ=1, not in \`npm test\``;
  console.warn(`\n*** ${file}: SKIPPED: ${reason} ***\n`);
  return reason;
}
