/** The avatar bar: one avatar per connected user in join order, initials on the user's colour or their image. */
import { initialsOf } from './identity.js';
import type { Layer } from './layer.js';
import type { Rect } from './types.js';

export interface AvatarUser {
  key: string;
  name: string;
  email: string;
  avatar: string | null;
  color: string;
  self: boolean;
}

/** Gap between the editor's edge and the bar, in px. */
const GAP = 6;

export class Avatars {
  readonly bar: HTMLDivElement;
  private signature = '';

  constructor(private readonly layer: Layer, private readonly options: { left: boolean; vertical: boolean }) {
    this.bar = layer.root.ownerDocument.createElement('div');
    this.bar.className = 'wave-avatars';
    if (options.vertical) this.bar.classList.add('wave-avatars--vertical');
    if (options.left) this.bar.classList.add('wave-avatars--left');
    layer.root.appendChild(this.bar);
  }

  update(users: AvatarUser[]): void {
    const signature = JSON.stringify(users);
    if (signature === this.signature) return;
    this.signature = signature;
    const doc = this.bar.ownerDocument;
    this.bar.replaceChildren(...users.map((user) => avatarElement(doc, user)));
  }

  /** Places the bar at the editor's top corner (above it when there is room), or beside it when vertical. */
  place(anchor: Rect): void {
    const bar = this.bar.getBoundingClientRect();
    const { left, vertical } = this.options;
    let x: number;
    let y: number;
    if (vertical) {
      x = left ? anchor.left - bar.width - GAP : anchor.left + anchor.width + GAP;
      y = anchor.top;
      // No room beside the editor in the window: inside its corner instead.
      if (x < 0 || x + bar.width > this.bar.ownerDocument.documentElement.clientWidth) x = left ? anchor.left + GAP : anchor.left + anchor.width - bar.width - GAP;
    } else {
      x = left ? anchor.left : anchor.left + anchor.width - bar.width;
      y = anchor.top - bar.height - GAP;
      if (y + window.scrollY < 0) y = anchor.top + GAP;
    }
    this.layer.place(this.bar, { left: x, top: y, width: bar.width, height: bar.height }, false);
  }

  destroy(): void {
    this.bar.remove();
  }
}

function avatarElement(doc: Document, user: AvatarUser): HTMLElement {
  const el = doc.createElement('div');
  el.className = user.self ? 'wave-avatar wave-avatar--self' : 'wave-avatar';
  el.style.backgroundColor = user.color;
  el.style.borderColor = user.color;
  el.setAttribute('role', 'img');
  el.setAttribute('aria-label', [user.name, user.email].filter(Boolean).join(' · ') || 'Anonymous');
  const initials = doc.createElement('span');
  initials.className = 'wave-avatar-initials';
  initials.textContent = initialsOf(user);
  el.appendChild(initials);
  if (user.avatar) {
    const img = doc.createElement('img');
    img.className = 'wave-avatar-img';
    img.alt = '';
    img.referrerPolicy = 'no-referrer';
    img.draggable = false;
    // A broken image falls back to the initials underneath.
    img.addEventListener('error', () => img.remove(), { once: true });
    img.src = user.avatar;
    el.appendChild(img);
  }
  const tip = doc.createElement('div');
  tip.className = 'wave-avatar-tip';
  const name = doc.createElement('strong');
  name.className = 'wave-avatar-name';
  name.textContent = (user.name || 'Anonymous') + (user.self ? ' (you)' : '');
  tip.appendChild(name);
  if (user.email) {
    const email = doc.createElement('span');
    email.className = 'wave-avatar-email';
    email.textContent = user.email;
    tip.appendChild(email);
  }
  el.appendChild(tip);
  return el;
}
