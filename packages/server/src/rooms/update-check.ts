/**
 * Checks a client's Yjs update against a room's document **before** it is applied (RELIABILITY.md S9). Yjs applies
 * what it can and parks the rest as "pending" structs and deletes; a hostile or broken client could thereby get part
 * of an update stored and relayed. So the update is decoded first (Yjs' own decoder, which throws on truncated input)
 * and every reference is checked to be known, either in the document or earlier in the update itself. Anything that
 * would not integrate cleanly is refused as a whole, and so is anything that would integrate but break the document
 * later (RELIABILITY.md D7): bytes after the update's end, JSON-like values or shared types nested past the limits
 * of depth-check.ts.
 *
 * Work is bounded by the update's size (≤ the frame limit) plus `maxStructs`, which caps the integration cost of one
 * message so that the event loop stays responsive (≤ 50 ms per message on this class of machine).
 */
import * as Y from 'yjs';
import { decodeWholeUpdate, type WholeUpdate } from 'wave-protocol';
import { AnchorCheck } from './anchor-check.js';
import { CycleError, DEFAULT_DEPTH_LIMITS, TypeLevels, jsonValuesOf, valueDepth } from './depth-check.js';
import { docClock } from './doc-clock.js';
import type { DepthLimits } from './depth-check.js';

export interface UpdateFacts {
  /** True when applying it would change the document (new structs, or deletes of live content). */
  changes: boolean;
  structs: number;
}

export class UpdateRejected extends Error {
  override readonly name: string = 'UpdateRejected';
  /** True when the bytes are not a Yjs update at all (else: a well-formed update that does not integrate). */
  constructor(
    message: string,
    readonly malformed = false,
  ) {
    super(message);
  }
}

/**
 * A well-formed update over the struct limit: too large an edit, not a broken one (`document_too_large` for the
 * client, whose edit would be refused at every retry).
 */
export class UpdateOverLimit extends UpdateRejected {
  override readonly name = 'UpdateOverLimit';
}

type DecodedStruct = Y.Item | Y.GC | Y.Skip;

/**
 * Throws `UpdateRejected` for an update that does not decode, has bytes after its end, contains `Skip` gaps,
 * names a client in two sections, references unknown items or a later clock of the item's own client, embeds
 * something other than a JSON object, starts after a gap in a client's clock, deletes ranges nobody has or empty
 * ranges, has more than `maxStructs` structs, or nests a JSON-like value or shared types deeper than `depth` allows
 * (depth-check.ts).
 */
