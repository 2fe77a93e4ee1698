/**
 * Replays one page's recorded Yjs updates (written by `richtext-fuzz.test.ts` on a failure, see the binding's
 * `trace.ts` `recordUpdates`) and shows, for each remote update in a time window that removed text, what
 * `Removal` (adapters/html/successor.ts) finds and what its rescue would write. A debugging aid, not a test.
 *
 *   node --import tsx e2e/tools/replay-removal.ts /tmp/wave-shots/updates-tinymce-fuzz-Bob.json [fromMs] [toMs] [word]
 *
 * `fromMs`/`toMs` are the page's `performance.now()` (the binding trace's first column); `word` limits the output to
 * updates whose effect or rescue mentions it.
 */
import { readFileSync } from 'node:fs';
import * as Y from 'yjs';
import { Removal } from '../../packages/client/src/adapters/html/successor.ts';
import { HTML_TYPE } from '../../packages/client/src/adapters/html/ydoc.ts';

const [file, fromArg, toArg, word] = process.argv.slice(2);
if (!file) {
  console.error('usage: replay-removal.ts UPDATES.json [fromMs] [toMs] [word]');
  process.exit(2);
}
const from = Number(fromArg ?? 0);
const to = Number(toArg ?? Infinity);
const record = JSON.parse(readFileSync(file, 'utf8')) as { client: number; updates: Array<[number, string, string]> };
const decode = (b64: string): Uint8Array => new Uint8Array(Buffer.from(b64, 'base64'));
const FRAGMENT = HTML_TYPE;

// The page's own updates arrive as updates here: no client ID is set (Yjs would pick a new one, with a warning).
const doc = new Y.Doc();
/** The page's own updates: when, and its client's clock before each (for `recent`, as the binding's `ownRecent`). */
const own: Array<{ at: number; clock: number }> = [];
/** As the binding's UNSEEN_OWN_MS. */
const UNSEEN_OWN_MS = 1_500;
for (const [at, kind, b64] of record.updates) {
  if (kind === 'overflow') {
    console.log(`${at}: the record overflowed here; replay stops`);
    break;
  }
  const update = decode(b64);
  if (kind === 'remote' && at >= from && at <= to) inspect(at, update);
  if (kind === 'local') own.push({ at, clock: Y.getState(doc.store, record.client) });
  Y.applyUpdate(doc, update, kind === 'local' ? 'local' : 'remote');
}

/** Whether the page's item `id` was written in the UNSEEN_OWN_MS before `at`. */
function recentAt(at: number, id: Y.ID): boolean {
  const first = own.find((w) => w.at >= at - UNSEEN_OWN_MS);
  return first !== undefined && id.client === record.client && id.clock >= first.clock;
}

/** Applies `update` to a copy of the document as it is, and prints what `Removal` makes of it. */
function inspect(at: number, update: Uint8Array): void {
  const copy = new Y.Doc();
  Y.applyUpdate(copy, Y.encodeStateAsUpdate(doc));
  copy.clientID = record.client; // the rescue writes as the page would
  const frag = copy.getXmlFragment(FRAGMENT);
  const before = frag.toString();
  let removal: Removal | null = null;
  const onDeep = (events: Array<Y.YEvent<Y.AbstractType<unknown>>>, tr: Y.Transaction): void => {
    if (tr.local) return;
    removal = Removal.of(events, tr, record.client, (id) => recentAt(at, id));
  };
  frag.observeDeep(onDeep);
  Y.applyUpdate(copy, update, 'remote');
  frag.unobserveDeep(onDeep);
  const found = removal as Removal | null;
  if (!found) return;
  const after = frag.toString();
  let units = 0;
  if (found.lostAny) copy.transact(() => (units = found.rescue()), 'rescue');
  const rescued = frag.toString();
  const text = `${before}\n${after}\n${rescued}`;
  if (word && !text.includes(word)) return;
  console.log(`=== ${at}: remote update, ${update.length} B; lostAny ${found.lostAny}; rescue ${units} units`);
  console.log(`  before:  ${before}`);
  console.log(`  after:   ${after}`);
  if (units > 0) console.log(`  rescued: ${rescued}`);
  if (process.env.REPLAY_DETAIL) {
    // Private fields, for this debugging aid only.
    const detail = found as unknown as { removed: Array<{ text: Y.XmlText; before: string; lost: boolean[]; ids: unknown[] }>; receivers: Array<{ text: Y.XmlText; created: boolean }> };
    for (const r of detail.removed) {
      const mark = [...r.before].map((c, k) => (r.lost[k] ? c.toUpperCase() : c)).join('');
      console.log(`  removed ${r.ids.some((id) => id !== null) ? '(trimmed)' : '(deleted)'}: ${JSON.stringify(mark)} (lost in capitals)`);
    }
    for (const r of detail.receivers) console.log(`  receiver${r.created ? ' (created)' : ''}: ${JSON.stringify(r.text.toString())}`);
  }
}
