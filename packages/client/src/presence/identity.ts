/**
 * How a user is shown: validated colour, initials, label. Everything a peer sends is untrusted: names become text
 * (`textContent`), a colour is used only when it is a plain CSS colour, an avatar only when it is an http(s) or
 * relative URL (the server checked both already; the client checks again).
 */
import { PALETTE, isCssColorWith, isSafeUrl } from 'wave-protocol';

export interface ShownUser {
  clientId: number;
  name: string;
  email: string;
  avatar: string | null;
  color: string;
  self: boolean;
}

/** Reads the server-stamped identity of an awareness state; null when it has none (not yet welcomed). */
export function shownUser(clientId: number, state: Record<string, unknown>, self: boolean, index: number): ShownUser | null {
  const user = state['user'];
  if (!user || typeof user !== 'object') return null;
  const u = user as Record<string, unknown>;
  const text = (v: unknown, max: number): string => (typeof v === 'string' ? v.slice(0, max) : '');
  const name = text(u['name'], 100);
  const email = text(u['email'], 254);
  return {
    clientId,
    name,
    email,
    avatar: isSafeUrl(u['avatar']) ? (u['avatar'] as string) : null,
    color: safeColor(state['color'], index),
    self,
  };
}

/**
 * `color` when it is a plain CSS colour (wave-protocol `isCssColorWith`; a named colour is one this browser's CSS
 * parser takes, so the bundle carries no list of them), else the palette colour of the join `index`. Outside a
 * browser (no `CSS`) no named colour is taken.
 */
export function safeColor(color: unknown, index: number): string {
  const named = (word: string): boolean => typeof CSS !== 'undefined' && CSS.supports('color', word);
  return isCssColorWith(color, named) ? color.trim() : (PALETTE[Math.abs(index) % PALETTE.length] as string);
}

/** The label of a caret or pointer: the name, else the e-mail, else "Anonymous". */
export function labelOf(user: { name: string; email: string }): string {
  return user.name.trim() || user.email.trim() || 'Anonymous';
}

/**
 * Up to two letters: the first letter (or digit) of the first and last words of the name, or of the e-mail's local
 * part; punctuation is skipped ("<img …>" gives "I…"). "?" when there is none.
 */
export function initialsOf(user: { name: string; email: string }): string {
  const source = user.name.trim() || user.email.split('@')[0]?.trim() || '';
  const firsts = source
    .split(/[\s._-]+/u)
    .map((word) => /[\p{L}\p{N}]/u.exec(word)?.[0])
    .filter((c): c is string => c !== undefined);
  if (firsts.length === 0) return '?';
  const pair = firsts.length > 1 ? firsts[0]! + firsts[firsts.length - 1]! : firsts[0]!;
  return pair.toLocaleUpperCase();
}
