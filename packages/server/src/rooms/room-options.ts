/**
 * What a room is configured with (`RoomSettings`, completed by `RoomOptions` in room.ts) and the default limits of
 * the updates it takes.
 */
import type { DocKey } from '../store/types.js';
import type { Fanout } from '../fanout/types.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { RoomPeer } from './peer.js';

/** A room's limits, timings and services: everything `Room` takes but its idle callback (`RoomOptions`). */
export interface RoomSettings {
  /** Session grace period (`--session-grace`), milliseconds. */
  graceMs: number;
  /** From the key that loaded the room: sessions never end, content is never re-seeded. */
  persistent: boolean;
  /** Identifies this process in seed-lease holders, so that several servers can share a store. */
  serverId: string;
  /**
   * Seed lease lifetime. Renewed every third of it while the holder's socket is open, so it only runs out when
   * the holder's server died; 10 s bounds how long waiting clients stay blocked by a dead seeder.
   */
  leaseTtlMs: number;
  /** How often peers waiting for a seeder elsewhere (another server, or a dead one) re-check the store. */
  leasePollMs: number;
  /**
   * Stored updates after which the document is compacted into one. Loading cost grows with the update count;
   * 500 keeps a cold load to milliseconds while compaction (one `encodeStateAsUpdate`) stays rare.
   */
  compactAfterUpdates: number;
  /**
   * A loaded document without a transaction for this long is held in compact form until its next use
   * (doc-holder.ts); `DEFAULT_COMPACT_IDLE_AFTER_MS` when absent.
   */
  compactIdleAfterMs?: number;
  /**
   * Largest document, as the size of its encoded state, an update may grow it to (`document_too_large`, 4413).
   * Checked before the update is applied.
   */
  maxDocumentBytes?: number;
  /** Structs one update may carry: bounds the integration work of one message (S9, ≤ 50 ms). */
  maxStructsPerUpdate?: number;
  /** Deepest JSON-like value an update may carry (rooms/depth-check.ts, `DEFAULT_MAX_VALUE_DEPTH`). */
  maxValueDepth?: number;
  /** Deepest nesting of shared types (elements) an update may create (`DEFAULT_MAX_TYPE_DEPTH`). */
  maxTypeDepth?: number;
  /** Other servers serving the same documents (a no-op `LocalFanout` when this server is alone). */
  fanout: Fanout;
  metrics: Metrics;
  log: Logger;
  /** Called when a peer left (webhooks: user.left). */
  onLeft?: (peer: RoomPeer) => void;
  /** `ServerOptions.onAckSent`: called right after an `Ack` frame was handed to a peer's socket. */
  onAckSent?: (doc: DocKey, count: number) => void;
}


/**
 * Default document limit: 16 MiB of encoded state is ~8–16 M characters of text, well above the ~1 M-character
 * documents Wave is built for (R8), and small enough that loading, compacting and syncing one stays sub-second.
 */
export const DEFAULT_MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;
/**
 * Default structs per update. Plain text is one struct however long; a formatted line (a list item, a heading, a
 * table cell) is about four (its text, its `"\n"` and the format around it), so a 1 MB paste of a list of 100-character
 * items is 40,000 structs in a 1.6 MB update, and one of 16-character items 250,000 structs in 4.9 MB, past the
 * frame limit. The cap bounds the cost of denser, hand-made updates: checking and integrating 250,000 structs takes
 * ~0.5 s here (RELIABILITY.md R9: any 1 MB paste reaches the peer).
 */
export const DEFAULT_MAX_STRUCTS_PER_UPDATE = 250_000;
/**
 * Default idle time after which a loaded document is held in compact form (doc-holder.ts). A rebuild costs about
 * what a load from the store costs (bounded by `MAX_COMPACT_STRUCTS`), so 30 s keeps it out of a burst of edits
 * and the pauses of a conversation, while documents left open for minutes or hours give their memory back.
 */
export const DEFAULT_COMPACT_IDLE_AFTER_MS = 30_000;