export function checkUpdate(doc: Y.Doc, update: Uint8Array, maxStructs: number, depth: DepthLimits = DEFAULT_DEPTH_LIMITS): UpdateFacts {
  const decoded = decodeWhole(update);
  const { structs, ds } = decoded;
  if (structs.length > maxStructs) throw new UpdateOverLimit(`the update has ${structs.length} structs (limit ${maxStructs})`);
  /**
   * Per client this update extends: the clock reached by the document plus the update's structs. Every other
   * client's reach is the document's own (`docClock`), read when needed: the check costs what the update holds, not
   * one entry per client the document ever had.
   */
  const grown = new Map<number, number>();
  const reachOf = (client: number): number => grown.get(client) ?? docClock(doc, client);
  let changes = false;
  const known = (id: Y.ID | null): boolean => id === null || id.clock < reachOf(id.client);
  // Structs come grouped by client in clock order (the v1 encoding). An Item may reference structs of another
  // client that come later in the update (Yjs sorts them out); check references after every clock range is known.
  /** The client of the run of structs being read, where its run ends, and the clients whose run has ended. */
  let runClient: number | undefined;
  let runEnd = 0;
  const ranClients = new Set<number>();
  for (const s of structs) {
    if (s instanceof Y.Skip) throw new UpdateRejected('update contains a gap (Skip struct)');
    const { client, clock } = s.id;
    // Yjs writes each client's structs as one section, clock after clock, and its reader keeps only the last
    // section of a client it meets twice (yjs `readClientsStructRefs`), while the decoder here lists them all: the
    // check would count structs that are never applied.
    if (client !== runClient) {
      if (ranClients.has(client)) throw new UpdateRejected(`update has client ${client} in two sections`, true);
      if (runClient !== undefined) ranClients.add(runClient);
      runClient = client;
    } else if (clock !== runEnd) {
      throw new UpdateRejected(`update has client ${client} in two sections`, true);
    }
    runEnd = clock + s.length;
    const have = reachOf(client);
    if (clock > have) throw new UpdateRejected(`update starts client ${client} at clock ${clock}, after a gap (the document has ${have})`);
    if (!Number.isSafeInteger(clock + s.length) || s.length < 1) throw new UpdateRejected('struct length out of range');
    const end = clock + s.length;
    if (end > have) {
      grown.set(client, end);
      changes = true;
    }
  }
  /**
   * One client's structs of this update, in clock order. Grouped at the first lookup, which only items naming a
   * parent or holding a shared type need: a typed character never pays for it.
   */
  let byClient: Map<number, DecodedStruct[]> | undefined;
  const structsOf = (client: number): DecodedStruct[] => {
    if (byClient === undefined) {
      byClient = new Map();
      for (const s of structs) {
        const list = byClient.get(s.id.client);
        if (list) list.push(s);
        else byClient.set(s.id.client, [s]);
      }
    }
    return byClient.get(client) ?? [];
  };
  // Before the anchors: a hostile tree is refused at the cost of one pass.
  checkDepth(doc, structs, structsOf, depth);
  const anchors = new AnchorCheck(doc);
  for (const s of structs) {
    if (!(s instanceof Y.Item)) continue;
    if (!known(s.origin) || !known(s.rightOrigin)) throw new UpdateRejected('update references an item nobody has (origin)');
    if (namesOwnFuture(s)) throw new UpdateRejected(`update has an item that names a later clock of its own client (${s.id.client}) as a neighbour or parent`);
    if (s.content instanceof Y.ContentEmbed && !isPlainObject(s.content.embed)) throw new UpdateRejected('update has an embed that is not a JSON object', true);
    checkAnchors(anchors, s, docClock(doc, s.id.client));
    const parent = s.parent as unknown;
    if (parent instanceof Y.ID) {
      if (!known(parent)) throw new UpdateRejected('update references an item nobody has (parent)');
      // Yjs reads `parentItem.content.type`: a parent that is not a shared type would break integration midway.
      if (!isTypeParent(doc, structsOf, parent)) throw new UpdateRejected('update has an item whose parent is not a shared type');
    } else if (parent === null && s.origin === null && s.rightOrigin === null) {
      throw new UpdateRejected('update has an item without parent or neighbours');
    } else if (parent !== null && typeof parent !== 'string') {
      throw new UpdateRejected('update has an item with a malformed parent');
    }
  }
  for (const [client, ranges] of ds.clients) {
    const limit = reachOf(client);
    for (const { clock, len } of ranges) {
      // No Yjs encoder writes an empty range, and Yjs cannot apply one: inside a live item it splits the item and
      // emits nothing (the room would take the counted change for a broken document); at or past the document's
      // clock it parks it as pending and throws encoding it (yjs `readAndApplyDeleteSet`, `writeDsLen`).
      if (len < 1) throw new UpdateRejected(`update has an empty delete range of client ${client}`, true);
      if (!Number.isSafeInteger(clock + len) || clock + len > limit) {
        throw new UpdateRejected(`update deletes client ${client} clocks up to ${clock + len}, which nobody has (${limit})`);
      }
      if (!changes && deletesLiveContent(doc, client, clock, len)) changes = true;
    }
  }
  return { changes, structs: structs.length };
}

/**
 * `decodeWholeUpdate` (wave-protocol), its errors as `UpdateRejected` (malformed). Bytes after the update's end are
 * refused too: Yjs ignores them, and a room relays a message's update as it was sent, so they would reach every peer
 * unchecked.
 */
export function decodeWhole(update: Uint8Array): WholeUpdate {
  try {
    return decodeWholeUpdate(update);
  } catch (error) {
    throw new UpdateRejected((error as Error).message, true);
  }
}

