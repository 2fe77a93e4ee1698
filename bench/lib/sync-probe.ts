/**
 * A process that measures, for one stack, how long a new client takes from creating its connection to a first full
 * sync that holds the whole document, or seeds a document (`seed`) or many (`idle`).
 * argv: kind url docId seed|idle|serve apiKey|- [expectedLength | documents]; `seed` replays the B4 trace and prints
 * one JSON line. `serve` (url unused, `-`): one probe per server URL read from stdin, each answered with a JSON line
 * `{ ms }`, so that one process, its client code already warm, can probe a server before and after its restart.
 */
import { createInterface } from 'node:readline';
import { loadFactory, type ClientKind } from './clients.ts';
import { loadTrace, replay } from './b4.ts';

const [kind, url, docId, mode, apiKey, arg] = process.argv.slice(2) as [ClientKind, string, string, string, string, string];
const factory = await loadFactory(kind);
const now = (): number => performance.now();

if (mode === 'seed') {
  const trace = loadTrace()!;
  const client = factory.create({ url, docId, apiKey });
  await client.synced;
  const t0 = now();
  // The whole trace in one local transaction: one update carrying the full history (every item and tombstone),
  // sent the way each stack sends an edit. (Applying an encoded update would be a remote change, which Wave's
  // session rightly does not upload.)
  const doc = client.doc as unknown as { transact(f: () => void): void; getText(n: string): Parameters<typeof replay>[1] };
  doc.transact(() => replay(trace, doc.getText('text')));
  if (client.onPending) {
    await new Promise<void>((res) => client.onPending!((p) => p === 0 && res()));
  } else {
    // The peers have no ack; the probe that follows checks that the whole document arrived.
    await new Promise((r) => setTimeout(r, 2_000));
  }
  console.log(JSON.stringify({ seededMs: now() - t0, length: client.doc.getText('text').length }));
  // Stay connected until killed: servers without persistence drop a document when its last client leaves.
  await new Promise(() => {});
} else if (mode === 'idle') {
  // `arg` documents (docId-0 …), one client each, ~100 characters typed in each, then held open idle.
  const docs = Number(arg);
  const clients = [];
  for (let i = 0; i < docs; i++) clients.push(factory.create({ url, docId: `${docId}-${i}`, apiKey }));
  // On an overloaded machine some handshakes miss the server's Hello deadline: count them instead of failing.
  const settled = await Promise.allSettled(clients.map((c) => c.synced));
  const ok = clients.filter((_, i) => settled[i]!.status === 'fulfilled');
  for (const c of ok) {
    const text = c.doc.getText(c.textName);
    for (let k = 0; k < 10; k++) text.insert(text.length, 'lorem ips ');
  }
  await Promise.all(ok.map((c) => (c.onPending ? new Promise<void>((res) => c.onPending!((p) => p === 0 && res())) : Promise.resolve())));
  console.log(JSON.stringify({ docs: ok.length, failed: docs - ok.length }));
  await new Promise(() => {});
} else if (mode === 'serve') {
  const expected = Number(arg);
  for await (const line of createInterface({ input: process.stdin })) {
    const serverUrl = line.trim();
    if (serverUrl) console.log(JSON.stringify({ ms: await probeOnce(serverUrl, expected) }));
  }
} else {
  throw new Error(`sync-probe: unknown mode ${JSON.stringify(mode)} (seed, idle or serve)`);
}
setTimeout(() => process.exit(0), 300);

/** ms from creating a client to its first sync; checks that the whole document arrived. */
async function probeOnce(serverUrl: string, expected: number): Promise<number> {
  const t0 = now();
  const client = factory.create({ url: serverUrl, docId, apiKey });
  await client.synced;
  const ms = now() - t0;
  const length = client.doc.getText('text').length;
  if (length !== expected) throw new Error(`${kind}: synced document has ${length} characters, expected ${expected}`);
  client.destroy();
  await new Promise((r) => setTimeout(r, 200));
  return ms;
}
