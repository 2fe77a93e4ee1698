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