/** Refuses JSON-like values and shared types nested deeper than `limits` (depth-check.ts). */
function checkDepth(doc: Y.Doc, structs: DecodedStruct[], structsOf: (client: number) => DecodedStruct[], limits: DepthLimits): void {
  /** Made for the first shared type of the update (most updates carry none). */
  let levels: TypeLevels | undefined;
  for (const s of structs) {
    if (!(s instanceof Y.Item)) continue;
    for (const value of jsonValuesOf(s.content)) {
      if (valueDepth(value, limits.maxValueDepth) > limits.maxValueDepth) {
        throw new UpdateRejected(`update has a value nested deeper than ${limits.maxValueDepth} levels`, true);
      }
    }
    if (!(s.content instanceof Y.ContentType)) continue;
    levels ??= new TypeLevels(doc, (id) => findStruct(structsOf(id.client), id.clock));
    let level: number;
    try {
      level = levels.level(s);
    } catch (error) {
      if (error instanceof CycleError) throw new UpdateRejected(error.message);
      throw error;
    }
    if (level + 1 > limits.maxTypeDepth) {
      throw new UpdateRejected(`update nests shared types (elements) deeper than ${limits.maxTypeDepth} levels`, true);
    }
  }
}

/**
 * An embed's value is a JSON object (`{ image: … }`, `{ break: true }`): what `Y.Text#insertEmbed` is given by every
 * editor binding. A crafted update can hold any JSON value instead, and `Y.Text#toDelta` hands it on as the op's
 * `insert`: `null` breaks every reader that looks into an embed, and a string reads as text of its length while it
 * counts 1 in the `Y.Text`, so every later index on that line would be off.
 */
function isPlainObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * True when `item`'s origin, rightOrigin or parent is a clock of its own client at or after the item's own: its
 * creator cannot have seen it. Yjs integrates a client's structs in clock order and looks up references to the same
 * client without checking that they are there (yjs `Item.getMissing`), so it throws midway through such an update.
 */
function namesOwnFuture(item: Y.Item): boolean {
  const { client, clock } = item.id;
  const parent = item.parent as unknown;
  const future = (id: Y.ID | null): boolean => id !== null && id.client === client && id.clock >= clock;
  return future(item.origin) || future(item.rightOrigin) || (parent instanceof Y.ID && future(parent));
}

/** Refuses an item (or its part the document lacks) whose anchors name no place its creator saw (anchor-check.ts). */
function checkAnchors(anchors: AnchorCheck, item: Y.Item, docReach: number): void {
  const { client, clock } = item.id;
  if (clock + item.length <= docReach) return; // the document has it: Yjs skips it
  const part =
    clock >= docReach
      ? item
      : { id: Y.createID(client, docReach), origin: Y.createID(client, docReach - 1), rightOrigin: item.rightOrigin, parent: item.parent, parentSub: item.parentSub };
  const verdict = anchors.check(part);
  if (!verdict.ok) throw new UpdateRejected(verdict.reason);
}

/** The struct holding `id` is a shared type (or garbage-collected, which Yjs handles), in the doc or the update. */
function isTypeParent(doc: Y.Doc, structsOf: (client: number) => DecodedStruct[], id: Y.ID): boolean {
  const own = doc.store.clients.get(id.client) as Array<Y.Item | Y.GC> | undefined;
  const last = own?.[own.length - 1];
  let struct: Y.Item | Y.GC | Y.Skip | undefined;
  if (own && last && id.clock < last.id.clock + last.length) struct = own[Y.findIndexSS(own, id.clock)];
  else struct = findStruct(structsOf(id.client), id.clock);
  if (struct === undefined) return false;
  return struct instanceof Y.GC || (struct instanceof Y.Item && struct.content instanceof Y.ContentType);
}

/** True when some struct of `client` in [clock, clock+len) is in the document and not deleted yet. */
function deletesLiveContent(doc: Y.Doc, client: number, clock: number, len: number): boolean {
  const list = doc.store.clients.get(client) as Array<Y.Item | Y.GC> | undefined;
  if (!list || list.length === 0) return false;
  const last = list[list.length - 1]!;
  if (clock >= last.id.clock + last.length) return false;
  let i = Y.findIndexSS(list, Math.min(clock, last.id.clock + last.length - 1));
  for (; i < list.length; i++) {
    const s = list[i]!;
    if (s.id.clock >= clock + len) break;
    if (!s.deleted) return true;
  }
  return false;
}

/** Binary search in one client's structs of an update (clock order). */
function findStruct(list: DecodedStruct[], clock: number): DecodedStruct | undefined {
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = list[mid]!;
    if (clock < s.id.clock) hi = mid - 1;
    else if (clock >= s.id.clock + s.length) lo = mid + 1;
    else return s;
  }
  return undefined;
}
