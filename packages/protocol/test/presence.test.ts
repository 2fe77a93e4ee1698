import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as Y from 'yjs';
import { Awareness, encodeAwarenessUpdate, applyAwarenessUpdate } from 'y-protocols/awareness';
import { isCssColor, isSafeUrl, pickColor, sanitizeUser, stampAwarenessUpdate, PALETTE } from '../src/index.js';

test('isCssColor accepts colours and rejects injections', () => {
  for (const ok of ['#abc', '#A1B2C3', '#a1b2c3d4', 'rgb(1, 2, 3)', 'rgba(1,2,3,0.5)', 'hsl(120deg 50% 50%)', 'RebeccaPurple', 'rgb(1 2 3 / 50%)']) {
    assert.ok(isCssColor(ok), ok);
  }
  for (const bad of ['red; background:url(x)', 'url(javascript:alert(1))', 'expression(alert(1))', '#ggg', '', 'var(--x)', 'red}', 42, null]) {
    assert.ok(!isCssColor(bad), String(bad));
  }
});

test('isSafeUrl keeps http(s) and relative URLs only', () => {
  for (const ok of ['https://a.example/x.png', 'http://a/b', '/avatars/1.png', 'img/a.png']) assert.ok(isSafeUrl(ok), ok);
  for (const bad of ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', 'data:image/png;base64,AA', '//evil.example/x', 'java\nscript:x', 'vbscript:x', '']) {
    assert.ok(!isSafeUrl(bad), bad);
  }
});

test('sanitizeUser keeps known bounded fields only', () => {
  const user = sanitizeUser({ name: 'A'.repeat(500), email: 'a@b.c', avatar: 'javascript:alert(1)', id: 7, extra: 'x', __proto__: { admin: true } });
  assert.deepEqual(user, { name: 'A'.repeat(100), email: 'a@b.c', id: '7' });
  assert.deepEqual(sanitizeUser('nope'), {});
});

test('pickColor validates, else palette round-robin', () => {
  assert.equal(pickColor('#123456', 0), '#123456');
  assert.equal(pickColor('red;x', 1), PALETTE[1]);
  assert.equal(pickColor(undefined, PALETTE.length), PALETTE[0]);
});

test('stampAwarenessUpdate drops foreign client ids and overwrites identity', () => {
  const doc = new Y.Doc();
  const awareness = new Awareness(doc);
  awareness.setLocalState({ user: { name: 'Mallory' }, color: 'red', cursor: { anchor: 1 } });
  const forged = new Awareness(new Y.Doc());
  forged.setLocalState({ user: { name: 'Victim' } });
  const own = encodeAwarenessUpdate(awareness, [doc.clientID]);
  const stamp = { user: { name: 'Real' }, color: '#1f77b4', joinTime: 5 };

  const out = stampAwarenessUpdate(own, doc.clientID, stamp);
  assert.ok(out);
  const receiver = new Awareness(new Y.Doc());
  applyAwarenessUpdate(receiver, out, 'test');
  assert.deepEqual(receiver.getStates().get(doc.clientID), { user: { name: 'Real' }, color: '#1f77b4', joinTime: 5, cursor: { anchor: 1 } });

  const foreign = encodeAwarenessUpdate(forged, [forged.clientID]);
  assert.equal(stampAwarenessUpdate(foreign, doc.clientID, stamp), null);
  assert.throws(() => stampAwarenessUpdate(new Uint8Array([1, 1]), doc.clientID, stamp));
  awareness.destroy();
  forged.destroy();
  receiver.destroy();
});
