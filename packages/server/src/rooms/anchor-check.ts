/**
 * Checks that a new item's anchors (its `origin`, the character it was typed after, and its `rightOrigin`, the one it
 * was typed before) describe a place that existed in its creator's document (RELIABILITY.md S9).
 *
 * Yjs' conflict resolution (YATA) gives every replica the same order only for items whose creator saw `origin` and
 * `rightOrigin` side by side: every item a replica holds between them must be one the creator did not know yet. A
 * mutated update can break that (e.g. a `rightOrigin` to the left of its `origin`). Yjs still integrates such an
 * item, but where it lands then depends on the order in which a replica receives the updates: the server's
 * incremental document and a new client's (one state update) would hold the same characters in different orders.
 *
 * What the creator knew is bounded from below without trusting the update: all of its own earlier clocks, and every
 * clock up to `origin`, `rightOrigin` and the parent of each of their clients (a Yjs document holds a client's clocks
 * without gaps). An item between the anchors with such a clock was known to the creator: the item is refused. So is one
 * whose `rightOrigin` is not to the right of its `origin`. An honest client never fails this: at creation its anchors
 * were neighbours, and replicas keep the relative order of the items they share.
 *
 * Checked: items whose anchors are both already in the document (or the start or end of a list), before the update is
 * applied. Items anchored to other items of the same update, and map entries (`parentSub`), are not checked.
 */
import * as Y from 'yjs';

/** Items walked between anchors, summed over one update; beyond it the update is refused (see `AnchorCheck`). */
export const DEFAULT_ANCHOR_WALK_BUDGET = 100_000;

/** The parts of a decoded `Y.Item` the check reads. */
export interface AnchoredItem {
  id: Y.ID;
  origin: Y.ID | null;
  rightOrigin: Y.ID | null;
  /** A root type's name, a parent item's ID, or (integrated) the type itself. */
  parent: unknown;
  parentSub: string | null;
}

export type AnchorVerdict = { ok: true } | { ok: false; reason: string };

/**
 * One update's anchor checks, sharing a walk budget: an honest item's walk crosses only the items concurrent to it
 * (typically none), so the budget bounds what a crafted update can cost without refusing real edits.
 */
export class AnchorCheck {
  private walked = 0;

  constructor(
    private readonly doc: Y.Doc,
    private readonly budget = DEFAULT_ANCHOR_WALK_BUDGET,
  ) {}

  /**
   * Verdict for `item` (decoded, not integrated; for an item the document already holds in part, pass its new part:
   * `id` at the first new clock, `origin` the clock before it, as Yjs integrates it). Items it does not check get
   * `{ ok: true }`.
   */
  check(item: AnchoredItem): AnchorVerdict {
    if (item.parentSub !== null) return { ok: true };
    const left = item.origin === null ? null : this.stored(item.origin);
    const right = item.rightOrigin === null ? null : this.stored(item.rightOrigin);
    if (left === undefined || right === undefined) return { ok: true }; // anchored inside this update
    if (left instanceof Y.GC || right instanceof Y.GC) return { ok: true }; // Yjs turns such an item into a GC
    if ((left && left.parentSub !== null) || (right && right.parentSub !== null)) return { ok: true };

    const known = knowledgeOf(item);
    const knew = (id: Y.ID, length: number): boolean => id.clock <= (known.get(id.client) ?? -1) && length > 0;
    // Characters of the origin's item after the origin are between the anchors.
    let at: Y.Item | null;
    if (left) {
      const tail = left.id.clock + left.length - (item.origin!.clock + 1);
      if (right === left) {
        if (item.rightOrigin!.clock <= item.origin!.clock) return refuse('its rightOrigin is not to the right of its origin');
        return knew(Y.createID(left.id.client, item.origin!.clock + 1), item.rightOrigin!.clock - item.origin!.clock - 1)
          ? refuse('characters its creator knew lie between its origin and rightOrigin')
          : { ok: true };
      }
      if (knew(Y.createID(left.id.client, item.origin!.clock + 1), tail)) return refuse('characters its creator knew lie between its origin and rightOrigin');
      at = left.right;
    } else if (right) {
      at = firstOf(right);
    } else {
      // Typed into a list its creator saw empty: whatever the list holds must be new to the creator.
      const parent = this.parentType(item.parent);
      if (parent === undefined) return { ok: true }; // a parent inside this update
      at = (parent?._start as Y.Item | null | undefined) ?? null;
    }
    for (; at !== null; at = at.right) {
      if (++this.walked > this.budget) return refuse(`its anchors are more than ${this.budget} items apart`);
      if (at === right) {
        const head = item.rightOrigin!.clock - right.id.clock;
        return knew(right.id, head) ? refuse('characters its creator knew lie between its origin and rightOrigin') : { ok: true };
      }
      if (knew(at.id, at.length)) {
        return refuse(right ? 'characters its creator knew lie between its origin and rightOrigin' : 'characters its creator knew lie after its origin, where it was typed at the end');
      }
    }
    return right === null ? { ok: true } : refuse('its rightOrigin is not to the right of its origin');
  }

  /** The shared type an item names as parent: null when none exists yet, undefined when it is not in the document. */
  private parentType(parent: AnchoredItem['parent']): Y.AbstractType<unknown> | null | undefined {
    if (typeof parent === 'string') return (this.doc.share.get(parent) as Y.AbstractType<unknown> | undefined) ?? null;
    if (!(parent instanceof Y.ID)) return undefined;
    const struct = this.stored(parent);
    return struct instanceof Y.Item && struct.content instanceof Y.ContentType ? (struct.content.type as Y.AbstractType<unknown>) : undefined;
  }

  private stored(id: Y.ID): Y.Item | Y.GC | undefined {
    const list = this.doc.store.clients.get(id.client) as Array<Y.Item | Y.GC> | undefined;
    const last = list?.[list.length - 1];
    if (!list || !last || id.clock >= last.id.clock + last.length) return undefined;
    return list[Y.findIndexSS(list, id.clock)];
  }
}

/** Per client, the highest clock the item's creator surely had when it created the item (-1: none known). */
function knowledgeOf(item: AnchoredItem): Map<number, number> {
  const known = new Map<number, number>();
  const see = (id: Y.ID | null, clock = id?.clock): void => {
    if (id && clock !== undefined) known.set(id.client, Math.max(known.get(id.client) ?? -1, clock));
  };
  see(item.id, item.id.clock - 1);
  see(item.origin);
  see(item.rightOrigin);
  if (item.parent instanceof Y.ID) see(item.parent);
  return known;
}

/** The first item of the list `item` is in. */
function firstOf(item: Y.Item): Y.Item | null {
  const parent = item.parent as Y.AbstractType<unknown> | null;
  return (parent?._start as Y.Item | null | undefined) ?? null;
}

function refuse(what: string): AnchorVerdict {
  return { ok: false, reason: `update has an item whose anchors name no place its creator saw (${what})` };
}
