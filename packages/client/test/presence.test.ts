// DOM-free parts of the presence UI: the publishing throttle and how a user is shown.
import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { PALETTE } from 'wave-protocol';
import { Throttle } from '../src/core/throttle.js';
import { initialsOf, labelOf, safeColor, shownUser } from '../src/presence/identity.js';

describe('Throttle', () => {
  it('runs at most once per interval, the last call included (trailing edge)', () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
    try {
      let runs = 0;
      const t = new Throttle(() => runs++, () => 50);
      // 1,000 selection changes over one second, one a millisecond.
      for (let ms = 0; ms < 1_000; ms++) {
        t.schedule();
        mock.timers.tick(1);
      }
      mock.timers.tick(100);
      assert.ok(runs <= 21, `${runs} runs in one second (≤ 20 a second, plus the trailing one)`);
      assert.ok(runs >= 19, `${runs} runs: updates keep flowing while the user moves`);
    } finally {
      mock.timers.reset();
    }
  });

  it('runs at once when idle, and the interval can depend on the state (alone: 1 s)', () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 10_000 });
    try {
      let runs = 0;
      let alone = true;
      const t = new Throttle(() => runs++, () => (alone ? 1_000 : 50));
      t.schedule();
      assert.equal(runs, 1, 'first call runs synchronously');
      t.schedule();
      mock.timers.tick(999);
      assert.equal(runs, 1);
      mock.timers.tick(1);
      assert.equal(runs, 2);
      alone = false;
      t.schedule();
      mock.timers.tick(50);
      assert.equal(runs, 3);
      t.schedule();
      t.cancel();
      mock.timers.tick(1_000);
      assert.equal(runs, 3, 'cancel() drops the pending run');
    } finally {
      mock.timers.reset();
    }
  });
});

describe('presence identity', () => {
  it('initials: first letters of the first and last words, punctuation skipped', () => {
    assert.equal(initialsOf({ name: 'Ada Lovelace', email: '' }), 'AL');
    assert.equal(initialsOf({ name: 'Grace Brewster Murray Hopper', email: '' }), 'GH');
    assert.equal(initialsOf({ name: 'bob', email: '' }), 'B');
    assert.equal(initialsOf({ name: '', email: 'jane.doe@example.com' }), 'JD');
    assert.equal(initialsOf({ name: '<img src=x onerror=alert(1)>', email: '' }), 'IO');
    assert.equal(initialsOf({ name: 'élodie ñúñez', email: '' }), 'ÉÑ');
    assert.equal(initialsOf({ name: '  ', email: '' }), '?');
  });

  it('labels: name, else e-mail, else Anonymous', () => {
    assert.equal(labelOf({ name: 'Ada', email: 'a@x' }), 'Ada');
    assert.equal(labelOf({ name: ' ', email: 'a@x' }), 'a@x');
    assert.equal(labelOf({ name: '', email: '' }), 'Anonymous');
  });

  it('colours: a plain CSS colour is kept, anything else becomes the palette colour of the join index', () => {
    assert.equal(safeColor('#e6550d', 0), '#e6550d');
    assert.equal(safeColor('rgb(1, 2, 3)', 0), 'rgb(1, 2, 3)');
    // Named colours are the browser's CSS parser's to decide (e2e presence-editors: `rebeccapurple` in Chromium); Node
    // has none, so a name falls back to the palette here.
    assert.equal(safeColor('rebeccapurple', 2), PALETTE[2]);
    for (const hostile of ['red;background:url(http://evil.test/x)', 'url(javascript:alert(1))', 'var(--x)', 'expression(alert(1))', 42, null]) {
      assert.equal(safeColor(hostile, 3), PALETTE[3], JSON.stringify(hostile));
    }
  });

  it('a state without a server-stamped user is not shown; avatars only with http(s) or relative URLs', () => {
    assert.equal(shownUser(1, { cursor: {} }, false, 0), null);
    const ok = shownUser(1, { user: { name: 'Ada', avatar: '/img/ada.png' }, color: '#123456' }, false, 0)!;
    assert.deepEqual(ok, { clientId: 1, name: 'Ada', email: '', avatar: '/img/ada.png', color: '#123456', self: false });
    for (const avatar of ['javascript:alert(1)', 'data:image/svg+xml,<svg onload=alert(1)>', '//evil.test/a.png', 'vbscript:x']) {
      assert.equal(shownUser(1, { user: { name: 'M', avatar }, color: 'red' }, false, 0)!.avatar, null, avatar);
    }
    assert.equal(shownUser(1, { user: { name: 'A', avatar: 'https://cdn.example.com/a.png' }, color: 'red' }, false, 0)!.avatar, 'https://cdn.example.com/a.png');
    assert.equal(shownUser(1, { user: { name: 'x'.repeat(500) }, color: 'red' }, false, 0)!.name.length, 100, 'bounded');
  });
});
