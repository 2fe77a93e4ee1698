#!/usr/bin/env node
/**
 * `wave-server`: start the server, manage API keys. Flags win over environment variables, which win over defaults.
 * Exit codes: 0 ok, 1 failure, 2 usage error (unknown flag, bad value, unsupported setting).
 */
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { startServer } from './server.js';
import type { ServerLimits } from './server.js';
import { defaultSecretKeyFile, loadSecretBox } from './secret-box.js';
import { openStore, StoreUrlError } from './store/index.js';
import type { KeyChanges, KeyRecord, Store } from './store/types.js';
import { normalizeOriginSpec } from './origin.js';
import { WEBHOOKS_HELP, webhooksCommand } from './cli-webhooks.js';

const HELP = `wave-server — real-time co-editing server

Usage:
  wave-server start [--host H] [--port P] [--store URL] [--redis URL] [--session-grace S] [--secret-key-file F]
                    [--max-users N] [--max-frame-bytes B] [--max-document-bytes B] [--max-updates-per-second N]
                    [--max-messages-per-second N]
                    [--max-bytes-per-second B] [--auth-failures-per-minute N]
                    [--max-connections-per-address N] [--compact-after-updates N] [--trust-proxy]
                    [--webhook-debounce S] [--webhook-max-wait S] [--webhook-retry-schedule S,…] [--webhook-timeout S]
  wave-server keys create --name N [--account A] [--origin URL]... [--require-token] [--persistent]
                          [--max-users N] [--json] [--store URL] [--secret-key-file F]
  wave-server keys list [--json] [--store URL]
  wave-server keys revoke KEY [--store URL]
  wave-server keys update KEY [--origin URL]... [--any-origin] [--require-token | --no-require-token] [--store URL]
${WEBHOOKS_HELP}
  wave-server --help

start:
  --host H            interface to listen on (env WAVE_HOST, default 127.0.0.1)
  --port P            port, 0 = any free port (env WAVE_PORT, default 8080)
  --store URL         sqlite:PATH or postgres://USER@HOST[:PORT]/DB[?schema=NAME]
                      (env WAVE_STORE, default sqlite:./data/wave.db)
  --redis URL         redis://HOST[:PORT]: fan-out across servers sharing a Postgres store (env WAVE_REDIS_URL)
  --session-grace S   seconds a document's session outlives its last connection (env WAVE_SESSION_GRACE, default 60)
  --secret-key-file F master key sealing the key secrets (env WAVE_SECRET_KEY_FILE; default secret.key next to
                      the SQLite file, ./data/secret.key for Postgres; created with mode 0600 when missing)
  --max-users N                 connections per document unless the key sets its own (default 256)
  --max-frame-bytes B           largest WebSocket frame, close 1009 (default 4194304)
  --max-document-bytes B        largest document, document_too_large / 4413 (default 16777216)
  --max-updates-per-second N    per connection, burst 1 s worth, rate_limited / 4429 (default 400)
  --max-messages-per-second N   per connection, any type, burst 2x, rate_limited / 4429 (default 500)
  --max-bytes-per-second B      per connection, burst 4x, rate_limited / 4429 (default 2097152)
  --auth-failures-per-minute N  per client address, then HTTP 429 (default 30)
  --max-connections-per-address N  open WebSockets per client address, rate_limited / 4430 (default 1000)
  --compact-after-updates N     a loaded document's stored updates are replaced by one snapshot once more than
                                N were stored since its load or last snapshot (default 500)
  --trust-proxy       behind a reverse proxy: the client address is the proxy's last Forwarded for= or
                      X-Forwarded-For entry, not the socket's (env WAVE_TRUST_PROXY=1; default off)
  --webhook-debounce S          doc.changed goes out S seconds after a document's latest stored change
                                (env WAVE_WEBHOOK_DEBOUNCE, default 10)
  --webhook-max-wait S          and at most S seconds after its first undelivered change (env WAVE_WEBHOOK_MAX_WAIT,
                                default 60)
  --webhook-retry-schedule S,…  seconds before each retry (default 5,30,120,600,3600,21600; then failed)
  --webhook-timeout S           bound of one delivery attempt (default 10)
  Creates an API key named "demo" (allowed origin: this server) when none exists.

keys create:
  --name N            display name (required)
  --account A         account owning the documents (default: the name)
  --origin URL        allowed page origin, scheme://host[:port] or "self"; repeat for several (default: any)
  --require-token     connections must carry a signed token
  --persistent        documents are kept: sessions never end
  --max-users N       connections per document
  --json              print { "apiKey", "secret" } as JSON

keys revoke / keys update (running servers close the key's connections that lose access within a second):
  --origin URL        update: replaces the allowed origins (repeat for several)
  --any-origin        update: allow every origin
  --require-token     update: connections must carry a signed token
  --no-require-token  update: tokens become optional
`;

