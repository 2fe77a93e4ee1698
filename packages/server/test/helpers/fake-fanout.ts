/**
 * A `Fanout` the test drives by hand: it records what rooms publish and lets the test deliver events as if
 * another server had published them. Shared (`shared = true`), so rooms behave as in a multi-server set-up.
 */
import type { DocFeed, Fanout, FanoutEvent } from '../../src/fanout/types.js';
import type { DocKey } from '../../src/store/types.js';

export type Published =
  | { kind: 'update'; epoch: number; update: Uint8Array }
  | { kind: 'seeded' | 'session'; epoch: number }
  | { kind: 'awareness'; update: Uint8Array }
  | { kind: 'compacted' };

export class FakeFeed implements DocFeed {
  readonly published: Published[] = [];
  listener: ((event: FanoutEvent) => void) | undefined;
  closed = false;
  /** Called on each publish (tests check what the store holds at that moment). */
  onPublish: ((p: Published) => void) | undefined;
  /**
   * While true, publishes are recorded but not accepted (a fan-out that lost Redis): their promises stay pending
   * until `accept()`.
   */
  holding = false;
  private held: Array<() => void> = [];

  constructor(readonly doc: DocKey) {}

  start(listener: (event: FanoutEvent) => void): void {
    this.listener = listener;
  }
  publishUpdates(epoch: number, updates: readonly Uint8Array[]): Promise<void> {
    for (const update of updates) this.push({ kind: 'update', epoch, update });
    return this.accepted();
  }
  publishSeeded(epoch: number): Promise<void> {
    this.push({ kind: 'seeded', epoch });
    return this.accepted();
  }
  publishSession(epoch: number): Promise<void> {
    this.push({ kind: 'session', epoch });
    return this.accepted();
  }
  /** Accepts every held publish, in order, and stops holding. */
  accept(): void {
    this.holding = false;
    const held = this.held;
    this.held = [];
    for (const resolve of held) resolve();
  }
  publishAwareness(update: Uint8Array): void {
    this.push({ kind: 'awareness', update });
  }
  compacted(): void {
    this.push({ kind: 'compacted' });
  }
  close(): void {
    this.closed = true;
  }

  /** Delivers an event as if another server published it. */
  deliver(event: FanoutEvent): void {
    if (!this.listener) throw new Error(`feed of ${this.doc.docId} not started`);
    if (!this.closed) this.listener(event);
  }

  private accepted(): Promise<void> {
    if (!this.holding) return Promise.resolve();
    return new Promise((resolve) => this.held.push(resolve));
  }

  private push(p: Published): void {
    this.published.push(p);
    this.onPublish?.(p);
  }
}

export class FakeFanout implements Fanout {
  readonly shared = true;
  readonly pending = 0;
  readonly feeds: FakeFeed[] = [];

  async join(doc: DocKey): Promise<DocFeed> {
    const feed = new FakeFeed(doc);
    this.feeds.push(feed);
    return feed;
  }

  /** The open feed of a document (the newest one). */
  feed(docId: string): FakeFeed {
    const feed = this.feeds.filter((f) => f.doc.docId === docId && !f.closed).at(-1);
    if (!feed) throw new Error(`no open feed for ${docId}`);
    return feed;
  }

  async ping(): Promise<void> {}
  async flush(): Promise<void> {}
  async close(): Promise<void> {}
}
