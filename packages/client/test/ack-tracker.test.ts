/** AckTracker (PROTOCOL.md P9/P10): which local edits an `Ack{n}` confirms as stored. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AckTracker } from '../src/core/ack-tracker.js';

test('an ack of a message that carried the edits confirms them', () => {
  const tracker = new AckTracker();
  tracker.localEdit();
  tracker.localEdit();
  tracker.sent();
  assert.equal(tracker.pending, 2);
  assert.equal(tracker.acked(1), true);
  assert.equal(tracker.pending, 0);
});

test('[S17] an ack of a read-only client’s empty reply does not count the edits it kept as stored', () => {
  const tracker = new AckTracker();
  tracker.localEdit(); // made offline, kept; the connection then turns out read-only
  tracker.connectionLost();
  tracker.sentNothing();
  assert.equal(tracker.acked(1), false);
  assert.equal(tracker.pending, 1, 'the kept edit is still not stored');
});