class UsageError extends Error {}

const STORE_OPTION = { store: { type: 'string' } } as const;

function parse<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T, positionals = 0) {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: positionals > 0 });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (parsed.positionals.length > positionals) {
    throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[positionals])}`);
  }
  return parsed;
}

function setting(flag: string | undefined, env: string, fallback: string): { value: string; source: string } {
  if (flag !== undefined) return { value: flag, source: `--${envToFlag(env)}` };
  const fromEnv = process.env[env];
  if (fromEnv !== undefined && fromEnv !== '') return { value: fromEnv, source: env };
  return { value: fallback, source: `--${envToFlag(env)}` };
}

/** A boolean flag, else its environment variable (`1`/`true`/`yes` or `0`/`false`/`no`), else false. */
function flagOrEnv(flag: boolean | undefined, env: string): boolean {
  if (flag !== undefined) return flag;
  const fromEnv = (process.env[env] ?? '').trim().toLowerCase();
  if (fromEnv === '' || fromEnv === '0' || fromEnv === 'false' || fromEnv === 'no') return false;
  if (fromEnv === '1' || fromEnv === 'true' || fromEnv === 'yes') return true;
  throw new UsageError(`${env}: expected 1, true, yes, 0, false or no, got ${JSON.stringify(process.env[env])}`);
}

function envToFlag(env: string): string {
  return ({ WAVE_HOST: 'host', WAVE_PORT: 'port', WAVE_STORE: 'store', WAVE_REDIS_URL: 'redis', WAVE_SESSION_GRACE: 'session-grace' } as Record<string, string>)[env] ?? env;
}

function integer(value: string, source: string, min: number, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`${source}: expected an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

function openStoreOrUsage(url: string): Store {
  try {
    return openStore(url);
  } catch (error) {
    if (error instanceof StoreUrlError) throw new UsageError(error.message);
    throw error;
  }
}

