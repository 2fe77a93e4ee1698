import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DOC_FORMAT,
  MessageType,
  MAX_TOKEN_LENGTH,
  SyncStep,
  ProtocolError,
  decodeMessage,
  encodeMessage,
  isUpdateBearing,
  errorCodeForClose,
  CloseCode,
  LIMIT_ERRORS,
  SERVER_ERRORS,
  type HelloPayload,
  type Message,
} from '../src/index.js';

const samples: Message[] = [
  { type: MessageType.Sync, step: SyncStep.Step1, stateVector: new Uint8Array([0]) },
  { type: MessageType.Sync, step: SyncStep.Step2, update: new Uint8Array([0, 0]) },
  { type: MessageType.Sync, step: SyncStep.Update, update: new Uint8Array([1, 2, 3]) },
  { type: MessageType.Awareness, update: new Uint8Array([1, 5, 1, 2, 123, 125]) },
  {
    type: MessageType.Hello,
    hello: { protocol: 1, format: 'flat-delta/1', apiKey: 'wk_x', docId: 'doc/ü', user: { name: 'Ada' }, clientId: 42, epoch: 3, token: 'a.b.c' },
  },
  {
    type: MessageType.Welcome,
    welcome: { epoch: 2, permission: 'edit', user: { name: 'Ada' }, color: '#ff0000', joinTime: 1_700_000_000_000, persistent: false },
  },
  { type: MessageType.Error, error: { code: 'rate_limited', detail: 'slow down', fatal: false } },
  { type: MessageType.Ack, count: 300 },
  { type: MessageType.SeedRequest, epoch: 7 },
  { type: MessageType.Seed, epoch: 7, update: new Uint8Array([9, 9]) },
  { type: MessageType.Ping },
  { type: MessageType.Pong },
  { type: MessageType.Token, token: 'eyJhbGciOiJIUzI1NiJ9.e30.sig' },
];

test('every message type round-trips through encode/decode', () => {
  for (const message of samples) {
    assert.deepEqual(decodeMessage(encodeMessage(message)), message, `type ${message.type}`);
  }
});

test('malformed frames throw ProtocolError', () => {
  const bad: Array<[string, Uint8Array]> = [
    ['empty', new Uint8Array([])],
    ['unknown type', new Uint8Array([99])],
    ['truncated sync', new Uint8Array([0, 1, 5, 1])],
    ['unknown sync step', new Uint8Array([0, 7, 0])],
    ['trailing bytes', new Uint8Array([...encodeMessage({ type: MessageType.Ping }), 0])],
    ['hello not JSON', new Uint8Array([2, 3, 0x61, 0x62, 0x63])],
    ['empty token', new Uint8Array([10, 0])],
    ['token over the length limit', encodeMessage({ type: MessageType.Token, token: 'x'.repeat(MAX_TOKEN_LENGTH + 1) })],
  ];
  for (const [name, frame] of bad) assert.throws(() => decodeMessage(frame), ProtocolError, name);
});

test('hello fields are checked by shape', () => {
  const enc = (obj: unknown) => {
    const json = new TextEncoder().encode(JSON.stringify(obj));
    return new Uint8Array([2, json.length, ...json]);
  };
  assert.throws(() => decodeMessage(enc({ protocol: 1, apiKey: 5, docId: 'd', user: {}, clientId: 1 })), /apiKey/);
  assert.throws(() => decodeMessage(enc({ protocol: 1, apiKey: 'k', docId: 'd', user: 'x', clientId: 1 })), /user/);
  assert.throws(() => decodeMessage(enc({ protocol: 1, apiKey: 'k', docId: 'd', user: {}, clientId: -1 })), /clientId/);
});

test('[P2d] Hello.format: a string of at most 64 characters; a Hello without one still decodes, for the server to refuse', () => {
  // encodeMessage writes whatever it is given, so it can also build the frames of other clients.
  const enc = (obj: object) => encodeMessage({ type: MessageType.Hello, hello: obj as HelloPayload });
  const base = { protocol: 1, apiKey: 'k', docId: 'd', user: {}, clientId: 1 };
  const old = decodeMessage(enc(base));
  assert.ok(old.type === MessageType.Hello && !('format' in old.hello), 'no format key appears');
  assert.throws(() => decodeMessage(enc({ ...base, format: 7 })), /format/);
  assert.throws(() => decodeMessage(enc({ ...base, format: 'f'.repeat(65) })), /format/);
  const named = decodeMessage(enc({ ...base, format: DOC_FORMAT }));
  assert.ok(named.type === MessageType.Hello && named.hello.format === DOC_FORMAT);
});

test('__proto__ in JSON payloads does not reach any prototype', () => {
  const text = '{"protocol":1,"apiKey":"k","docId":"d","clientId":1,"user":{"name":"x","__proto__":{"polluted":true}},"__proto__":{"polluted":true}}';
  const json = new TextEncoder().encode(text);
  const frame = new Uint8Array([2, json.length & 0x7f | 0x80, json.length >> 7, ...json]);
  const message = decodeMessage(frame);
  assert.equal(message.type, MessageType.Hello);
  assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  if (message.type === MessageType.Hello) assert.equal(Object.getPrototypeOf(message.hello.user), Object.prototype);
});

test('update-bearing messages are step2, update and seed only', () => {
  const bearing = samples.filter(isUpdateBearing).map((m) => m.type === MessageType.Sync ? `sync${m.step}` : m.type);
  assert.deepEqual(bearing, [`sync${SyncStep.Step2}`, `sync${SyncStep.Update}`, MessageType.Seed]);
});

test('close codes map back to error codes', () => {
  for (const [code, { close }] of Object.entries(SERVER_ERRORS)) {
    if (close === CloseCode.Unauthorized) continue; // 4401 also stands for validation errors, checked below
    assert.equal(errorCodeForClose(close), code, `close ${close}`);
  }
  assert.equal(errorCodeForClose(CloseCode.Unauthorized), 'validation_error');
  assert.equal(errorCodeForClose(CloseCode.HelloTimeout), 'connection_lost', 'a late Hello is retried, not fatal');
  assert.equal(errorCodeForClose(CloseCode.TooManyConnections), 'rate_limited', 'too many connections from one address: back off');
  for (const { code, close } of Object.values(LIMIT_ERRORS)) {
    // A late Hello (4408) is the one limit a client retries as a connection problem (above).
    if (close !== null && close !== CloseCode.HelloTimeout) assert.equal(errorCodeForClose(close), code, `limit close ${close}`);
  }
  assert.equal(errorCodeForClose(1000), undefined);
  assert.equal(errorCodeForClose(CloseCode.ServiceRestart), undefined);
});
