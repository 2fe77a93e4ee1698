/**
 * P12 (heartbeat) for a client that is alone on its document for longer than the dead-socket timeout (35 s). It
 * keeps sending presence renewals, which the server does not echo, so it hears nothing: a client that pinged only
 * when it had not sent recently would declare its healthy socket dead and reconnect every ~40 s. It must ping when
 * it has heard nothing, and stay on its one connection. Real server, real sockets;
 * runs ~45 s in real time (the timers are the production ones).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerProcess } from '../../../server/test/helpers/server-process.js';
import { labClient } from '../helpers/clients.js';
import { hold, until } from '../helpers/util.js';
import { WsLab } from '../helpers/ws-lab.js';

/** Longer than DEAD_AFTER_MS (35 s) plus one heartbeat tick (5 s). */
const ALONE_MS = 45_000;

test('a client alone on its document for 45 s keeps its one healthy connection (pings when it hears nothing)', { timeout: ALONE_MS + 60_000 }, async () => {
  const srv = await ServerProcess.start();
  const lab = new WsLab();
  const { apiKey } = await srv.createKey({ name: 'heartbeat' });
  const alone = labClient({ lab, name: 'alone', url: srv.url, apiKey, docId: 'alone-doc', initial: 'quiet\n' });
  try {
    await alone.started;
    await until('online and saved', () => alone.session.getStatus().state === 'online' && alone.session.getStatus().saved);
    const statusesBefore = alone.statuses.length;
    await hold(ALONE_MS);
    const states = alone.statuses.slice(statusesBefore).map((s) => s.state);
    const opened = lab.attempts.filter((a) => a.client === 'alone' && a.opened);
    assert.deepEqual(states.filter((s) => s !== 'online'), [], `never left online: ${states.join(' → ')}`);
    assert.equal(opened.length, 1, `one connection, never re-opened (${opened.length} opened)`);
    assert.equal(alone.session.getStatus().state, 'online');
  } finally {
    await alone.session.stop();
    await srv.kill('SIGTERM');
    await srv.cleanup();
  }
});
