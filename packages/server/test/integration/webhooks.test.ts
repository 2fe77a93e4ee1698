/**
 * Webhooks against a real server process (SQLite) and a real HTTP receiver that verifies every signature with the
 * `standardwebhooks` library. Debounce and max-wait use short values through the server flags; waits are on the
 * receiver's requests.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerProcess } from '../helpers/server-process.js';
import { TestClient } from '../helpers/test-client.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import type { Delivery } from '../helpers/webhook-receiver.js';

async function setup(t: { after(fn: () => Promise<void>): void }, extraArgs: string[], events?: string) {
  const receiver = await WebhookReceiver.start();
  const server = await ServerProcess.start({ extraArgs });
  const state = { server };
  t.after(async () => {
    await receiver.close();
    await state.server.cleanup();
  });
  const { apiKey, secret } = await server.createKey({ name: 'hooks' });
  const { stdout } = await server.cli(['webhooks', 'add', '--key', apiKey, '--url', receiver.url, '--json', ...(events ? ['--events', events] : [])]);
  const endpoint = JSON.parse(stdout) as { id: string; secret: string };
  receiver.secret = endpoint.secret;
  return { receiver, state, apiKey, secret, endpoint };
}

const ofType = (r: WebhookReceiver, type: string, docId: string): Delivery[] =>
  r.delivered.filter((d) => d.body.type === type && d.body.data.docId === docId);

test('doc.changed: one signed delivery per burst after the debounce, carrying the stored document in every format', async (t) => {
  // Debounce 2 s: the seed and the burst right after it are one change window even on a loaded machine.
  const { receiver, state, apiKey, secret, endpoint } = await setup(t, ['--webhook-debounce', '2', '--webhook-max-wait', '30']);
  const writer = await TestClient.connect({ url: state.server.url, apiKey, docId: 'notes', seedText: 'Hello <b> & world\n' });
  t.after(() => writer.close());
  await writer.waitSynced();
  for (let i = 0; i < 20; i++) writer.insert(writer.text.length, `line ${i}\n`);
  await writer.waitAllAcked();
  const first = await receiver.waitFor((r) => ofType(r, 'doc.changed', 'notes')[0], 'doc.changed');
  assert.equal(first.verified, true, 'signature verified with the endpoint secret');
  assert.match(first.id, /^msg_/);
  assert.equal(first.headers['webhook-id'], first.id);
  assert.match(String(first.headers['webhook-timestamp']), /^\d{10}$/);
  assert.match(String(first.headers['webhook-signature']), /^v1,/);
  assert.equal(first.body.type, 'doc.changed');
  assert.ok(!Number.isNaN(Date.parse(first.body.timestamp)));
  const rest = (await (
    await fetch(`${state.server.url}/api/v2/docs/notes?apiKey=${apiKey}&format=json`, { headers: { Authorization: `Bearer ${secret}` } })
  ).json()) as Record<string, unknown>;
  assert.equal(first.body.data['text'], writer.text.toString(), 'the content equals the document');
  assert.deepEqual(
    { text: first.body.data['text'], html: first.body.data['html'], delta: first.body.data['delta'], epoch: first.body.data['epoch'] },
    { text: rest['text'], html: rest['html'], delta: rest['delta'], epoch: rest['epoch'] },
    'the formats of the REST API',
  );
  assert.ok(String(first.body.data['html']).includes('Hello ') && !String(first.body.data['html']).includes('<b>'), 'HTML escaped');
  assert.equal(typeof first.body.data.version, 'number');

  // A later edit is a new event with a higher version; the burst was one delivery.
  writer.insert(0, 'later ');
  await writer.waitAllAcked();
  const second = await receiver.waitFor((r) => ofType(r, 'doc.changed', 'notes')[1], 'second doc.changed');
  assert.notEqual(second.id, first.id);
  assert.ok(second.body.data.version > first.body.data.version);
  assert.equal(second.body.data['text'], writer.text.toString());
  assert.deepEqual(
    receiver.requests.filter((d) => d.body.type === 'doc.changed').map((d) => d.id),
    [first.id, second.id],
    'one delivery per debounced burst',
  );
  const listed = await state.server.cli(['webhooks', 'list', '--json']);
  assert.deepEqual((JSON.parse(listed.stdout) as Array<{ id: string }>).map((e) => e.id), [endpoint.id]);
});

test('doc.changed: edits that never pause are delivered by max-wait', async (t) => {
  const { receiver, state, apiKey } = await setup(t, ['--webhook-debounce', '5', '--webhook-max-wait', '2'], 'doc.changed');
  const writer = await TestClient.connect({ url: state.server.url, apiKey, docId: 'busy', seedText: 'x\n' });
  t.after(() => writer.close());
  await writer.waitSynced();
  let delivered = false;
  const got = receiver.waitFor((r) => ofType(r, 'doc.changed', 'busy')[0], 'max-wait delivery').then((d) => {
    delivered = true;
    return d;
  });
  // Edits every 300 ms (far shorter than the 5 s debounce) until the delivery arrives: only max-wait can send it.
  let edits = 0;
  while (!delivered && edits < 100) {
    writer.insert(writer.text.length, `${edits++}\n`);
    await writer.waitAllAcked();
    await new Promise((r) => setTimeout(r, 300));
  }
  const delivery = await got;
  assert.ok(edits < 100, 'delivered while the edits went on');
  assert.ok(String(delivery.body.data['text']).startsWith('x\n0\n'));
});

test('SIGKILL after a change is stored and before its event is delivered: delivered after the restart', async (t) => {
  const { receiver, state, apiKey } = await setup(t, ['--webhook-debounce', '3', '--webhook-max-wait', '30'], 'doc.changed');
  const writer = await TestClient.connect({ url: state.server.url, apiKey, docId: 'crash', seedText: 'before crash\n' });
  await writer.waitSynced();
  writer.insert(writer.text.length, 'acked edit\n');
  await writer.waitAllAcked();
  const expected = writer.text.toString();
  await state.server.kill('SIGKILL');
  await writer.waitClosed();
  assert.deepEqual(receiver.requests, [], 'nothing was delivered before the kill (debounce 3 s)');
  state.server = await state.server.restart();
  const delivery = await receiver.waitFor((r) => ofType(r, 'doc.changed', 'crash')[0], 'doc.changed after restart');
  assert.equal(delivery.body.data['text'], expected);
});

test('receiver answering 500, then down, then back: delivered with the same event id', async (t) => {
  const { receiver, state, apiKey } = await setup(t, [
    '--webhook-debounce', '0.2', '--webhook-max-wait', '5', '--webhook-retry-schedule', '0.2,0.2,0.3,0.3,0.5,0.5,0.5,0.5,0.5,0.5,1,1,1,1,1,1,1,1,1,1',
  ], 'doc.changed');
  receiver.status = 500;
  const writer = await TestClient.connect({ url: state.server.url, apiKey, docId: 'retry', seedText: 'keep me\n' });
  t.after(() => writer.close());
  await writer.waitSynced();
  await receiver.waitFor((r) => r.requests.length >= 2 || undefined, 'two attempts answered 500');
  const firstId = receiver.requests[0]!.id;
  await receiver.stop();
  // Attempts while the receiver is down fail with a connection error; /metrics counts them.
  const failuresBefore = await metric(state.server.url, 'wave_webhook_failures_total');
  await waitForMetric(state.server.url, 'wave_webhook_failures_total', (v) => v >= failuresBefore + 1);
  receiver.status = 200;
  await receiver.resume();
  const delivery = await receiver.waitFor((r) => r.delivered.find((d) => d.body.type === 'doc.changed'), 'delivery after the receiver came back');
  assert.equal(delivery.id, firstId, 'same webhook-id across retries');
  assert.ok(receiver.requests.every((r) => r.id === firstId && r.verified));
  assert.equal(delivery.body.data['text'], 'keep me\n');
  await waitForMetric(state.server.url, 'wave_webhook_deliveries_total', (v) => v >= 1);
});

test('after the last retry the event is kept as failed; webhooks failed lists it and replay delivers it', async (t) => {
  const { receiver, state, apiKey, secret } = await setup(t, ['--webhook-debounce', '0', '--webhook-retry-schedule', ''], 'doc.changed');
  receiver.status = 503;
  const writer = await TestClient.connect({ url: state.server.url, apiKey, docId: 'failing', seedText: 'text\n' });
  t.after(() => writer.close());
  await writer.waitSynced();
  const attempt = await receiver.waitFor((r) => r.requests[0], 'the only attempt');
  await waitForMetric(state.server.url, 'wave_webhook_failed', (v) => v === 1);
  const failed = JSON.parse((await state.server.cli(['webhooks', 'failed', '--json'])).stdout) as Array<{ id: string; attempts: number; lastError: string }>;
  assert.deepEqual(failed.map((f) => [f.id, f.attempts, f.lastError]), [[attempt.id, 1, 'HTTP 503']]);

  // REST: the key's own failed events only; replay by id.
  const rest = (path: string, init: RequestInit = {}, key = apiKey, keySecret = secret) =>
    fetch(`${state.server.url}/api/v2/webhooks/${path}?apiKey=${key}`, { ...init, headers: { Authorization: `Bearer ${keySecret}`, ...init.headers } });
  assert.equal((await fetch(`${state.server.url}/api/v2/webhooks/failed?apiKey=${apiKey}`)).status, 401);
  const listed = (await (await rest('failed')).json()) as { events: Array<{ id: string; type: string; docId: string }> };
  assert.deepEqual(listed.events.map((e) => [e.id, e.type, e.docId]), [[attempt.id, 'doc.changed', 'failing']]);
  const other = await state.server.createKey({ name: 'other' });
  assert.deepEqual(((await (await rest('failed', {}, other.apiKey, other.secret)).json()) as { events: unknown[] }).events, []);
  const foreign = await rest('replay', { method: 'POST', body: JSON.stringify({ all: true }) }, other.apiKey, other.secret);
  assert.deepEqual(await foreign.json(), { replayed: 0 }, 'another key cannot replay these');
  assert.equal((await rest('replay', { method: 'POST', body: '{oops' })).status, 400);
  const replayed = await rest('replay', { method: 'POST', body: JSON.stringify({ ids: [attempt.id] }) });
  assert.deepEqual(await replayed.json(), { replayed: 1 });
  // Still 503: one attempt (no retries configured), failed again.
  await receiver.waitFor((r) => r.requests[1], 'the replayed attempt');
  // The outcome is recorded after the answer: poll the failed list (no push channel) until it is back.
  const deadline = Date.now() + 20_000;
  while (((await (await rest('failed')).json()) as { events: unknown[] }).events.length === 0) {
    assert.ok(Date.now() < deadline, 'failed again after the replayed attempt');
    await new Promise((r) => setTimeout(r, 50));
  }

  receiver.status = 200;
  assert.match((await state.server.cli(['webhooks', 'replay', '--all'])).stdout, /1 event queued/);
  const delivery = await receiver.waitFor((r) => r.delivered[0], 'replayed delivery');
  assert.equal(delivery.id, attempt.id);
  assert.deepEqual(new Set(receiver.requests.map((r) => r.id)), new Set([attempt.id]), 'one event id throughout');
});

test('session.ended after the last client leaves, with the content; user.joined / user.left; doc.deleted', async (t) => {
  const { receiver, state, apiKey, secret } = await setup(t, ['--webhook-debounce', '30']);
  const a = await TestClient.connect({ url: state.server.url, apiKey, docId: 'meeting', seedText: 'agenda\n', user: { name: 'Ann' } });
  await a.waitSynced();
  const b = await TestClient.connect({ url: state.server.url, apiKey, docId: 'meeting', user: { name: 'Bob' } });
  await b.waitSynced();
  b.insert(b.text.length, 'minutes\n');
  await b.waitAllAcked();
  await b.close();
  const left = await receiver.waitFor((r) => ofType(r, 'user.left', 'meeting')[0], 'user.left');
  assert.deepEqual(left.body.data['user'], { name: 'Bob' });
  assert.deepEqual(ofType(receiver, 'session.ended', 'meeting'), [], 'Ann is still there');
  const text = a.text.toString();
  await a.close();
  const ended = await receiver.waitFor((r) => ofType(r, 'session.ended', 'meeting')[0], 'session.ended');
  assert.equal(ended.body.data['text'], text);
  assert.deepEqual(
    ofType(receiver, 'user.joined', 'meeting').map((d) => d.body.data['user']),
    [{ name: 'Ann' }, { name: 'Bob' }],
  );
  const deleted = await fetch(`${state.server.url}/api/v2/docs/meeting?apiKey=${apiKey}`, { method: 'DELETE', headers: { Authorization: `Bearer ${secret}` } });
  assert.equal(deleted.status, 204);
  const gone = await receiver.waitFor((r) => ofType(r, 'doc.deleted', 'meeting')[0], 'doc.deleted');
  assert.ok(gone.body.data.version > ended.body.data.version);
  assert.equal(gone.body.data['text'], undefined, 'no content in doc.deleted');
});

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : NaN;
}

/** Polls /metrics (the server's counters have no push channel) until `ok`. */
async function waitForMetric(url: string, name: string, ok: (v: number) => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await metric(url, name);
    if (ok(value)) return;
    if (Date.now() > deadline) throw new Error(`${name} = ${value} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
