/**
 * A server entry for tests of idle documents (rooms/doc-holder.ts): the built `wave-server` (`startServer`, the
 * library the CLI runs) with `limits.compactIdleAfterMs` from `--compact-idle-after-ms`, so that a test sees a
 * document compacted within a fraction of a second instead of the default 30 s. Not a CLI flag: operators have no
 * use for it. Started by `ServerProcess` with `entry: COMPACT_IDLE_SERVER` and the CLI's `--host`, `--port`,
 * `--store`, `--redis`, `--session-grace`, `--max-updates-per-second` and `--max-messages-per-second` flags (others
 * are ignored); prints the CLI's `listening on http://HOST:PORT` line once it listens. Keys and the secret key file
 * are the CLI's defaults for that store, so `wave-server keys create` and a restart work on the same data.
 */
import { parseArgs } from 'node:util';
import { startServer } from 'wave-server';

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    host: { type: 'string' },
    port: { type: 'string' },
    store: { type: 'string' },
    redis: { type: 'string' },
    'session-grace': { type: 'string' },
    'max-updates-per-second': { type: 'string' },
    'max-messages-per-second': { type: 'string' },
    'compact-idle-after-ms': { type: 'string' },
  },
  strict: false,
});
const text = (name: string): string | undefined => (typeof values[name] === 'string' ? values[name] : undefined);
const number = (name: string): number | undefined => (text(name) === undefined ? undefined : Number(text(name)));
const store = text('store');
if (store === undefined) throw new TypeError('compact-idle-server: --store is required');
const redis = text('redis');
const grace = number('session-grace');

const server = await startServer({
  host: text('host') ?? '127.0.0.1',
  port: number('port') ?? 0,
  store,
  ...(redis !== undefined ? { redis } : {}),
  ...(grace !== undefined ? { sessionGraceSeconds: grace } : {}),
  limits: {
    ...(number('compact-idle-after-ms') !== undefined ? { compactIdleAfterMs: number('compact-idle-after-ms')! } : {}),
    ...(number('max-updates-per-second') !== undefined ? { updatesPerSecond: number('max-updates-per-second')! } : {}),
    ...(number('max-messages-per-second') !== undefined ? { messagesPerSecond: number('max-messages-per-second')! } : {}),
  },
});
console.log(`listening on ${server.url}`);