async function start(args: string[]): Promise<number> {
  const { values } = parse(args, {
    host: { type: 'string' },
    port: { type: 'string' },
    ...STORE_OPTION,
    redis: { type: 'string' },
    'session-grace': { type: 'string' },
    'secret-key-file': { type: 'string' },
    'max-users': { type: 'string' },
    'max-frame-bytes': { type: 'string' },
    'max-document-bytes': { type: 'string' },
    'max-messages-per-second': { type: 'string' },
    'max-updates-per-second': { type: 'string' },
    'max-bytes-per-second': { type: 'string' },
    'auth-failures-per-minute': { type: 'string' },
    'max-connections-per-address': { type: 'string' },
    'compact-after-updates': { type: 'string' },
    'trust-proxy': { type: 'boolean' },
    'webhook-debounce': { type: 'string' },
    'webhook-max-wait': { type: 'string' },
    'webhook-retry-schedule': { type: 'string' },
    'webhook-timeout': { type: 'string' },
  });
  if (values.help) return help();
  const webhooks = webhookSettings(values);
  const limits: Partial<ServerLimits> = {};
  const limitFlag = (flag: keyof typeof values, name: keyof ServerLimits, min: number, max: number): void => {
    const value = values[flag];
    if (typeof value === 'string') limits[name] = integer(value, `--${String(flag)}`, min, max);
  };
  limitFlag('max-users', 'maxUsersPerDoc', 1, 100_000);
  limitFlag('max-frame-bytes', 'maxPayloadBytes', 1024, 256 * 1024 * 1024);
  limitFlag('max-document-bytes', 'maxDocumentBytes', 1024, 1024 * 1024 * 1024);
  limitFlag('max-messages-per-second', 'messagesPerSecond', 1, 1_000_000);
  limitFlag('max-updates-per-second', 'updatesPerSecond', 1, 1_000_000);
  limitFlag('max-bytes-per-second', 'bytesPerSecond', 1024, 1024 * 1024 * 1024);
  limitFlag('auth-failures-per-minute', 'authFailuresPerMinute', 1, 1_000_000);
  limitFlag('max-connections-per-address', 'maxConnectionsPerAddress', 1, 10_000_000);
  limitFlag('compact-after-updates', 'compactAfterUpdates', 1, 1_000_000);
  const trustProxy = flagOrEnv(values['trust-proxy'], 'WAVE_TRUST_PROXY');
  const host = setting(values.host, 'WAVE_HOST', '127.0.0.1').value;
  const portSetting = setting(values.port, 'WAVE_PORT', '8080');
  const port = integer(portSetting.value, portSetting.source, 0, 65535);
  const graceSetting = setting(values['session-grace'], 'WAVE_SESSION_GRACE', '60');
  if (!/^\d+(\.\d+)?$/.test(graceSetting.value)) {
    throw new UsageError(`${graceSetting.source}: expected a number of seconds ≥ 0, got ${JSON.stringify(graceSetting.value)}`);
  }
  const redis = setting(values.redis, 'WAVE_REDIS_URL', '');
  if (redis.value !== '' && !/^rediss?:\/\/[^/]/i.test(redis.value)) {
    throw new UsageError(`${redis.source}: expected redis://HOST[:PORT][/DB] (or rediss://), got ${JSON.stringify(redis.value)}`);
  }
  const storeUrl = setting(values.store, 'WAVE_STORE', 'sqlite:./data/wave.db').value;
  const store = openStoreOrUsage(storeUrl);
  const secretBox = loadSecretBox(secretKeyFile(values['secret-key-file'], storeUrl));

  const activeDemos = async (): Promise<KeyRecord[]> => (await store.listKeys()).filter((k) => k.name === 'demo' && k.revokedAt === null);
  let demo = (await activeDemos())[0];
  if (!demo) {
    const created = (await store.createKey({ name: 'demo', origins: ['self'] }, { seal: (k, sec) => secretBox.seal(k, sec) })).record;
    // Servers starting at once on one (Postgres) store may each create one: all keep the oldest (listKeys is in
    // creation order) and a server whose own key lost revokes it.
    demo = (await activeDemos())[0] ?? created;
    if (demo.apiKey === created.apiKey) console.log(`created API key "demo" (origins: self): ${demo.apiKey}`);
    else {
      await store.revokeKey(created.apiKey);
      console.log(`API key "demo": ${demo.apiKey}`);
    }
  } else {
    console.log(`API key "demo": ${demo.apiKey}`);
  }

  let server;
  try {
    server = await startServer({
      host,
      port,
      store,
      ...(redis.value !== '' ? { redis: redis.value } : {}),
      sessionGraceSeconds: Number(graceSetting.value),
      secretKey: secretBox,
      limits,
      trustProxy,
      webhooks,
    });
  } catch (error) {
    await store.close();
    throw error;
  }
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      // A second signal: the operator insists.
      process.exit(1);
    }
    stopping = true;
    console.error(`${signal}: shutting down`);
    // Hard bound: RELIABILITY.md D4 wants sockets closed within 5 s.
    setTimeout(() => process.exit(1), 5_500).unref();
    void server
      .close()
      .then(() => store.close())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          console.error('shutdown failed:', error);
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // Printed only once the signal handlers are in place: whoever waits for this line may stop us right away.
  if (redis.value !== '') console.log(`fan-out: ${redactUrl(redis.value)} (server ${server.serverId})`);
  console.log(`listening on ${server.url}`);
  console.log(`demo: ${server.url}/demo/`);
  return -1; // keeps running
}

async function keys(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'create':
      return keysCreate(rest);
    case 'list':
      return keysList(rest);
    case 'revoke':
      return keysRevoke(rest);
    case 'update':
      return keysUpdate(rest);
    default:
      throw new UsageError(sub === undefined ? 'keys: expected create, list, revoke or update' : `keys: unknown command ${JSON.stringify(sub)}`);
  }
}

