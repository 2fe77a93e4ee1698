/** The built `wave-server` CLI (run `npx tsc -b packages/protocol packages/server` first). */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CLI, REPO_ROOT, ServerProcess } from './helpers/server-process.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const cleanEnv = { ...process.env };
  for (const name of ['WAVE_HOST', 'WAVE_PORT', 'WAVE_STORE', 'WAVE_REDIS_URL', 'WAVE_SESSION_GRACE']) delete cleanEnv[name];
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, env: { ...cleanEnv, ...env }, timeout: 15_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

describe('wave-server CLI', () => {
  let dir: string;
  let store: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'wave-cli-'));
    store = `sqlite:${join(dir, 'nested', 'wave.db')}`;
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('prints help', async () => {
    const res = await run(['--help']);
    assert.equal(res.code, 0);
    assert.match(res.stdout, /wave-server start \[--host H\]/);
    assert.match(res.stdout, /keys create --name N/);
  });

  it('exits 2 naming the flag for unknown flags and bad values', async () => {
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [['start', '--bogus'], {}, /--bogus/],
      [['start', '--port', 'eighty'], {}, /--port: expected an integer from 0 to 65535/],
      [['start', '--port', '70000'], {}, /--port/],
      [['start'], { WAVE_PORT: 'x' }, /WAVE_PORT: expected an integer/],
      [['start', '--session-grace', '-1'], {}, /--session-grace/],
      [['start', '--redis', 'localhost:6379'], {}, /--redis: expected redis:\/\/HOST/],
      [['start'], { WAVE_REDIS_URL: 'http://x' }, /WAVE_REDIS_URL: expected redis:\/\/HOST/],
      [['start', '--store', 'postgres://u@localhost/wave?schema=a-b'], {}, /schema "a-b"/],
      [['start', '--store', 'mysql://u@localhost/wave'], {}, /expected sqlite:PATH or postgres:\/\//],
      [['keys', 'create', '--store', store], {}, /--name is required/],
      [['keys', 'create', '--name', 'x', '--origin', 'https://a.example/path', '--store', store], {}, /--origin: .*without path/],
      [['keys', 'create', '--name', 'x', '--max-users', '0', '--store', store], {}, /--max-users/],
      [['keys', 'frobnicate'], {}, /unknown command/],
      [['launch'], {}, /unknown command "launch"/],
    ];
    for (const [args, env, message] of cases) {
      const res = await run(args, env);
      assert.equal(res.code, 2, `${args.join(' ')} → ${res.code} ${res.stderr}`);
      assert.match(res.stderr, message, args.join(' '));
    }
  });

  it('creates, lists and revokes keys', async () => {
    const json = await run(['keys', 'create', '--name', 'site', '--account', 'acme', '--origin', 'https://App.example', '--origin', 'self', '--persistent', '--max-users', '5', '--json', '--store', store]);
    assert.equal(json.code, 0, json.stderr);
    const created = JSON.parse(json.stdout) as { apiKey: string; secret: string };
    assert.deepEqual(Object.keys(created).sort(), ['apiKey', 'secret']);
    assert.match(created.apiKey, /^wk_/);
    assert.match(created.secret, /^wsk_/);

    const human = await run(['keys', 'create', '--name', 'other', '--store', store]);
    assert.equal(human.code, 0);
    assert.match(human.stdout, /apiKey: +wk_/);
    assert.match(human.stdout, /secret: +wsk_/);
    assert.match(human.stdout, /shown only this once/);

    const list = await run(['keys', 'list', '--json', '--store', store]);
    const keys = JSON.parse(list.stdout) as Array<{ apiKey: string; account: string; origins: string[]; persistent: boolean; maxUsers: number | null }>;
    const site = keys.find((k) => k.apiKey === created.apiKey);
    assert.deepEqual(site && { account: site.account, origins: site.origins, persistent: site.persistent, maxUsers: site.maxUsers }, {
      account: 'acme',
      origins: ['https://app.example', 'self'],
      persistent: true,
      maxUsers: 5,
    });
    assert.ok(!list.stdout.includes(created.secret), 'secrets are never listed');
    assert.match((await run(['keys', 'list', '--store', store])).stdout, new RegExp(`${created.apiKey}.*active`));

    assert.equal((await run(['keys', 'revoke', created.apiKey, '--store', store])).code, 0);
    const again = await run(['keys', 'revoke', created.apiKey, '--store', store]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already revoked/);
    assert.match((await run(['keys', 'list', '--store', store])).stdout, /REVOKED/);
    const revoked = await run(['keys', 'update', created.apiKey, '--require-token', '--store', store]);
    assert.equal(revoked.code, 1);
    assert.match(revoked.stderr, /no active API key/);
  });

  it('updates the origins and token rule of a key', async () => {
    const { apiKey } = JSON.parse((await run(['keys', 'create', '--name', 'upd', '--origin', 'https://a.example', '--json', '--store', store])).stdout) as { apiKey: string };
    const listed = async (): Promise<{ origins: string[]; requireToken: boolean }> => {
      const keys = JSON.parse((await run(['keys', 'list', '--json', '--store', store])).stdout) as Array<{ apiKey: string; origins: string[]; requireToken: boolean }>;
      const key = keys.find((k) => k.apiKey === apiKey)!;
      return { origins: key.origins, requireToken: key.requireToken };
    };
    const update = await run(['keys', 'update', apiKey, '--origin', 'https://B.example', '--origin', 'self', '--require-token', '--store', store]);
    assert.equal(update.code, 0, update.stderr);
    assert.match(update.stdout, /origins=https:\/\/b\.example,self +token/);
    assert.deepEqual(await listed(), { origins: ['https://b.example', 'self'], requireToken: true });
    assert.equal((await run(['keys', 'update', apiKey, '--any-origin', '--no-require-token', '--store', store])).code, 0);
    assert.deepEqual(await listed(), { origins: [], requireToken: false });
    const usage: Array<[string[], RegExp]> = [
      [['keys', 'update', apiKey], /nothing to change/],
      [['keys', 'update'], /expected the apiKey/],
      [['keys', 'update', apiKey, '--origin', 'https://a.example/x'], /--origin: .*without path/],
      [['keys', 'update', apiKey, '--origin', 'https://a.example', '--any-origin'], /exclude each other/],
      [['keys', 'update', apiKey, '--require-token', '--no-require-token'], /exclude each other/],
    ];
    for (const [args, message] of usage) {
      const res = await run([...args, '--store', store]);
      assert.equal(res.code, 2, `${args.join(' ')} → ${res.code} ${res.stderr}`);
      assert.match(res.stderr, message);
    }
    assert.deepEqual(await listed(), { origins: [], requireToken: false }, 'refused updates change nothing');
  });

  it('start creates the demo key once and prints the listening and demo lines', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'wave-cli-start-'));
    try {
      const first = await ServerProcess.start({ dir: dataDir });
      assert.match(first.stdout, /^created API key "demo" \(origins: self\): wk_\S+$/m);
      assert.match(first.stdout, /^listening on http:\/\/127\.0\.0\.1:\d+$/m);
      assert.ok(first.port > 0);
      await first.waitForOutput(/^demo: http:\/\/127\.0\.0\.1:\d+\/demo\/$/m);
      assert.ok(first.stdout.includes(`demo: ${first.url}/demo/`));
      const exit = await first.kill('SIGTERM');
      assert.equal(exit.code, 0, `graceful exit on SIGTERM: ${first.stderr}`);
      const second = await ServerProcess.start({ dir: dataDir });
      assert.doesNotMatch(second.stdout, /created API key/);
      assert.match(second.stdout, /^API key "demo": wk_/m);
      assert.equal((await second.kill('SIGINT')).code, 0);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
  it('webhooks add / list / remove, with clear errors for bad URLs, events and keys', async () => {
    const key = JSON.parse((await run(['keys', 'create', '--name', 'hooks', '--json', '--store', store])).stdout) as { apiKey: string };
    const bad = await run(['webhooks', 'add', '--key', key.apiKey, '--url', 'file:///etc/passwd', '--store', store]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /expected http:\/\/ or https:\/\/, not file:/);
    const relative = await run(['webhooks', 'add', '--key', key.apiKey, '--url', '/hooks', '--store', store]);
    assert.equal(relative.code, 2);
    assert.match(relative.stderr, /absolute/);
    const events = await run(['webhooks', 'add', '--key', key.apiKey, '--url', 'https://x.example/h', '--events', 'doc.changed,doc.saved', '--store', store]);
    assert.equal(events.code, 2);
    assert.match(events.stderr, /unknown event "doc.saved"/);
    const unknownKey = await run(['webhooks', 'add', '--key', 'wk_nope', '--url', 'https://x.example/h', '--store', store]);
    assert.equal(unknownKey.code, 2);
    assert.match(unknownKey.stderr, /no active API key wk_nope/);

    const added = await run(['webhooks', 'add', '--key', key.apiKey, '--url', 'https://x.example/h', '--events', 'doc.changed', '--json', '--store', store]);
    assert.equal(added.code, 0, added.stderr);
    const { id, secret } = JSON.parse(added.stdout) as { id: string; secret: string };
    assert.match(id, /^we_/);
    assert.match(secret, /^whsec_/);
    const listed = await run(['webhooks', 'list', '--key', key.apiKey, '--json', '--store', store]);
    assert.deepEqual((JSON.parse(listed.stdout) as Array<{ id: string; url: string; events: string[] }>).map((e) => [e.id, e.url, e.events]), [
      [id, 'https://x.example/h', ['doc.changed']],
    ]);
    assert.ok(!listed.stdout.includes(secret), 'the secret is shown once');
    assert.equal((await run(['webhooks', 'remove', id, '--store', store])).code, 0);
    assert.equal((await run(['webhooks', 'remove', id, '--store', store])).code, 1);
    assert.match((await run(['webhooks', 'list', '--store', store])).stdout, /no webhook endpoints/);
    assert.equal((await run(['webhooks', 'replay', '--store', store])).code, 2);
    assert.equal((await run(['start', '--webhook-max-wait', 'soon', '--store', store])).code, 2);
  });
});
