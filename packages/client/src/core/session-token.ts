/**
 * The token a session presents (PROTOCOL.md P2, P2b): the host's current one, and the one the server holds for the
 * current connection (sent in its Hello or in a later `Token`). With a token function (token-refresh.ts) a fresh
 * token replaces the current one before `exp`; it is sent on the open connection, and a reconnect after the page was
 * offline or asleep past `exp` asks for a fresh one first.
 */
import type { CoeditError } from './errors.js';
import { TokenRefresher } from './token-refresh.js';

export interface SessionTokenOptions {
  /** The host's token (config `token`); none for key-only access. */
  token: string | undefined;
  /** The host's token function, when `token` was given as one. */
  refreshToken: (() => Promise<string>) | undefined;
  /** A fresh token arrived: the session sends it if online (`send`). */
  onFresh: () => void;
  report: (error: CoeditError) => void;
}

export class SessionToken {
  /** The host's current token, replaced by `set` when the token function gives a fresh one. */
  private current: string | undefined;
  /** The token the server holds for the current connection. */
  private held: string | undefined;
  private readonly refresher: TokenRefresher | undefined;

  constructor(private readonly opts: SessionTokenOptions) {
    this.current = opts.token;
    if (opts.refreshToken && opts.token !== undefined) {
      this.refresher = new TokenRefresher(opts.refreshToken, (token) => this.set(token), opts.report);
    }
  }

  /** Starts the refresh timer (before the first connection). */
  start(): void {
    if (this.current !== undefined) this.refresher?.start(this.current);
  }

  stop(): void {
    this.refresher?.stop();
  }

  /** A fresh token from the host (`Session.setToken`, or the token function). */
  set(token: string): void {
    this.current = token;
    this.opts.onFresh();
  }

  /** The token for a Hello about to be sent: the server holds it from then on. */
  forHello(): string | undefined {
    this.held = this.current;
    return this.current;
  }

  /**
   * Before a reconnect: a promise for a fresh token when the one the server last held expired (the first connection's
   * token was just fetched by the host), else undefined.
   */
  refreshBeforeReconnect(): Promise<void> | undefined {
    if (!this.refresher || this.held === undefined || !TokenRefresher.expired(this.current, Date.now())) return undefined;
    return this.refresher.refreshNow(this.current!);
  }

  /**
   * Sends the current token with `send` (a `Token` message; false when the socket is not open). `always` false: only
   * when the server does not hold it yet (one refreshed while the connection joined).
   */
  send(send: (token: string) => boolean, always: boolean): void {
    const token = this.current;
    if (token === undefined || (!always && token === this.held)) return;
    if (send(token)) this.held = token;
  }
}