async function keysCreate(args: string[]): Promise<number> {
  const { values } = parse(args, {
    name: { type: 'string' },
    account: { type: 'string' },
    origin: { type: 'string', multiple: true },
    'require-token': { type: 'boolean' },
    persistent: { type: 'boolean' },
    'max-users': { type: 'string' },
    json: { type: 'boolean' },
    'secret-key-file': { type: 'string' },
    ...STORE_OPTION,
  });
  if (values.help) return help();
  if (values.name === undefined || values.name.trim() === '') throw new UsageError('keys create: --name is required');
  const origins = originFlags(values.origin);
  const maxUsers = values['max-users'] === undefined ? null : integer(values['max-users'], '--max-users', 1, 100_000);
  const storeUrl = setting(values.store, 'WAVE_STORE', 'sqlite:./data/wave.db').value;
  const store = openStoreOrUsage(storeUrl);
  try {
    const secretBox = loadSecretBox(secretKeyFile(values['secret-key-file'], storeUrl));
    let created;
    try {
      created = await store.createKey({
        name: values.name,
        ...(values.account !== undefined ? { account: values.account } : {}),
        origins,
        requireToken: values['require-token'] === true,
        persistent: values.persistent === true,
        maxUsers,
      }, { seal: (k, sec) => secretBox.seal(k, sec) });
    } catch (error) {
      if (error instanceof TypeError) throw new UsageError(error.message);
      throw error;
    }
    if (values.json) {
      console.log(JSON.stringify({ apiKey: created.record.apiKey, secret: created.secret }));
    } else {
      const r = created.record;
      console.log(`API key created
  name:     ${r.name}
  account:  ${r.account}
  origins:  ${r.origins.length > 0 ? r.origins.join(', ') : 'any'}
  apiKey:   ${r.apiKey}
  secret:   ${created.secret}
The secret is shown only this once: store it now. It signs tokens and authorises the REST API; never put it in a page.`);
    }
    return 0;
  } finally {
    await store.close();
  }
}

async function keysList(args: string[]): Promise<number> {
  const { values } = parse(args, { json: { type: 'boolean' }, ...STORE_OPTION });
  if (values.help) return help();
  const store = openStoreOrUsage(setting(values.store, 'WAVE_STORE', 'sqlite:./data/wave.db').value);
  try {
    const list = await store.listKeys();
    if (values.json) {
      console.log(JSON.stringify(list, null, 2));
    } else if (list.length === 0) {
      console.log('no API keys');
    } else {
      for (const k of list) console.log(describeKey(k));
    }
    return 0;
  } finally {
    await store.close();
  }
}

async function keysRevoke(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { ...STORE_OPTION }, 1);
  if (values.help) return help();
  const apiKey = positionals[0];
  if (apiKey === undefined) throw new UsageError('keys revoke: expected the apiKey to revoke');
  const store = openStoreOrUsage(setting(values.store, 'WAVE_STORE', 'sqlite:./data/wave.db').value);
  try {
    if (await store.revokeKey(apiKey)) {
      console.log(`revoked ${apiKey}`);
      return 0;
    }
    console.error(`no active API key ${apiKey} (unknown or already revoked)`);
    return 1;
  } finally {
    await store.close();
  }
}

async function keysUpdate(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    origin: { type: 'string', multiple: true },
    'any-origin': { type: 'boolean' },
    'require-token': { type: 'boolean' },
    'no-require-token': { type: 'boolean' },
    ...STORE_OPTION,
  }, 1);
  if (values.help) return help();
  const apiKey = positionals[0];
  if (apiKey === undefined) throw new UsageError('keys update: expected the apiKey to update');
  if (values.origin !== undefined && values['any-origin']) throw new UsageError('keys update: --origin and --any-origin exclude each other');
  if (values['require-token'] && values['no-require-token']) {
    throw new UsageError('keys update: --require-token and --no-require-token exclude each other');
  }
  const changes: KeyChanges = {};
  if (values.origin !== undefined) changes.origins = originFlags(values.origin);
  if (values['any-origin']) changes.origins = [];
  if (values['require-token']) changes.requireToken = true;
  if (values['no-require-token']) changes.requireToken = false;
  if (Object.keys(changes).length === 0) {
    throw new UsageError('keys update: nothing to change (--origin, --any-origin, --require-token or --no-require-token)');
  }
  const store = openStoreOrUsage(setting(values.store, 'WAVE_STORE', 'sqlite:./data/wave.db').value);
  try {
    const updated = await store.updateKey(apiKey, changes);
    if (!updated) {
      console.error(`no active API key ${apiKey} (unknown or revoked)`);
      return 1;
    }
    console.log(`updated ${describeKey(updated)}`);
    return 0;
  } finally {
    await store.close();
  }
}

