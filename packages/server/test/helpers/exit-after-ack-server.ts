/**
 * A server entry for RELIABILITY.md D2: the built `wave-server` (`startServer`, the library the CLI runs) with an
 * `onAckSent` hook that ends the process (code `EXIT_AFTER_ACK_CODE`) right after its first ack left for a socket
 * (with `--exit-at-ack N`: its first ack of a count ≥ N), without a shutdown: the client was told "saved", nothing
 * after the ack runs. Started by `ServerProcess` with `entry: EXIT_AFTER_ACK_SERVER` and the CLI's `--host`,
 * `--port`, `--store` and `--redis` flags (other flags are ignored); prints
 * the CLI's `listening on http://HOST:PORT` line once it listens. Keys and the secret key file are the CLI's
 * defaults for that store, so `wave-server keys create` and a normal restart work on the same data.
 */
import { parseArgs } from 'node:util';
import { startServer } from 'wave-server';
import { EXIT_AFTER_ACK_CODE } from './server-process.js';

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { host: { type: 'string' }, port: { type: 'string' }, store: { type: 'string' }, redis: { type: 'string' }, 'exit-at-ack': { type: 'string' } },
  strict: false,
});
const host = typeof values.host === 'string' ? values.host : '127.0.0.1';
const port = typeof values.port === 'string' ? Number(values.port) : 0;
if (typeof values.store !== 'string') throw new TypeError('exit-after-ack-server: --store is required');
const exitAt = typeof values['exit-at-ack'] === 'string' ? Number(values['exit-at-ack']) : 1;

const server = await startServer({
  host,
  port,
  store: values.store,
  ...(typeof values.redis === 'string' ? { redis: values.redis } : {}),
  onAckSent: (_doc, count) => {
    if (count >= exitAt) process.exit(EXIT_AFTER_ACK_CODE);
  },
});
console.log(`listening on ${server.url}`);
