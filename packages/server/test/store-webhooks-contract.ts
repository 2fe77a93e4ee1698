/**
 * The webhook part of the store contract (outbox, endpoints, change feed); `runStoreContract` runs it against
 * every backend. Times are passed explicitly, so nothing here sleeps.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import * as Y from 'yjs';
import { SecretBox } from '../src/secret-box.js';
import type { ClaimOptions, DocKey, Store } from '../src/store/types.js';

const T0 = 1_700_000_000_000;
const box = new SecretBox(randomBytes(32));
const seal = (id: string, secret: string): Uint8Array => box.seal(id, secret);

function update(text: string): Uint8Array {
  const doc = new Y.Doc();
  doc.getText('text').insert(0, text);
  const u = Y.encodeStateAsUpdate(doc);
  doc.destroy();
  return u;
}

export function webhookContract(getStore: () => Store): void {
  describe('webhooks and change feed', () => {
    const doc: DocKey = { account: 'acme', docId: 'doc-1' };
    const claim = (now: number, extra: Partial<ClaimOptions> = {}) =>
      getStore().claimEvents({ holder: 'h1', now, leaseMs: 30_000, limit: 10, debounceMs: 10_000, maxWaitMs: 60_000, ...extra });

    async function setup(events?: Parameters<Store['createWebhookEndpoint']>[0]['events']) {
      const store = getStore();
      const key = await store.createKey({ name: 'acme' });
      const endpoint = await store.createWebhookEndpoint({ apiKey: key.record.apiKey, url: 'https://hooks.example.com/wave', ...(events ? { events } : {}) }, { seal });
      const { epoch } = await store.openSession(doc, { now: T0, graceMs: 1_000, persistent: false });
      return { key, endpoint, epoch };
    }

    it('creates, lists and removes endpoints; the secret is sealed and opens to what was shown once', async () => {
      const store = getStore();
      const { key, endpoint } = await setup(['doc.changed', 'session.ended']);
      assert.match(endpoint.record.id, /^we_/);
      assert.match(endpoint.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.deepEqual(endpoint.record.events, ['doc.changed', 'session.ended']);
      assert.deepEqual(await store.listWebhookEndpoints(key.record.apiKey), [endpoint.record]);
      assert.deepEqual(await store.listWebhookEndpoints('wk_other'), []);
      const sealed = await store.findWebhookSecret(endpoint.record.id);
      assert.ok(sealed);
      assert.equal(box.open(endpoint.record.id, sealed), endpoint.secret);
      assert.ok(!Buffer.from(sealed).toString('latin1').includes(endpoint.secret.slice(6, 20)), 'stored sealed');
      assert.equal(await store.removeWebhookEndpoint(endpoint.record.id), true);
      assert.equal(await store.removeWebhookEndpoint(endpoint.record.id), false);
      assert.equal(await store.findWebhookEndpoint(endpoint.record.id), undefined);
    });

    it('refuses URLs that are not http(s) and unknown event types', async () => {
      const store = getStore();
      await assert.rejects(store.createWebhookEndpoint({ apiKey: 'wk_x', url: 'ftp://x.example' }, { seal }), /http/);
      await assert.rejects(store.createWebhookEndpoint({ apiKey: 'wk_x', url: 'not a url' }, { seal }), /absolute/);
      await assert.rejects(store.createWebhookEndpoint({ apiKey: 'wk_x', url: 'https://x.example', events: ['doc.exploded' as never] }, { seal }), /unknown event/);
    });

    it('records one doc.changed per endpoint, debounced from the latest change and capped by max-wait', async () => {
      const store = getStore();
      const { endpoint, epoch } = await setup();
      await store.appendUpdates([{ doc, epoch, update: update('a') }], T0);
      await store.appendUpdates([{ doc, epoch, update: update('b') }], T0 + 8_000);
      assert.deepEqual(await claim(T0 + 10_000), [], 'the second change pushed the debounce');
      const [event, ...rest] = await claim(T0 + 18_000);
      assert.deepEqual(rest, []);
      assert.equal(event!.type, 'doc.changed');
      assert.equal(event!.endpointId, endpoint.record.id);
      assert.match(event!.id, /^msg_[0-9a-f]{32}$/);
      assert.deepEqual(event!.doc, doc);
      assert.equal(await store.completeEvent(event!.id, 'h1', T0 + 18_000), true);

      // Changes every 8 s never let the debounce run out: max-wait delivers 60 s after the first.
      for (let t = T0 + 100_000; t <= T0 + 160_000; t += 8_000) await store.appendUpdates([{ doc, epoch, update: update('c') }], t);
      assert.deepEqual(await claim(T0 + 159_000), []);
      const capped = await claim(T0 + 160_000);
      assert.equal(capped.length, 1);
      assert.notEqual(capped[0]!.id, event!.id, 'a change after a claim opens a new event');
    });

    it('leases: a claimed event is not claimed again until its lease expires; completion needs the lease', async () => {
      const store = getStore();
      const { epoch } = await setup();
      await store.appendUpdates([{ doc, epoch, update: update('a') }], T0);
      const [event] = await claim(T0 + 10_000);
      assert.ok(event);
      assert.deepEqual(await claim(T0 + 10_001, { holder: 'h2' }), []);
      const [taken] = await claim(T0 + 40_000, { holder: 'h2' });
      assert.equal(taken?.id, event.id, 'same event id after the lease expired');
      assert.equal(await store.completeEvent(event.id, 'h1', T0 + 40_001), false, 'h1 lost the lease');
      assert.equal(await store.completeEvent(event.id, 'h2', T0 + 40_001), true);
      assert.equal((await store.findEvent(event.id))?.state, 'delivered');
      assert.deepEqual(await claim(T0 + 100_000), []);
      assert.equal(await store.pruneDelivered(T0 + 40_001, 10), 0, 'delivered at, not before');
      assert.equal(await store.pruneDelivered(T0 + 40_002, 10), 1);
      assert.equal(await store.findEvent(event.id), undefined);
    });

    it('servers claiming at once get disjoint events', async () => {
      const store = getStore();
      await setup(['user.joined']);
      for (let i = 0; i < 20; i++) await store.enqueueEvent(doc, 'user.joined', { user: { name: `u${i}` } }, T0);
      const claims = await Promise.all(['h1', 'h2', 'h3'].map((holder) => claim(T0, { holder })));
      const ids = claims.flat().map((e) => e.id);
      assert.equal(ids.length, 20, 'every event claimed');
      assert.equal(new Set(ids).size, 20, 'none claimed twice');
    });

    it('retries at the given time, keeps a failed event, and replays it with a fresh schedule', async () => {
      const store = getStore();
      const { epoch } = await setup();
      await store.appendUpdates([{ doc, epoch, update: update('a') }], T0);
      const [event] = await claim(T0 + 10_000);
      assert.equal(await store.failEvent(event!.id, 'h1', T0 + 10_000, 'HTTP 500', T0 + 15_000), true);
      assert.deepEqual(await claim(T0 + 14_999), []);
      const [retry] = await claim(T0 + 15_000);
      assert.equal(retry?.id, event!.id);
      assert.equal(retry?.roundAttempts, 1);
      assert.equal(await store.failEvent(event!.id, 'h1', T0 + 15_000, 'HTTP 500', null), true);
      const failed = await store.listEvents('failed');
      assert.deepEqual(failed.map((e) => [e.id, e.attempts, e.lastError]), [[event!.id, 2, 'HTTP 500']]);
      assert.equal((await store.outboxStats()).failed, 1);
      assert.equal(await store.replayEvents('all', T0 + 20_000), 1);
      const [replayed] = await claim(T0 + 20_000);
      assert.equal(replayed?.id, event!.id);
      assert.equal(replayed?.roundAttempts, 0);
      assert.equal(replayed?.attempts, 2);
    });

    it('delivers only subscribed events; doc.deleted and enqueued events', async () => {
      const store = getStore();
      const { endpoint } = await setup(['doc.deleted', 'user.joined']);
      const { epoch } = await store.openSession(doc, { now: T0, graceMs: 1_000, persistent: false });
      await store.appendUpdates([{ doc, epoch, update: update('a') }], T0);
      assert.equal(await store.enqueueEvent(doc, 'user.joined', { user: { name: 'Ann' } }, T0), 1);
      assert.equal(await store.enqueueEvent(doc, 'user.left', null, T0), 0);
      await store.deleteDocument(doc, T0 + 1);
      const events = await claim(T0 + 100_000);
      assert.deepEqual(events.map((e) => [e.type, e.endpointId]).sort(), [['doc.deleted', endpoint.record.id], ['user.joined', endpoint.record.id]]);
      assert.deepEqual(events.find((e) => e.type === 'user.joined')?.payload, { user: { name: 'Ann' } });
    });

    it('versions and feed cursors increase with every stored change; a changed document moves to the end', async () => {
      const store = getStore();
      await setup();
      const other: DocKey = { account: 'acme', docId: 'doc-2' };
      const { epoch } = await store.openSession(doc, { now: T0, graceMs: 1_000, persistent: false });
      await store.openSession(other, { now: T0, graceMs: 1_000, persistent: false });
      await store.appendUpdates([{ doc, epoch, update: update('a') }], T0);
      await store.appendUpdates([{ doc: other, epoch: 1, update: update('b') }, { doc, epoch, update: update('c') }], T0 + 1);
      assert.equal((await store.docChange(doc))?.version, 2);
      assert.equal((await store.docChange(other))?.version, 1);
      const feed = await store.listChanges('acme', 0, 10);
      assert.equal(feed.length, 2);
      assert.ok(feed[0]!.cursor < feed[1]!.cursor);
      const after = await store.listChanges('acme', feed[1]!.cursor, 10);
      assert.deepEqual(after, []);
      await store.appendUpdates([{ doc: other, epoch: 1, update: update('d') }, { doc: { account: 'else', docId: 'x' }, epoch: 1, update: update('e') }], T0 + 2);
      const next = await store.listChanges('acme', feed[1]!.cursor, 10);
      assert.deepEqual(next.map((c) => [c.docId, c.version]), [['doc-2', 2]]);
      await store.deleteDocument(doc, T0 + 3);
      const deleted = await store.listChanges('acme', next[0]!.cursor, 10);
      assert.deepEqual(deleted.map((c) => [c.docId, c.version, c.deleted]), [['doc-1', 3, true]]);
      // A stale epoch stores nothing and records nothing.
      await store.appendUpdates([{ doc: other, epoch: 99, update: update('x') }], T0 + 4);
      assert.equal((await store.docChange(other))?.version, 2);
    });
  });
}