/** `--origin` values normalised (origin.ts), or a usage error naming the bad one. */
function originFlags(values: string[] | undefined): string[] {
  return (values ?? []).map((o) => {
    try {
      return normalizeOriginSpec(o);
    } catch (error) {
      throw new UsageError(`--origin: ${(error as Error).message}`);
    }
  });
}

/** Seconds, as given by a flag or its environment variable, in milliseconds. */
function seconds(flag: string | undefined, env: string, fallback: string, name: string): number {
  const value = flag ?? (process.env[env] || fallback);
  const source = flag !== undefined ? `--${name}` : process.env[env] ? env : `--${name}`;
  if (!/^\d+(\.\d+)?$/.test(value)) throw new UsageError(`${source}: expected a number of seconds ≥ 0, got ${JSON.stringify(value)}`);
  return Math.round(Number(value) * 1000);
}

function webhookSettings(values: Record<string, unknown>): NonNullable<Parameters<typeof startServer>[0]>['webhooks'] {
  const flag = (name: string): string | undefined => values[name] as string | undefined;
  const debounceMs = seconds(flag('webhook-debounce'), 'WAVE_WEBHOOK_DEBOUNCE', '10', 'webhook-debounce');
  const maxWaitMs = seconds(flag('webhook-max-wait'), 'WAVE_WEBHOOK_MAX_WAIT', '60', 'webhook-max-wait');
  const timeoutMs = seconds(flag('webhook-timeout'), 'WAVE_WEBHOOK_TIMEOUT', '10', 'webhook-timeout');
  if (timeoutMs === 0) throw new UsageError('--webhook-timeout: expected more than 0 seconds');
  const schedule = flag('webhook-retry-schedule');
  const retryScheduleMs =
    schedule === undefined ? undefined : schedule === '' ? [] : schedule.split(',').map((s) => seconds(s.trim(), '', '', 'webhook-retry-schedule'));
  return { debounceMs, maxWaitMs, timeoutMs, ...(retryScheduleMs ? { retryScheduleMs } : {}) };
}

/** `--secret-key-file`, else `WAVE_SECRET_KEY_FILE`, else next to the store (secret-box.ts). */
function secretKeyFile(flag: string | undefined, storeUrl: string): string {
  return flag ?? (process.env['WAVE_SECRET_KEY_FILE'] || defaultSecretKeyFile(storeUrl));
}

/** A URL without its password, for logs. */
function redactUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*:)[^@/]*@/i, '$1***@');
}

function describeKey(k: KeyRecord): string {
  const flags = [
    k.requireToken ? 'token' : '',
    k.persistent ? 'persistent' : '',
    k.maxUsers !== null ? `max-users=${k.maxUsers}` : '',
  ].filter(Boolean);
  return [
    k.apiKey,
    `name=${JSON.stringify(k.name)}`,
    `account=${JSON.stringify(k.account)}`,
    `origins=${k.origins.length > 0 ? k.origins.join(',') : 'any'}`,
    ...flags,
    `created=${new Date(k.createdAt).toISOString()}`,
    k.revokedAt !== null ? `REVOKED ${new Date(k.revokedAt).toISOString()}` : 'active',
  ].join('  ');
}

function help(): number {
  console.log(HELP);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
    case '--help':
    case '-h':
    case 'help':
      return help();
    case 'start':
      return start(rest);
    case 'keys':
      return keys(rest);
    case 'webhooks':
      return webhooksCommand(rest, {
        parse: (args, options, positionals) => parse(args, options, positionals) as never,
        usage: (message) => new UsageError(message),
        openStore: (flag) => {
          const url = setting(flag, 'WAVE_STORE', 'sqlite:./data/wave.db').value;
          return { store: openStoreOrUsage(url), url };
        },
        secretKeyFile,
        help,
      });
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      console.error(`wave-server: ${error.message}\nRun "wave-server --help" for usage.`);
      process.exitCode = 2;
    } else {
      console.error('wave-server:', error instanceof Error ? (error.stack ?? error.message) : error);
      process.exitCode = 1;
    }
  },
);
