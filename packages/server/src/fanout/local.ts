/** The fan-out of a server that runs alone: no other server to tell, nothing to receive. */
import type { DocFeed, Fanout } from './types.js';

/** Nobody else to tell: a publish is accepted at once. */
const ACCEPTED = Promise.resolve();

const NOOP_FEED: DocFeed = {
  start() {},
  publishUpdates: () => ACCEPTED,
  publishSeeded: () => ACCEPTED,
  publishSession: () => ACCEPTED,
  publishAwareness() {},
  compacted() {},
  close() {},
};

export class LocalFanout implements Fanout {
  readonly shared = false;
  readonly pending = 0;

  async join(): Promise<DocFeed> {
    return NOOP_FEED;
  }

  async ping(): Promise<void> {}

  async flush(): Promise<void> {}

  async close(): Promise<void> {}
}
