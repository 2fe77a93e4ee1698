// `npm run bench` installs this folder's dependencies with `npm ci`. better-sqlite3 (the durable Hocuspocus peer's
// store) has a native module: its install (prebuild-install) looks for a prebuilt binary before compiling, so when
// the root's better-sqlite3 (Wave's, already built for this Node) is the same version, it is offered as a local
// prebuild under the name prebuild-install looks for. Otherwise it is downloaded or compiled as usual.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bench = dirname(fileURLToPath(import.meta.url));
const root = join(bench, '..');
const wanted = JSON.parse(readFileSync(join(bench, 'package.json'), 'utf8')).devDependencies['better-sqlite3'];
const built = join(root, 'node_modules', 'better-sqlite3');
const env = { ...process.env };
let prebuilds = null;
if (existsSync(join(built, 'build', 'Release', 'better_sqlite3.node'))) {
  const version = JSON.parse(readFileSync(join(built, 'package.json'), 'utf8')).version;
  if (version === wanted) {
    prebuilds = mkdtempSync(join(tmpdir(), 'wave-bench-prebuilds-'));
    const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
    execFileSync('tar', ['czf', join(prebuilds, name), 'build/Release/better_sqlite3.node'], { cwd: built });
    env.npm_config_better_sqlite3_local_prebuilds = prebuilds;
  }
}
try {
  execFileSync('npm', ['--prefix', bench, 'ci', '--no-audit', '--no-fund', '--loglevel=error'], { stdio: 'inherit', env });
} finally {
  if (prebuilds) rmSync(prebuilds, { recursive: true, force: true });
}
