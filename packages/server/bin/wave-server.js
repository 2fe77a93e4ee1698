#!/usr/bin/env node
// The `wave-server` command. It runs the compiled CLI (dist/cli.js), which does not exist in a clone of the
// repository until it is built: npm links this file, not dist/cli.js, so the command exists from `npm install` on
// and says what to do instead of "command not found".
import { existsSync } from 'node:fs';

const cli = new URL('../dist/cli.js', import.meta.url);
if (existsSync(cli)) {
  await import(cli.href);
} else {
  console.error('wave-server: not built yet (dist/cli.js is missing). Run `npm run build` in the repository root.');
  process.exitCode = 1;
}
