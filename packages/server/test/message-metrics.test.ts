/**
 * What measuring a message costs: `wave_message_handling_cpu_max_seconds` reads the process's CPU time (getrusage,
 * a system call summing every thread) a second time only for a message that took 1 ms of wall time or more.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Metrics } from '../src/metrics.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';
import { TestClient } from './helpers/test-client.js';

describe('message handling metrics (in-process server)', () => {
  let server: InProcessServer;
  let apiKey: string;
  before(async () => {
    server = await startInProcess({ sessionGraceSeconds: 60 });
    apiKey = (await server.sqlite.createKey({ name: 'metrics' })).record.apiKey;
  });
  after(() => server.cleanup());

  it('reads the CPU time once per message handled in under 1 ms of wall time, twice per slower one', async () => {
    const client = new TestClient({ url: server.url, apiKey, docId: 'metrics-doc', seedText: 'x' });
    await client.waitSynced();
    await client.waitAllAcked();

    const cpuUsage = process.cpuUsage.bind(process);
    const messageHandled = Metrics.prototype.messageHandled;
    let reads = 0;
    let handled = 0;
    let slow = 0;
    let fastNotWall = 0;
    process.cpuUsage = (previous?: NodeJS.CpuUsage) => {
      reads++;
      return cpuUsage(previous);
    };
    Metrics.prototype.messageHandled = function (this: Metrics, wall: number, cpu: number) {
      handled++;
      if (wall >= 0.001) slow++;
      else if (cpu !== wall) fastNotWall++;
      messageHandled.call(this, wall, cpu);
    };
    try {
      for (let i = 0; i < 50; i++) {
        client.text.insert(client.text.length, 'y');
        await client.waitAllAcked();
      }
    } finally {
      process.cpuUsage = cpuUsage;
      Metrics.prototype.messageHandled = messageHandled;
      await client.close();
    }
    assert.ok(handled >= 50, `every edit was handled (${handled})`);
    assert.equal(reads, handled + slow, `${handled} messages, ${slow} of them 1 ms or slower`);
    assert.equal(fastNotWall, 0, 'a fast message counts its wall time as its CPU time');
  });
});
