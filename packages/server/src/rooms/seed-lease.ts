/**
 * The seed lease of a room's unseeded epoch, as seen from this server (PROTOCOL.md P4–P6). The lease itself is a
 * row in the store, so several servers agree on one holder; this class decides which local peer asks for it, keeps
 * it renewed while that peer is connected, and polls the store while the lease is held elsewhere (a peer on
 * another server, or on one that died: its lease expires and a local peer takes over).
 */
import type { Logger } from '../log.js';
import type { DocKey, Store } from '../store/types.js';
import type { RoomPeer } from './peer.js';

/** What the lease needs from its room. */
export interface SeedLeaseHost {
  readonly key: DocKey;
  readonly epoch: number;
  /** True once the epoch is seeded (here or elsewhere): the lease is no longer needed. */
  readonly seeded: boolean;
  readonly closed: boolean;
  /** Peers waiting for the document, in join order: candidates for the lease. */
  waitingPeers(): readonly RoomPeer[];
  /** Re-reads the session (seeded elsewhere? epoch moved on?) and then calls `offer` if still unseeded. */
  refresh(): Promise<void>;
}

export interface SeedLeaseOptions {
  /** Identifies this process in holder ids. */
  serverId: string;
  /** Lease lifetime; renewed every third of it while the holder is connected. */
  leaseTtlMs: number;
  /** Poll period while the lease is held by someone not on this server. */
  leasePollMs: number;
  log: Logger;
}

export class SeedLease {
  private holder: RoomPeer | null = null;
  private offering = false;
  private renewTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly host: SeedLeaseHost,
    private readonly store: Store,
    private readonly opts: SeedLeaseOptions,
  ) {}

  isHolder(peer: RoomPeer): boolean {
    return this.holder === peer;
  }

  /** The holder string stored for `peer` (unique across servers). */
  holderId(peer: RoomPeer): string {
    return `${this.opts.serverId}/${peer.id}`;
  }

  /**
   * Asks the store for the lease on behalf of the first waiting peer; granted → that peer gets `onGranted`.
   * Refused (held elsewhere) → polls the store until the epoch is seeded or the lease is free.
   */
  async offer(onGranted: (peer: RoomPeer) => void): Promise<void> {
    if (this.offering || this.holder !== null || this.host.seeded || this.host.closed) return;
    this.offering = true;
    try {
      // Bounded: each round hands out the lease, stops, or skips a peer that left meanwhile.
      const rounds = this.host.waitingPeers().length;
      for (let round = 0; round <= rounds; round++) {
        const candidate = this.host.waitingPeers().find((p) => p.open);
        if (!candidate || this.host.seeded || this.host.closed) return;
        const holder = this.holderId(candidate);
        const granted = await this.store.acquireSeedLease(this.host.key, this.host.epoch, holder, Date.now(), this.opts.leaseTtlMs);
        if (!granted) {
          this.startPolling();
          return;
        }
        if (this.host.waitingPeers().includes(candidate) && candidate.open && !this.host.seeded && !this.host.closed) {
          this.holder = candidate;
          this.stopPolling();
          this.startRenewing(candidate);
          onGranted(candidate);
          return;
        }
        await this.store.releaseSeedLease(this.host.key, this.host.epoch, holder);
      }
    } catch (error) {
      this.opts.log.error(`seed lease of ${this.host.key.account}/${this.host.key.docId}`, error);
      this.startPolling();
    } finally {
      this.offering = false;
    }
  }

  /**
   * The holder sent its seed: stop renewing and forget it as holder (the store decides in `commitSeed` whether
   * it still held the lease). Returns its holder id.
   */
  takeForCommit(peer: RoomPeer): string {
    this.stopTimer('renewTimer');
    if (this.holder === peer) this.holder = null;
    return this.holderId(peer);
  }

  /** A peer left. When it held the lease, the lease is released and offered to the next waiting peer (P6). */
  async peerLeft(peer: RoomPeer, onGranted: (peer: RoomPeer) => void): Promise<void> {
    if (this.holder !== peer) return;
    this.holder = null;
    this.stopTimer('renewTimer');
    await this.store.releaseSeedLease(this.host.key, this.host.epoch, this.holderId(peer));
    await this.offer(onGranted);
  }

  startPolling(): void {
    if (this.pollTimer || this.host.closed) return;
    this.pollTimer = setInterval(() => {
      if (this.host.waitingPeers().length === 0 || this.host.seeded) return this.stopPolling();
      this.host.refresh().catch((error: unknown) => this.opts.log.error('checking the seed state', error));
    }, this.opts.leasePollMs);
    this.pollTimer.unref();
  }

  stopPolling(): void {
    this.stopTimer('pollTimer');
  }

  close(): void {
    this.holder = null;
    this.stopTimer('renewTimer');
    this.stopTimer('pollTimer');
  }

  private startRenewing(holder: RoomPeer): void {
    this.stopTimer('renewTimer');
    this.renewTimer = setInterval(() => {
      if (this.holder !== holder) return this.stopTimer('renewTimer');
      this.store
        .acquireSeedLease(this.host.key, this.host.epoch, this.holderId(holder), Date.now(), this.opts.leaseTtlMs)
        .then((kept) => {
          if (kept || this.holder !== holder) return;
          // Lost (this process stalled past the TTL and another holder took it): wait for that one.
          this.opts.log.warn(`seed lease of ${this.host.key.account}/${this.host.key.docId} lost by its holder`);
          this.holder = null;
          this.stopTimer('renewTimer');
          this.startPolling();
        })
        .catch((error: unknown) => this.opts.log.error('renewing the seed lease', error));
    }, Math.max(50, Math.floor(this.opts.leaseTtlMs / 3)));
    this.renewTimer.unref();
  }

  private stopTimer(name: 'renewTimer' | 'pollTimer'): void {
    const timer = this[name];
    if (timer) clearInterval(timer);
    this[name] = undefined;
  }
}
