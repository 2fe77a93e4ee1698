/**
 * `watchKeys` for Postgres: one dedicated connection LISTENs on `wave_keys`, which the `keys_changed` trigger
 * (migration 4) notifies with `"SCHEMA APIKEY"` when a key is revoked, deleted or has its origins or token rule
 * changed. Notifications are delivered at commit, to every listening server, so each one learns of a change made
 * by the CLI or another server within a round trip.
 *
 * Notifications sent while the connection is down are lost; therefore after every (re)connection the watcher
 * reports `undefined` ("any key may have changed") and the server re-checks every key in use.
 */
import pg from 'pg';

/** Delay before reconnecting a lost listening connection. */
const RECONNECT_MS = 1_000;

export const KEYS_CHANNEL = 'wave_keys';

export class PostgresKeyWatch {
  private client: pg.Client | undefined;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly config: pg.ClientConfig,
    /** Resolves when the schema (and its trigger) exists. */
    private readonly ready: () => Promise<void>,
    private readonly onChange: (apiKey: string | undefined) => void,
  ) {
    void this.connect();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client(this.config);
    this.client = client;
    const lost = (): void => {
      if (this.client !== client) return;
      this.client = undefined;
      void client.end().catch(() => {});
      if (!this.stopped) this.timer = setTimeout(() => void this.connect(), RECONNECT_MS);
    };
    client.on('error', lost);
    client.on('end', lost);
    try {
      await this.ready();
      await client.connect();
      const { rows } = await client.query<{ schema: string }>('SELECT current_schema() AS schema');
      const schema = rows[0]?.schema;
      client.on('notification', (message) => {
        const payload = message.payload ?? '';
        const space = payload.indexOf(' ');
        if (message.channel !== KEYS_CHANNEL || space < 0 || payload.slice(0, space) !== schema) return;
        this.onChange(payload.slice(space + 1));
      });
      await client.query(`LISTEN ${KEYS_CHANNEL}`);
      if (this.stopped || this.client !== client) return;
      this.onChange(undefined);
    } catch {
      lost();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}
