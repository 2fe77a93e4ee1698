/**
 * Nesting limits of an update's content (RELIABILITY.md D7), checked before the update touches a room's document.
 * Yjs and lib0 encode JSON-like values (`JSON.stringify`, lib0 `writeAny`) and walk shared types (`toJSON`,
 * `toString`, the clients' renderers) recursively, one stack frame or more per level. A value or a tree nested a few
 * thousand deep decodes and integrates, but throws `RangeError: Maximum call stack size exceeded` when it is encoded
 * later: in the room's update event, after the document has already changed, in every join and every store write
 * after it. So the depth is bounded where the update is checked, and every walk here is iterative.
 */
import * as Y from 'yjs';
import { docClock } from './doc-clock.js';

/**
 * Deepest JSON-like value (embed, format attribute value, `ContentAny`/`ContentJSON` entry, subdocument options)
 * an update may carry, counted in arrays and objects: `{ img: { src } }` is 2. Editors write 1–3 (an image embed,
 * a link mark); 64 leaves room for any integrator's structured embed while staying ~50× below the ~3,000–10,000
 * levels at which those recursive encoders exhaust Node's default stack (and they may run on an already deep stack).
 */
export const DEFAULT_MAX_VALUE_DEPTH = 64;

/**
 * Deepest nesting of shared types (`Y.XmlElement` in `Y.XmlElement` …, a root type being level 0). A rich-text
 * document is a few levels deep (`table > tbody > tr > td > p > text` is 6; nested lists add two per level).
 * Browsers stop nesting parsed HTML at 512 levels (Chromium's and WebKit's HTML parser limit), so no editor shows a
 * deeper tree faithfully; 256 is half of that, and keeps recursive renderers (the clients', Yjs' own) shallow.
 */
export const DEFAULT_MAX_TYPE_DEPTH = 256;

export interface DepthLimits {
  maxValueDepth: number;
  maxTypeDepth: number;
}

export const DEFAULT_DEPTH_LIMITS: Readonly<DepthLimits> = {
  maxValueDepth: DEFAULT_MAX_VALUE_DEPTH,
  maxTypeDepth: DEFAULT_MAX_TYPE_DEPTH,
};

/**
 * Nesting depth of a decoded JSON-like value: 0 for a scalar (binary included), 1 for `[]` or `{}`, else 1 + its
 * deepest member. Stops at the first path deeper than `limit` and returns `limit + 1`. Iterative; visits each
 * member once, so its work is bounded by the size of the update the value was decoded from.
 */
export function valueDepth(value: unknown, limit: number): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object' || v instanceof Uint8Array) continue;
    const here = depth + 1;
    if (here > limit) return limit + 1;
    if (here > deepest) deepest = here;
    const members = Array.isArray(v) ? v : Object.values(v as Record<string, unknown>);
    for (const m of members) stack.push([m, here]);
  }
  return deepest;
}

/** What `jsonValuesOf` returns for content without JSON-like values: one array, not one per item checked. */
const NO_VALUES: readonly unknown[] = Object.freeze([]);

/** The JSON-like values an item's content carries (none for strings, binaries, types, deletions). */
export function jsonValuesOf(content: Y.Item['content']): readonly unknown[] {
  if (content instanceof Y.ContentAny || content instanceof Y.ContentJSON) return content.arr;
  if (content instanceof Y.ContentEmbed) return [content.embed];
  if (content instanceof Y.ContentFormat) return [content.value];
  if (content instanceof Y.ContentDoc) return [content.opts];
  return NO_VALUES;
}

type Struct = Y.Item | Y.GC | Y.Skip;

/**
 * Levels of shared-type nesting, for the items of one update against one document: `level(item)` is the depth of
 * the type that will contain the item (0 inside a root type). An item names its parent only when it has no
 * neighbours (Yjs' v1 encoding); otherwise it shares its left (or right) neighbour's parent. Memoised per update,
 * iterative, and every struct is visited once, so one update costs at most its struct count plus the depth of the
 * document types it touches.
 */
export class TypeLevels {
  private readonly ofItem = new Map<Struct, number>();
  private readonly ofType = new Map<Y.AbstractType<unknown>, number>();

  constructor(
    private readonly doc: Y.Doc,
    /** Finds a struct of the update by id. */
    private readonly inUpdate: (id: Y.ID) => Struct | undefined,
  ) {}

  /** Depth of the type that will contain `item` (0: a root type). Throws on a cycle of parents. */
  level(item: Y.Item): number {
    const path: Array<[Struct, number]> = [];
    const onPath = new Set<Struct>();
    let s: Struct = item;
    for (;;) {
      let known = this.ofItem.get(s);
      if (known === undefined) {
        const step = this.next(s);
        if (typeof step === 'number') {
          known = step;
          this.ofItem.set(s, known);
        } else {
          if (onPath.has(s)) throw new CycleError();
          onPath.add(s);
          path.push([s, step.inc]);
          s = step.struct;
          continue;
        }
      }
      let value = known;
      for (let i = path.length - 1; i >= 0; i--) {
        value += path[i]![1];
        this.ofItem.set(path[i]![0], value);
      }
      return value;
    }
  }

  /** `item`'s level when it is known without another struct of the update, else that struct and the step to it. */
  private next(s: Struct): number | { struct: Struct; inc: number } {
    if (!(s instanceof Y.Item)) return 0;
    const parent = s.parent as unknown;
    if (typeof parent === 'string') return 0;
    if (parent instanceof Y.ID) {
      const own = this.docStruct(parent);
      if (own) return own instanceof Y.Item && own.content instanceof Y.ContentType ? this.typeDepth(own.content.type) : 0;
      const other = this.inUpdate(parent);
      return other instanceof Y.Item && other.content instanceof Y.ContentType ? { struct: other, inc: 1 } : 0;
    }
    const neighbour = s.origin ?? s.rightOrigin;
    if (neighbour === null) return 0;
    const own = this.docStruct(neighbour);
    if (own) return own instanceof Y.Item && own.parent instanceof Y.AbstractType ? this.typeDepth(own.parent) : 0;
    const other = this.inUpdate(neighbour);
    return other ? { struct: other, inc: 0 } : 0;
  }

  /** The document's struct holding `id`, if the document has that clock. */
  private docStruct(id: Y.ID): Y.Item | Y.GC | undefined {
    if (id.clock >= docClock(this.doc, id.client)) return undefined;
    const list = this.doc.store.clients.get(id.client) as Array<Y.Item | Y.GC>;
    return list[Y.findIndexSS(list, id.clock)];
  }

  /** Depth of a type of the document (a root type is 0), walking up its parents. */
  private typeDepth(type: Y.AbstractType<unknown>): number {
    const chain: Array<Y.AbstractType<unknown>> = [];
    let t = type;
    /** Depth of the type above the last one in `chain` (-1 above a root type). */
    let depth: number;
    for (;;) {
      const known = this.ofType.get(t);
      if (known !== undefined) {
        depth = known;
        break;
      }
      chain.push(t);
      const holder: Y.Item | null = t._item;
      if (holder === null || !(holder.parent instanceof Y.AbstractType)) {
        depth = -1;
        break;
      }
      t = holder.parent;
    }
    for (let i = chain.length - 1; i >= 0; i--) this.ofType.set(chain[i]!, ++depth);
    return depth;
  }
}

/** The parents of an update's items form a cycle: such an update never integrates. */
export class CycleError extends Error {
  override readonly name = 'CycleError';
  constructor() {
    super('update has a cycle of parents');
  }
}
