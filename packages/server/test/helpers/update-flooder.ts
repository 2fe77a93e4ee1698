/**
 * A separate process that floods one document with updates at `RATE` per second (default 1,000) until the server
 * closes it, then prints `closed CODE ERRORCODE` and exits. Run apart from the test so that the flood's own CPU does
 * not delay the honest clients the test measures (RELIABILITY.md S12).
 * Usage: node --import tsx update-flooder.ts URL APIKEY DOCID [RATE]
 */
import { TestClient } from './test-client.js';

const [url, apiKey, docId, rate = '1000'] = process.argv.slice(2);
const perMs = Number(rate) / 1000;
const client = new TestClient({ url: url!, apiKey: apiKey!, docId: docId! });
await client.waitSynced();
console.log('synced');
const started = performance.now();
let sent = 0;
const timer = setInterval(() => {
  const due = Math.floor((performance.now() - started) * perMs);
  for (; sent < due && !client.closeEvent; sent++) client.insert(0, 'z');
}, 2);
const closed = await client.waitClosed(30_000);
clearInterval(timer);
console.log(`closed ${closed.code} ${client.errors.at(-1)?.code ?? '-'} after ${sent} updates in ${(performance.now() - started).toFixed(0)} ms`);
process.exit(0);
