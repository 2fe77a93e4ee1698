/**
 * Preloaded into a server process by memory tests (RELIABILITY.md S14) with `node --expose-gc --import <this file>`
 * (`ServerProcess.start({ collectableHeap: true })`): on SIGUSR2 it runs a full garbage collection and then prints
 * `gc N` on stdout (N counts the collections), so a test that waits for that line and then reads `/metrics` measures
 * live memory. The server itself has no such hook.
 */
let collections = 0;
process.on('SIGUSR2', () => {
  globalThis.gc();
  collections++;
  process.stdout.write(`gc ${collections}\n`);
});
