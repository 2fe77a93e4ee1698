/**
 * Several real `wave-server` processes on one Postgres schema and one Redis: the scale-out set-up of the README,
 * for integration tests. Call `services('postgres', 'redis')` first.
 */
import * as Y from 'yjs';
import { PostgresStore, parsePostgresUrl } from '../../src/store/postgres.js';
import type { DocKey } from '../../src/store/types.js';
import { ServerProcess } from './server-process.js';
import type { KeyOptions } from './server-process.js';
import { REDIS_URL, deleteTestStreams, dropSchema, newSchemaName, postgresStoreUrl } from './services.js';

export class Cluster {
  private constructor(
    readonly schema: string,
    readonly storeUrl: string,
    readonly servers: ServerProcess[],
  ) {}

  /** Starts `count` servers at once (they race for the schema migration, as a rolling deploy would). */
  static async start(count: number, options: { sessionGrace?: number; extraArgs?: string[]; entry?: string } = {}): Promise<Cluster> {
    const schema = newSchemaName();
    const storeUrl = postgresStoreUrl(schema);
    const started = await Promise.allSettled(
      // Synthetic writers here send bursts far above a person's typing (hundreds of updates/s, waiting only for
      // acks); the per-connection rate limit (S12, tested in security-limits.test.ts) is lifted for them.
      Array.from({ length: count }, () =>
        ServerProcess.start({
          ...options,
          store: storeUrl,
          redis: REDIS_URL,
          extraArgs: ['--max-updates-per-second', '100000', '--max-messages-per-second', '100000', ...(options.extraArgs ?? [])],
        }),
      ),
    );
    const servers = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      await Promise.all(servers.map((s) => s.cleanup()));
      await dropSchema(schema);
      throw failed.reason;
    }
    return new Cluster(schema, storeUrl, servers);
  }

  get urls(): string[] {
    return this.servers.map((s) => s.url);
  }

  createKey(options: KeyOptions): Promise<{ apiKey: string; secret: string }> {
    return this.servers[0]!.createKey(options);
  }

  /** The document's text as a server loading it from the store now would see it. */
  async storedText(doc: DocKey): Promise<string> {
    const store = this.openStore();
    try {
      const session = await store.getSession(doc);
      if (!session) return '';
      const loaded = new Y.Doc();
      for (const update of (await store.loadDocument(doc, session.epoch)).updates) Y.applyUpdate(loaded, update);
      const text = loaded.getText('text').toString();
      loaded.destroy();
      return text;
    } finally {
      await store.close();
    }
  }

  /** A store on the cluster's schema (the caller closes it). */
  openStore(): PostgresStore {
    return new PostgresStore(parsePostgresUrl(this.storeUrl));
  }

  async cleanup(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.cleanup()));
    await dropSchema(this.schema);
    await deleteTestStreams();
  }
}
