/**
 * Names and encodings of what Wave puts in Redis. One stream and one presence channel per document:
 *   stream  `wave:stream:<len(account)>:<account>:<docId>`  entries { o: origin server, k: kind, e: epoch, d: update }
 *           kinds: u update, s seeded, e session (epoch) opened, g gap (the publisher dropped entries)
 *   channel `wave:presence:<same suffix>`                   message <origin length byte><origin><awareness update>
 * The length prefix keeps (account "a:b", doc "c") apart from (account "a", doc "b:c").
 */
import type { DocKey } from '../store/types.js';
import type { FanoutEvent } from './types.js';

function suffix(doc: DocKey): string {
  return `${doc.account.length}:${doc.account}:${doc.docId}`;
}

export function streamKey(doc: DocKey): string {
  return `wave:stream:${suffix(doc)}`;
}

export function presenceChannel(doc: DocKey): string {
  return `wave:presence:${suffix(doc)}`;
}

/** Kinds of stream entries (`k`). Presence is not in the stream. */
const KINDS = { update: 'u', seeded: 's', session: 'e', gap: 'g' } as const;
export type StreamEventKind = keyof typeof KINDS;

/** Field/value list for XADD. */
export function streamFields(origin: string, kind: StreamEventKind, epoch: number, update?: Uint8Array): Array<string | Buffer> {
  const fields: Array<string | Buffer> = ['o', origin, 'k', KINDS[kind], 'e', String(epoch)];
  if (update) fields.push('d', Buffer.from(update.buffer, update.byteOffset, update.byteLength));
  return fields;
}

/** A stream entry as XREAD returns it (Buffers), or undefined for entries this server wrote or cannot read. */
export function decodeStreamEntry(fields: Buffer[], self: string): FanoutEvent | undefined {
  const map = new Map<string, Buffer>();
  for (let i = 0; i + 1 < fields.length; i += 2) map.set(fields[i]!.toString(), fields[i + 1]!);
  if (map.get('o')?.toString() === self) return undefined;
  const epoch = Number(map.get('e')?.toString());
  if (!Number.isSafeInteger(epoch)) return undefined;
  switch (map.get('k')?.toString()) {
    case KINDS.update: {
      const data = map.get('d');
      return data ? { kind: 'update', epoch, update: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) } : undefined;
    }
    case KINDS.seeded:
      return { kind: 'seeded', epoch };
    case KINDS.session:
      return { kind: 'session', epoch };
    case KINDS.gap:
      return { kind: 'gap' };
    default:
      return undefined; // written by a newer server: skipped rather than misread
  }
}

export function encodePresence(origin: string, update: Uint8Array): Buffer {
  const id = Buffer.from(origin, 'utf8');
  if (id.length > 255) throw new RangeError('server id longer than 255 bytes');
  return Buffer.concat([Buffer.from([id.length]), id, update]);
}

/** The awareness update of a presence message, or undefined for this server's own messages. */
export function decodePresence(message: Buffer, self: string): Uint8Array | undefined {
  const length = message[0];
  if (length === undefined || message.length < 1 + length) return undefined;
  if (message.toString('utf8', 1, 1 + length) === self) return undefined;
  return new Uint8Array(message.buffer, message.byteOffset + 1 + length, message.length - 1 - length);
}

/** Stream ids are `<ms>-<seq>`; compared numerically, part by part. */
export function compareIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am !== bm ? am - bm : as - bs;
}

export function idMillis(id: string): number {
  return Number(id.split('-')[0]);
}
