import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { clientAddress, forwardedFor, lastXForwardedFor } from '../src/client-address.js';

function req(headers: Record<string, string>, remoteAddress = '10.0.0.5'): IncomingMessage {
  return { headers, socket: { remoteAddress } } as unknown as IncomingMessage;
}

describe('client address (S1, S19)', () => {
  it('is the socket address unless the proxy is trusted', () => {
    assert.equal(clientAddress(req({ 'x-forwarded-for': '198.51.100.1' }), false), '10.0.0.5');
    assert.equal(clientAddress(req({ 'x-forwarded-for': '198.51.100.1' }), true), '198.51.100.1');
    assert.equal(clientAddress(req({}), true), '10.0.0.5', 'no header: the socket address');
  });

  it('takes the entry the proxy appended (the last), never what the client wrote before it', () => {
    assert.equal(lastXForwardedFor('192.0.2.7, 198.51.100.1'), '198.51.100.1');
    assert.equal(lastXForwardedFor(['192.0.2.7', '198.51.100.1']), '198.51.100.1');
    assert.equal(forwardedFor('for=192.0.2.7, for=198.51.100.1;proto=https'), '198.51.100.1');
  });

  it('prefers Forwarded over X-Forwarded-For and strips quotes, brackets and ports', () => {
    assert.equal(clientAddress(req({ forwarded: 'for=198.51.100.9', 'x-forwarded-for': '198.51.100.1' }), true), '198.51.100.9');
    assert.equal(forwardedFor('for="[2001:db8::1]:4711"'), '2001:db8::1');
    assert.equal(forwardedFor('for=198.51.100.1:8080'), '198.51.100.1');
    assert.equal(lastXForwardedFor('2001:db8::2'), '2001:db8::2');
  });

  it('ignores values that are not addresses', () => {
    assert.equal(forwardedFor('for=unknown'), undefined);
    assert.equal(forwardedFor('for=_hidden'), undefined);
    assert.equal(forwardedFor('proto=https'), undefined);
    assert.equal(lastXForwardedFor('<script>'), undefined);
    assert.equal(lastXForwardedFor('1'.repeat(100)), undefined);
    assert.equal(clientAddress(req({ 'x-forwarded-for': 'not an address' }), true), '10.0.0.5');
  });
});
