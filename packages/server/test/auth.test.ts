import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { authorizeUpgrade, docIdProblem } from '../src/auth.js';
import { isOriginAllowed, normalizeOriginSpec } from '../src/origin.js';
import type { KeyRecord } from '../src/store/types.js';

describe('origin allow-lists (P1, S11)', () => {
  it('normalises allow-list entries and rejects anything but self or scheme://host[:port]', () => {
    assert.equal(normalizeOriginSpec('self'), 'self');
    assert.equal(normalizeOriginSpec('https://App.Example.com'), 'https://app.example.com');
    assert.equal(normalizeOriginSpec('http://localhost:80'), 'http://localhost', 'default port dropped');
    assert.equal(normalizeOriginSpec('http://localhost:3000'), 'http://localhost:3000');
    assert.equal(normalizeOriginSpec('capacitor://localhost'), 'capacitor://localhost');
    for (const bad of ['', 'SELF', 'example.com', 'https://a.example/', 'https://a.example/path', 'https://a.example?x', 'https://user@a.example', 'https://', 'javascript:alert(1)', 'http://a b']) {
      assert.throws(() => normalizeOriginSpec(bad), TypeError, JSON.stringify(bad));
    }
  });

  it('allows requests without Origin (not a browser page) and every origin for an empty list', () => {
    assert.equal(isOriginAllowed(undefined, ['https://a.example'], 'server:8080'), true);
    assert.equal(isOriginAllowed('https://evil.example', [], 'server:8080'), true);
  });

  it('matches exact origins only', () => {
    const list = ['https://a.example', 'http://localhost:3000'];
    assert.equal(isOriginAllowed('https://a.example', list, 'x'), true);
    assert.equal(isOriginAllowed('https://A.EXAMPLE:443', list, 'x'), true);
    assert.equal(isOriginAllowed('http://a.example', list, 'x'), false, 'scheme matters');
    assert.equal(isOriginAllowed('https://a.example.evil.com', list, 'x'), false);
    assert.equal(isOriginAllowed('https://sub.a.example', list, 'x'), false);
    assert.equal(isOriginAllowed('http://localhost:3001', list, 'x'), false, 'port matters');
    assert.equal(isOriginAllowed('null', list, 'x'), false, 'opaque origin');
    assert.equal(isOriginAllowed('garbage', list, 'x'), false);
  });

  it('matches self against the Host header', () => {
    assert.equal(isOriginAllowed('http://127.0.0.1:8080', ['self'], '127.0.0.1:8080'), true);
    assert.equal(isOriginAllowed('http://LOCALHOST:8080', ['self'], 'localhost:8080'), true);
    assert.equal(isOriginAllowed('http://localhost', ['self'], 'localhost:80'), true, 'default port');
    assert.equal(isOriginAllowed('http://127.0.0.1:8081', ['self'], '127.0.0.1:8080'), false);
    assert.equal(isOriginAllowed('http://evil.example', ['self'], '127.0.0.1:8080'), false);
    assert.equal(isOriginAllowed('http://evil.example', ['self'], undefined), false);
    assert.equal(isOriginAllowed('http://evil.example', ['self'], 'evil.example/x'), false, 'malformed Host');
  });
});

describe('docId rule', () => {
  it('accepts 1–256 characters without control characters', () => {
    assert.equal(docIdProblem('a'), undefined);
    assert.equal(docIdProblem('x'.repeat(256)), undefined);
    assert.equal(docIdProblem('../X'), undefined, 'just a name: documents are looked up by value, never as paths');
    assert.equal(docIdProblem('__proto__'), undefined, 'stored in Maps and SQL, never as object keys');
    assert.equal(docIdProblem('héllo wörld / 文档'), undefined);
  });

  it('rejects empty, too long and control characters', () => {
    assert.match(docIdProblem('') ?? '', /missing/);
    assert.match(docIdProblem(null) ?? '', /missing/);
    assert.match(docIdProblem('x'.repeat(257)) ?? '', /longer than 256/);
    assert.match(docIdProblem('a\u0000b') ?? '', /control/);
    assert.match(docIdProblem('a\nb') ?? '', /control/);
    assert.match(docIdProblem('a\u007fb') ?? '', /control/);
    assert.match(docIdProblem('a\u0085b') ?? '', /control/);
  });
});

describe('authorizeUpgrade', () => {
  const key = (over: Partial<KeyRecord> = {}): KeyRecord => ({
    apiKey: 'wk_good',
    name: 'n',
    account: 'acct',
    origins: ['https://app.example'],
    requireToken: false,
    persistent: false,
    maxUsers: null,
    createdAt: 1,
    revokedAt: null,
    ...over,
  });
  const store = (record: KeyRecord | undefined) => ({ findKey: async (k: string) => (record?.apiKey === k ? record : undefined) });
  const req = (url: string, headers: Record<string, string> = {}) =>
    ({ url, headers: { host: 'wave.local:8080', ...headers } }) as unknown as IncomingMessage;

  it('accepts a known key from an allowed origin and namespaces the document by account', async () => {
    const decision = await authorizeUpgrade(req('/v2/ws?apiKey=wk_good&docId=x', { origin: 'https://app.example' }), store(key()));
    assert.equal(decision.kind, 'accept');
    assert.deepEqual(decision.kind === 'accept' && decision.doc, { account: 'acct', docId: 'x' });
  });

  it('refuses a foreign origin over the socket with 4401, naming the origin and the fix (S11)', async () => {
    const decision = await authorizeUpgrade(req('/v2/ws?apiKey=wk_good&docId=x', { origin: 'https://evil.example' }), store(key()));
    assert.equal(decision.kind, 'refuse');
    assert.equal(decision.kind === 'refuse' && decision.code, 'validation_error');
    assert.equal(decision.kind === 'refuse' && decision.close, 4401);
    const detail = decision.kind === 'refuse' ? decision.detail : '';
    assert.match(detail, /"https:\/\/evil\.example" is not allowed/);
    assert.match(detail, /wave-server keys create --name NAME --origin "https:\/\/evil\.example"/);
  });

  it('refuses missing, unknown and revoked keys over the socket with 4401', async () => {
    for (const [url, record] of [
      ['/v2/ws?docId=x', key()],
      ['/v2/ws?apiKey=&docId=x', key()],
      ['/v2/ws?apiKey=wk_other&docId=x', key()],
      ['/v2/ws?apiKey=wk_good&docId=x', key({ revokedAt: 5 })],
    ] as const) {
      const decision = await authorizeUpgrade(req(url, { origin: 'https://app.example' }), store(record));
      assert.equal(decision.kind, 'refuse', url);
      assert.equal(decision.kind === 'refuse' && decision.code, 'validation_error');
      assert.equal(decision.kind === 'refuse' && decision.close, 4401);
    }
  });

  it('refuses a bad docId with 4400 and other paths with 404', async () => {
    const bad = await authorizeUpgrade(req('/v2/ws?apiKey=wk_good&docId=a%00b'), store(key()));
    assert.equal(bad.kind === 'refuse' && bad.close, 4400);
    const twice = await authorizeUpgrade(req('/v2/ws?apiKey=wk_good&docId=a&docId=b'), store(key()));
    assert.equal(twice.kind, 'refuse');
    assert.deepEqual(await authorizeUpgrade(req('/ws?apiKey=wk_good&docId=x'), store(key())), { kind: 'http', status: 404, reason: 'Not Found' });
  });
});
