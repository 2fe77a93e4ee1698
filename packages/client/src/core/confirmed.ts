/**
 * The server-confirmed state of a session's document: every remote update plus the local updates the server has
 * acked. The difference between it and the live document is exactly this client's unsynced edits, which a session
 * reset re-applies on top of a new session (PROTOCOL.md [P8], RELIABILITY.md D3). A second Y.Doc costs memory
 * and one more apply per update; it is the only way to tell our unacked edits apart once remote edits have
 * interleaved with them (garbage collection removes deleted text from the live doc).
 *
 * With `deferred`, confirmed updates are queued and applied to the copy off the critical path — in the browser's
 * idle time, or at once when the copy is read — so that the first sync of a large document (one update of hundreds
 * of KB; the B4 trace's took 25–50 ms per decode in bench/) renders in the editor without waiting for a second
 * decode. Sessions with offline persistence do not defer: the stored confirmed copy must not lag behind what was acked.
 */
import * as Y from 'yjs';
import { plainText } from './reset.js';

/** How long the browser may postpone the deferred apply when it is never idle (ms, `requestIdleCallback`). */
const IDLE_TIMEOUT_MS = 1_000;

type IdleScheduler = (fn: () => void) => void;
/** `requestIdleCallback` where the host has it (browsers; the core is typed without the DOM library). */
type RequestIdle = (fn: () => void, options: { timeout: number }) => unknown;

const requestIdle = (globalThis as { requestIdleCallback?: RequestIdle }).requestIdleCallback;
const scheduleIdle: IdleScheduler = requestIdle
  ? (fn) => void requestIdle.call(globalThis, fn, { timeout: IDLE_TIMEOUT_MS }) // unbound it throws "Illegal invocation"
  : (fn) => void setTimeout(fn, 0);

export class ConfirmedState {
  private readonly copy = new Y.Doc();
  /** Local updates not yet acked, with the local edit count each one brought the total to. */
  private unacked: Array<{ edit: number; update: Uint8Array }> = [];
  /** Confirmed updates not yet applied to `copy` (deferred mode only), oldest first. */
  private queued: Uint8Array[] = [];
  private scheduled = false;
  private destroyed = false;

  constructor(private readonly deferred = false) {}

  /** The confirmed copy itself, brought up to date; only offline persistence touches it directly. */
  get doc(): Y.Doc {
    this.applyQueued();
    return this.copy;
  }

  remote(update: Uint8Array): void {
    this.confirm(update);
  }

  local(edit: number, update: Uint8Array): void {
    this.unacked.push({ edit, update });
  }

  /** Local edits up to and including number `upTo` are durably stored: they become confirmed. */
  acked(upTo: number): void {
    while (this.unacked.length > 0 && (this.unacked[0] as { edit: number }).edit <= upTo) {
      this.confirm((this.unacked.shift() as { update: Uint8Array }).update);
    }
  }

  /** The confirmed plain text of the `Y.Text` `name` (reset.ts `plainText`). */
  text(name: string): string {
    return plainText(this.doc.getText(name));
  }

  destroy(): void {
    this.destroyed = true;
    this.unacked = [];
    this.queued = [];
    this.copy.destroy();
  }

  private confirm(update: Uint8Array): void {
    if (!this.deferred) {
      Y.applyUpdate(this.copy, update);
      return;
    }
    this.queued.push(update);
    if (this.scheduled) return;
    this.scheduled = true;
    scheduleIdle(() => {
      this.scheduled = false;
      this.applyQueued();
    });
  }

  private applyQueued(): void {
    if (this.destroyed || this.queued.length === 0) return;
    const queued = this.queued;
    this.queued = [];
    // Updates are applied in arrival order, as without deferral; Yjs would also accept them merged or reordered.
    Y.transact(this.copy, () => {
      for (const update of queued) Y.applyUpdate(this.copy, update);
    });
  }
}
