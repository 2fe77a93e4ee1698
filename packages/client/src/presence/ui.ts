/**
 * The presence UI of one session: publishes the local caret and pointer (throttled) and draws everyone
 * else's — avatars, carets, selections, pointers — over the editor. Editor specifics come from a `PresenceHost`.
 * A rendering error for one user is caught and logged; it never reaches editing (STYLE.md §10).
 */
import * as Y from 'yjs';
import { Throttle } from '../core/throttle.js';
import type { PresenceState, SessionUser } from '../core/session.js';
import { Avatars } from './avatars.js';
import { Carets, type CaretEntry } from './carets.js';
import { labelOf, safeColor, shownUser } from './identity.js';
import { Layer } from './layer.js';
import { Pointers, type PointerEntry, type PointerShape } from './pointers.js';
import type { PresenceHost, RelSelection } from './types.js';

export interface PresenceOptions {
  avatars: { left: boolean; vertical: boolean };
  cursorAlwaysOn: boolean;
  pointerShape: PointerShape;
}

export type PresencePart = 'ui' | 'cursors' | 'pointers';

/** What the UI needs from the session. */
export interface PresenceSession {
  setPresence(fields: Record<string, unknown>): void;
  getPresence(): PresenceState[];
  readonly ydoc: Y.Doc;
}

/** At most ~20 caret/pointer updates a second per user … */
const PUBLISH_MS = 50;
/** … and fewer when nobody else is there to see them (the caret is still kept fresh for whoever joins). */
const PUBLISH_ALONE_MS = 1_000;
/** A remote caret's label stays visible this long after that user moved or typed (API.md: about 2 s). */
const ACTIVE_MS = 2_000;

