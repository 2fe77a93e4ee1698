// Debian's Chromium driven by playwright-core: one browser per test file, one context per simulated user.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { EditorDriver } from './drivers.ts';
import type { WaveServer } from './server.ts';
import type { ErrorPayload } from './page-globals.ts';

const CHROMIUM = process.env.WAVE_E2E_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];
export const SHOTS_DIR = process.env.WAVE_SHOTS_DIR ?? '/tmp/wave-shots';
/** Loading a page and the first full sync take ~100 ms here; the bound only catches a hang. */
const START_TIMEOUT_MS = 20_000;

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install -y chromium (or set WAVE_E2E_CHROMIUM)`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/** Releases every waiter at once when `size` have arrived: used to make pages start at the same instant. */
export class Barrier {
  private waiting: Array<() => void> = [];
  constructor(private readonly size: number) {}
  arrive(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      if (this.waiting.length >= this.size) for (const release of this.waiting.splice(0)) release();
    });
  }
}

export interface Peer {
  readonly name: string;
  readonly driver: EditorDriver;
  readonly context: BrowserContext;
  readonly page: Page;
  /** Console errors and uncaught page errors, as they happened. */
  readonly errors: string[];
  /** Errors this peer is expected to log (a test of error handling); anything else fails the test. */
  readonly allowErrors: RegExp[];
}

export interface OpenOptions {
  doc: string;
  /** Content the host page loads into its editor before starting (`?text=`). */
  text?: string;
  allowErrors?: RegExp[];
  /** Hold this page's `/demo/config.json` until the barrier opens, so that several pages call start() together. */
  gate?: Barrier;
  /**
   * Replace the served `/demo/config.json` (e.g. a bad apiKey). Only this subresource is intercepted: a document
   * fulfilled by Playwright has no IP address space and Chromium's Local Network Access checks then block its
   * WebSocket to 127.0.0.1 (net::ERR_BLOCKED_BY_LOCAL_NETWORK_ACCESS_CHECKS).
   */
  config?: (served: Record<string, unknown>) => Record<string, unknown>;
  /** Navigate only; do not wait for `waveStarted`. */
  noWait?: boolean;
  /** More query parameters for the demo page (presence options, user fields: see examples/demo.js). */
  query?: Record<string, string>;
  /** JavaScript run in the page before any of its own (Playwright `addInitScript`), e.g. to turn on a trace. */
  initScript?: string;
  /**
   * Open the page from this origin instead of the server's, e.g. a relay to the server (relay.ts): the demo's
   * `/demo/config.json` then names it as `serverUrl`, so the page's scripts and WebSocket all go through it.
   */
  baseUrl?: string;
}

export type StartResult = { ok: true } | { ok: false; error: ErrorPayload & { name?: string } };

/** A set of simulated users in one test; closes their contexts and judges their errors at the end. */
export class Scene {
  readonly peers: Peer[] = [];
  constructor(readonly browser: Browser, readonly server: WaveServer, readonly label: string) {}

  demoUrl(driver: EditorDriver, query: Record<string, string>, baseUrl = this.server.url): string {
    return `${baseUrl}/demo/${driver.pagePath}?${new URLSearchParams(query)}`;
  }

  async open(name: string, driver: EditorDriver, options: OpenOptions): Promise<Peer> {
    const context = await this.browser.newContext({ viewport: { width: 1000, height: 720 } });
    const page = await context.newPage();
    const peer: Peer = { name, driver, context, page, errors: [], allowErrors: options.allowErrors ?? [] };
    this.peers.push(peer);
    page.on('console', (msg) => {
      // WAVE_E2E_CONSOLE=1 echoes every console line of every page (debugging a binding's trace).
      if (process.env.WAVE_E2E_CONSOLE === '1') process.stderr.write(`[${name}] ${msg.text()}\n`);
      if (msg.type() !== 'error') return;
      const where = msg.location().url ? ` (${msg.location().url}:${msg.location().lineNumber})` : '';
      peer.errors.push(`console.error: ${msg.text()}${where}`);
    });
    page.on('pageerror', (err) => peer.errors.push(`pageerror: ${err.stack ?? err.message}`));
    page.on('crash', () => peer.errors.push('page crashed'));

    if (options.gate || options.config) {
      await context.route('**/demo/config.json', async (route) => {
        const response = await route.fetch();
        let body = await response.text();
        if (options.config) body = JSON.stringify(options.config(JSON.parse(body)));
        await options.gate?.arrive();
        await route.fulfill({ response, body });
      });
    }

    if (options.initScript) await page.addInitScript(options.initScript);
    const query: Record<string, string> = { doc: options.doc, user: name };
    if (options.text !== undefined) query.text = options.text;
    Object.assign(query, options.query ?? {});
    await page.goto(this.demoUrl(driver, query, options.baseUrl));
    await trackTiming(page);
    if (!options.noWait) {
      const result = await startResult(page);
      if (!result.ok) throw new Error(`${name}: start failed: ${JSON.stringify(result.error)}`);
    }
    return peer;
  }

  /** Errors nobody expected, across all peers. */
  unexpectedErrors(): string[] {
    return this.peers.flatMap((peer) =>
      peer.errors.filter((e) => !peer.allowErrors.some((re) => re.test(e))).map((e) => `${peer.name}: ${e}`),
    );
  }

  async diagnostics(): Promise<string> {
    const parts: string[] = [];
    mkdirSync(SHOTS_DIR, { recursive: true });
    for (const peer of this.peers) {
      const shot = join(SHOTS_DIR, `failure-${this.label}-${peer.name}.png`);
      const state = await peer.page
        .evaluate(() => ({
          state: window.coedit?.getState?.(),
          status: window.waveLog?.status.slice(-3),
          errors: window.waveLog?.error,
          users: window.waveLog?.users_update.at(-1)?.map((u) => `${u.user?.name}${u.self ? '*' : ''}`),
          changes: window.waveLog?.content_changed.length,
          statusLine: document.getElementById('status')?.textContent,
          errorBox: document.getElementById('error')?.textContent,
        }))
        .catch((err: Error) => ({ unavailable: err.message }));
      const text = await peer.driver.text(peer.page).catch((err: Error) => `<${err.message}>`);
      await peer.page.screenshot({ path: shot }).catch(() => {});
      parts.push(
        `[${peer.name}] ${peer.page.url()}\n  page: ${JSON.stringify(state)}\n  text: ${JSON.stringify(text)}` +
          `\n  errors: ${JSON.stringify(peer.errors)}\n  screenshot: ${shot}`,
      );
    }
    parts.push(`[server] last lines:\n${this.server.tail(60)}`);
    return parts.join('\n');
  }

  async close(): Promise<void> {
    await Promise.all(this.peers.map((peer) => peer.context.close().catch(() => {})));
  }
}

/**
 * Runs a scenario with a fresh Scene. On failure the error carries every peer's state, screenshot path and the
 * server's last output lines; on success, unexpected console/page errors fail the test.
 */
export async function withScene(
  browser: Browser,
  server: WaveServer,
  label: string,
  body: (scene: Scene) => Promise<void>,
): Promise<void> {
  const scene = new Scene(browser, server, label);
  try {
    try {
      await body(scene);
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      error.message += `\n--- diagnostics (${label}) ---\n${await scene.diagnostics()}`;
      throw error;
    }
    const unexpected = scene.unexpectedErrors();
    if (unexpected.length > 0) {
      throw new Error(`unexpected browser errors:\n${unexpected.join('\n')}\n--- diagnostics ---\n${await scene.diagnostics()}`);
    }
  } finally {
    await scene.close();
  }
}

/** Awaits the page's `window.waveStarted` (bounded) and reports how it settled. */
export async function startResult(page: Page, timeoutMs = START_TIMEOUT_MS): Promise<StartResult> {
  return page.evaluate(async (timeout) => {
    if (!window.waveStarted) return { ok: false as const, error: { code: 'no_waveStarted', message: 'window.waveStarted is not set' } };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject({ code: 'test_timeout', message: `waveStarted did not settle in ${timeout} ms` }), timeout);
    });
    try {
      await Promise.race([window.waveStarted, expired]);
      return { ok: true as const };
    } catch (err: any) {
      return { ok: false as const, error: { name: err?.name, code: err?.code, message: err?.message, detail: err?.detail, fatal: err?.fatal } };
    } finally {
      clearTimeout(timer);
    }
  }, timeoutMs);
}

/**
 * In-page timestamps (performance.now) of the last key press and of every status event, so a test can tell that
 * a status arrived *after* typing stopped. Subscribes through the public `on('status')`.
 */
export async function trackTiming(page: Page): Promise<void> {
  await page.evaluate(() => {
    const timing = { lastKeyAt: -1, status: [] as Array<any> };
    window.waveTiming = timing;
    document.addEventListener('keydown', () => (timing.lastKeyAt = performance.now()), true);
    window.coedit?.on('status', (s) => timing.status.push({ ...s, at: performance.now() }));
  });
}
