/**
 * Postgres and Redis for the scale-out tests. Where a service is unreachable the tests that need it skip with a
 * loud banner; with `CI` set they fail instead, so that CI cannot pass without having run them.
 *
 * Every run works in its own Postgres schema (`?schema=wave_test_…`, dropped at the end) and its own Redis key
 * prefix (random document ids), so runs on one machine do not collide.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';

/** Database `test`, trust auth (the CI machine). Override with WAVE_TEST_POSTGRES_URL. */
const POSTGRES_CANDIDATES = process.env['WAVE_TEST_POSTGRES_URL']
  ? [process.env['WAVE_TEST_POSTGRES_URL']]
  : ['postgres://postgres@127.0.0.1:5432/test', 'postgres://root@127.0.0.1:5432/test'];
export const REDIS_URL = process.env['WAVE_TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** A probe that does not answer within this long counts as unreachable. */
const PROBE_TIMEOUT_MS = 3_000;

export type Service = 'postgres' | 'redis';

let postgresUrl: string | undefined;

/** The base URL that answered the probe (call `services` first). */
export function postgresBaseUrl(): string {
  assert.ok(postgresUrl, 'Postgres was not probed or is unreachable');
  return postgresUrl;
}

async function probePostgres(): Promise<string | undefined> {
  const problems: string[] = [];
  for (const url of POSTGRES_CANDIDATES) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PROBE_TIMEOUT_MS });
    try {
      await client.connect();
      await client.query('SELECT 1');
      postgresUrl = url;
      return undefined;
    } catch (error) {
      problems.push(`${url}: ${(error as Error).message}`);
    } finally {
      await client.end().catch(() => {});
    }
  }
  return problems.join('; ');
}

/** A raw PING, so that the probe needs no client library and cannot retry for long. */
function probeRedis(): Promise<string | undefined> {
  const { hostname, port } = new URL(REDIS_URL);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 6379) });
    const done = (problem: string | undefined): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(problem);
    };
    const timer = setTimeout(() => done(`${REDIS_URL}: no answer within ${PROBE_TIMEOUT_MS} ms`), PROBE_TIMEOUT_MS);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG') ? undefined : `${REDIS_URL}: answered ${JSON.stringify(data.toString().trim())}`));
    socket.once('error', (error) => done(`${REDIS_URL}: ${error.message}`));
  });
}

/**
 * True when every service answers. Otherwise registers one test that skips (or, under CI, fails) with the reason,
 * prints a banner, and returns false: the caller then registers none of its tests.
 */
export async function services(...needed: Service[]): Promise<boolean> {
  const problems: string[] = [];
  for (const service of needed) {
    const problem = service === 'postgres' ? await probePostgres() : await probeRedis();
    if (problem !== undefined) problems.push(`${service} unreachable (${problem})`);
  }
  if (problems.length === 0) return true;
  const message = `${problems.join('; ')}: the ${needed.join(' + ')} tests of this file did not run`;
  const line = '!'.repeat(100);
  console.warn(`\n${line}\n!!! SKIPPED: ${message}\n!!! Start the services (see packages/server/README.md) or set WAVE_TEST_POSTGRES_URL / WAVE_TEST_REDIS_URL.\n${line}\n`);
  test(`services available: ${needed.join(', ')}`, (t) => {
    if (process.env['CI']) assert.fail(`${message}. CI must run them: start the services.`);
    t.skip(message);
  });
  return false;
}

/** A fresh schema name for one test run (or one test). */
export function newSchemaName(): string {
  return `wave_test_${randomBytes(6).toString('hex')}`;
}

/** The store URL of `schema` on the probed database. */
export function postgresStoreUrl(schema: string): string {
  const url = new URL(postgresBaseUrl());
  url.searchParams.set('schema', schema);
  return url.toString();
}

/** Runs one statement as the admin connection (dropping schemas, inspecting tables). */
export async function adminQuery<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: postgresBaseUrl(), connectionTimeoutMillis: PROBE_TIMEOUT_MS });
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

export async function dropSchema(schema: string): Promise<void> {
  assert.match(schema, /^wave_test_[0-9a-f]+$/, 'only test schemas are dropped');
  await adminQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

const docIds: string[] = [];

/** A random document id, so that runs sharing one Redis never read each other's streams. */
export function uniqueDocId(prefix: string): string {
  const docId = `${prefix}-${randomBytes(6).toString('hex')}`;
  docIds.push(docId);
  return docId;
}

/**
 * Deletes the streams of the documents this process created (they would expire after a day anyway). Called when
 * the servers are gone, so nothing writes them again.
 */
export async function deleteTestStreams(): Promise<void> {
  const ids = docIds.splice(0);
  if (ids.length === 0) return;
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    for (const docId of ids) {
      // Stream keys end with ":<docId>" (fanout/redis-codec.ts); the random part makes the pattern unique.
      const keys: string[] = [];
      let cursor = '0';
      do {
        const [next, found] = await redis.scan(cursor, 'MATCH', `wave:stream:*:${docId}`, 'COUNT', 1000);
        cursor = next;
        keys.push(...found);
      } while (cursor !== '0');
      if (keys.length > 0) await redis.del(...keys);
    }
  } finally {
    redis.disconnect();
  }
}