export class PresenceUI {
  private readonly layer: Layer;
  private readonly avatars: Avatars;
  private readonly carets: Carets;
  private readonly pointers: Pointers;
  private states: PresenceState[] = [];
  private online = false;
  private frame = 0;
  private readonly cleanups: Array<() => void> = [];
  /** One throttle for carets and pointers together: one awareness message carries both. */
  private readonly throttle: Throttle;
  private cursorDirty = false;
  private sentCursor = '';
  private pendingPointer: { x: number; y: number } | null | undefined;
  private clicks = 0;
  /** Per remote client: the cursor it last published and until when its label shows. */
  private readonly activity = new Map<number, { key: string; until: number }>();
  private activityTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly host: PresenceHost,
    private readonly session: PresenceSession,
    options: PresenceOptions,
    private readonly shown: Record<PresencePart, boolean>,
  ) {
    const doc = host.container.ownerDocument;
    this.layer = new Layer(doc);
    this.layer.root.classList.toggle('wave-presence--labels', options.cursorAlwaysOn);
    this.avatars = new Avatars(this.layer, options.avatars);
    this.carets = new Carets(this.layer.clip);
    this.pointers = new Pointers(this.layer.clip, options.pointerShape);
    this.throttle = new Throttle(() => this.publish(), () => (this.alone() ? PUBLISH_ALONE_MS : PUBLISH_MS));
    this.applyShown();
    this.listen();
  }

  setShown(part: PresencePart, on: boolean): void {
    this.shown[part] = on;
    this.applyShown();
    this.schedule();
  }

  setOnline(online: boolean): void {
    if (online === this.online) return;
    this.online = online;
    if (online) {
      this.sentCursor = '';
      this.cursorDirty = true;
      this.throttle.schedule();
    }
  }

  setUsers(users: SessionUser[]): void {
    this.avatars.update(
      users.map((u, i) => ({
        key: `${u.joinTime.getTime()}`,
        name: typeof u.user?.name === 'string' ? u.user.name : '',
        email: typeof u.user?.email === 'string' ? u.user.email : '',
        avatar: typeof u.user?.avatar === 'string' ? u.user.avatar : null,
        color: safeColor(u.color, i),
        self: u.self,
      })),
    );
    this.schedule();
  }

  setStates(states: PresenceState[]): void {
    this.states = states;
    const now = Date.now();
    for (const s of states) {
      if (s.self) continue;
      const key = JSON.stringify(s.state['cursor'] ?? null);
      const seen = this.activity.get(s.clientId);
      if (!seen || seen.key !== key) this.activity.set(s.clientId, { key, until: now + ACTIVE_MS });
    }
    for (const id of this.activity.keys()) if (!states.some((s) => s.clientId === id)) this.activity.delete(id);
    this.armActivityTimer();
    this.schedule();
  }

  /** The shared content changed: carets move with it. */
  contentChanged(): void {
    this.schedule();
  }

  destroy(): void {
    for (const c of this.cleanups.splice(0)) c();
    this.throttle.cancel();
    if (this.frame) cancelAnimationFrame(this.frame);
    if (this.activityTimer !== null) clearTimeout(this.activityTimer);
    this.carets.clear();
    this.pointers.clear();
    this.avatars.destroy();
    this.layer.destroy();
    this.host.destroy?.();
  }

  // ---- publishing ----

  private alone(): boolean {
    return !this.states.some((s) => !s.self);
  }

  /** Sends what changed since the last run (caret, pointer) in one awareness update. */
  private publish(): void {
    if (!this.online) return;
    const fields: Record<string, unknown> = {};
    if (this.cursorDirty) {
      this.cursorDirty = false;
      const cursor = this.readCursor();
      const key = JSON.stringify(cursor);
      // Not focused (null): peers keep seeing where this user was.
      if (cursor && key !== this.sentCursor) {
        this.sentCursor = key;
        fields['cursor'] = cursor;
      }
    }
    if (this.pendingPointer !== undefined) {
      const pointer = this.pendingPointer;
      this.pendingPointer = undefined;
      // Alone, nobody sees the pointer: only its disappearance is sent.
      if (pointer === null || !this.alone()) fields['pointer'] = pointer && { x: pointer.x, y: pointer.y, c: this.clicks };
    }
    if (Object.keys(fields).length > 0) this.session.setPresence(fields);
  }

  private readCursor(): { anchor: unknown; head: unknown } | null {
    let selection: RelSelection | null = null;
    try {
      selection = this.host.localSelection(this.session.ydoc);
    } catch (err) {
      console.warn('[wave] could not read the local selection:', err);
    }
    return selection && { anchor: Y.relativePositionToJSON(selection.anchor), head: Y.relativePositionToJSON(selection.head) };
  }

  private readonly onSelection = (): void => {
    this.cursorDirty = true;
    this.throttle.schedule();
  };

  private readonly onMouseMove = (event: MouseEvent): void => {
    const p = this.host.toTop({ x: event.clientX, y: event.clientY });
    if (this.carets.hover(p.x, p.y)) this.schedule();
    if (!this.shown.pointers) return;
    const origin = this.host.contentOrigin();
    this.pendingPointer = { x: Math.round(p.x - origin.x), y: Math.round(p.y - origin.y) };
    this.throttle.schedule();
  };

  private readonly onMouseDown = (event: MouseEvent): void => {
    if (!this.shown.pointers) return;
    this.clicks++;
    this.onMouseMove(event);
  };

  private readonly onMouseLeave = (): void => {
    if (this.carets.hover(-1e6, -1e6)) this.schedule();
    if (!this.shown.pointers) return;
    this.pendingPointer = null;
    this.throttle.schedule();
  };

  // ---- drawing ----

  private readonly schedule = (): void => {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  };

  private render(): void {
    this.layer.measure();
    if (this.shown.ui) {
      try {
        this.avatars.place(this.host.container.getBoundingClientRect());
      } catch (err) {
        console.warn('[wave] avatars:', err);
      }
    }
    const viewport = this.host.viewport();
    const place = this.layer.placeClip(viewport);
    const doc = this.session.ydoc;
    const now = Date.now();
    const carets: CaretEntry[] = [];
    const pointers: PointerEntry[] = [];
    const origin = this.shown.pointers ? this.host.contentOrigin() : { x: 0, y: 0 };
    this.states.forEach((s, index) => {
      if (s.self) return;
      try {
        const user = shownUser(s.clientId, s.state, false, index);
        if (!user) return;
        const label = labelOf(user);
        const cursor = this.shown.cursors ? readSelection(s.state['cursor']) : null;
        if (cursor) {
          const rects = this.host.rects(doc, cursor);
          const active = (this.activity.get(s.clientId)?.until ?? 0) > now;
          if (rects) carets.push({ clientId: s.clientId, label, color: user.color, rects, active });
        }
        const pointer = this.shown.pointers ? readPointer(s.state['pointer']) : null;
        if (pointer) pointers.push({ clientId: s.clientId, label, color: user.color, at: { x: origin.x + pointer.x, y: origin.y + pointer.y }, clicks: pointer.c });
      } catch (err) {
        console.warn(`[wave] could not draw the presence of client ${s.clientId}:`, err);
      }
    });
    this.carets.render(carets, viewport, place);
    this.pointers.render(pointers, place);
  }

  private applyShown(): void {
    this.avatars.bar.classList.toggle('wave-hidden', !this.shown.ui);
    if (!this.shown.cursors) this.carets.clear();
    if (!this.shown.pointers) this.pointers.clear();
  }

  /** Re-renders when the next label's activity ends, so that it hides on time. */
  private armActivityTimer(): void {
    if (this.activityTimer !== null) clearTimeout(this.activityTimer);
    this.activityTimer = null;
    const now = Date.now();
    const next = Math.min(...[...this.activity.values()].map((a) => a.until).filter((t) => t > now));
    if (!Number.isFinite(next)) return;
    this.activityTimer = setTimeout(() => {
      this.activityTimer = null;
      this.schedule();
      this.armActivityTimer();
    }, next - now + 10);
  }

  private listen(): void {
    const host = this.host;
    const on = (target: EventTarget, name: string, fn: EventListener, opts?: AddEventListenerOptions): void => {
      target.addEventListener(name, fn, opts);
      this.cleanups.push(() => target.removeEventListener(name, fn, opts));
    };
    this.cleanups.push(host.onSelectionChange(this.onSelection));
    const surface = host.surface;
    on(surface, 'mousemove', this.onMouseMove as EventListener, { passive: true });
    on(surface, 'mousedown', this.onMouseDown as EventListener, { passive: true });
    on(surface, 'mouseleave', this.onMouseLeave, { passive: true });
    const win = host.container.ownerDocument.defaultView ?? window;
    on(win, 'scroll', this.schedule, { passive: true, capture: true });
    on(win, 'resize', this.schedule, { passive: true });
    for (const target of host.scrollTargets()) on(target, 'scroll', this.schedule, { passive: true, capture: true });
    if (typeof ResizeObserver !== 'undefined') {
      const observer = new ResizeObserver(this.schedule);
      observer.observe(host.container);
      observer.observe(surface);
      this.cleanups.push(() => observer.disconnect());
    }
  }
}

function readSelection(value: unknown): RelSelection | null {
  if (!value || typeof value !== 'object') return null;
  const v = value as { anchor?: unknown; head?: unknown };
  if (!v.anchor || typeof v.anchor !== 'object' || !v.head || typeof v.head !== 'object') return null;
  return { anchor: Y.createRelativePositionFromJSON(v.anchor), head: Y.createRelativePositionFromJSON(v.head) };
}

function readPointer(value: unknown): { x: number; y: number; c: number } | null {
  if (!value || typeof value !== 'object') return null;
  const v = value as { x?: unknown; y?: unknown; c?: unknown };
  if (typeof v.x !== 'number' || typeof v.y !== 'number' || !Number.isFinite(v.x) || !Number.isFinite(v.y)) return null;
  if (Math.abs(v.x) > 1e6 || Math.abs(v.y) > 1e7) return null;
  return { x: v.x, y: v.y, c: typeof v.c === 'number' && Number.isFinite(v.c) ? v.c : 0 };
}
