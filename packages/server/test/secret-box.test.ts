/** The server master key file: created once, shared by servers that start at the same moment. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadSecretBox } from '../src/secret-box.js';

const MODULE = fileURLToPath(new URL('../src/secret-box.ts', import.meta.url));
const ROUNDS = 100;
const ROUND_MS = 10;
const PROCESSES = 4;

/**
 * One process that, for round r in 0..ROUNDS-1, waits for wall-clock `startAt + r·ROUND_MS` (ms), loads
 * `<dir>/<r>/secret.key` and prints a secret sealed with that key (base64, one line per round), so the parent can
 * check that every process got the same complete key in every round. Rounds give the race many chances.
 */
function sealInChild(dir: string, startAt: number): Promise<string[]> {
  const script = `
    const { loadSecretBox } = await import(${JSON.stringify(MODULE)});
    const lines = [];
    for (let r = 0; r < ${ROUNDS}; r++) {
      while (Date.now() < ${startAt} + r * ${ROUND_MS});
      const box = loadSecretBox(${JSON.stringify(dir)} + '/' + r + '/secret.key');
      lines.push(Buffer.from(box.seal('k', 'shared')).toString('base64'));
    }
    process.stdout.write(lines.join(' '));`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 20_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`child failed: ${stderr || error.message}`));
      else resolve(stdout.split(' '));
    });
  });
}

describe('loadSecretBox', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'wave-secret-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('creates a 0600 key on first use and reads the same key afterwards', async () => {
    const file = join(dir, 'one', 'secret.key');
    const sealed = loadSecretBox(file).seal('k', 'value');
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    assert.equal(loadSecretBox(file).open('k', sealed), 'value');
    assert.deepEqual(await readdir(join(dir, 'one')), ['secret.key'], 'no temporary file is left behind');
  });

  it(`${PROCESSES} processes creating the key at the same moment all get one complete key (${ROUNDS} rounds)`, async () => {
    // Two servers sharing a store start at the same moment: none may read the file while it is still empty (a
    // bare exclusive create would expose it so, and the reader fails with "expected a 32-byte key").
    const race = join(dir, 'race');
    const startAt = Date.now() + 2_000; // after every child has loaded its modules
    const outputs = await Promise.all(Array.from({ length: PROCESSES }, () => sealInChild(race, startAt)));
    for (let round = 0; round < ROUNDS; round++) {
      const box = loadSecretBox(join(race, String(round), 'secret.key'));
      for (const lines of outputs) assert.equal(box.open('k', Buffer.from(lines[round]!, 'base64')), 'shared', `round ${round}`);
      assert.deepEqual(await readdir(join(race, String(round))), ['secret.key'], 'no temporary file is left behind');
    }
  });
});
