/**
 * Presence shape and validators. The server stamps identity (user, color, joinTime) into every awareness state
 * it relays; a client can publish only its own Yjs client id and only presence fields (cursor, pointer …).
 */
import * as encoding from 'lib0/encoding';
import * as decoding from 'lib0/decoding';
import { parseJsonSafely } from './json.js';

/** What a client may ask to be shown as (API.md config `user`). Every field optional. */
export interface UserInput {
  name?: unknown;
  email?: unknown;
  avatar?: unknown;
  id?: unknown;
  color?: unknown;
}

/** The identity peers see: only known keys, each a bounded string. */
export interface UserIdentity {
  name?: string;
  email?: string;
  avatar?: string;
  id?: string;
}

/** Fields of an awareness state that only the server writes. */
export const STAMPED_FIELDS = ['user', 'color', 'joinTime'] as const;

/**
 * Colours handed out round-robin by join order when `user.color` is absent or invalid. Chosen to be distinct
 * from each other and readable as a caret on white (all ≥ 3:1 contrast).
 */
export const PALETTE = [
  '#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#e6550d', '#17becf',
  '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#3182bd', '#31a354',
] as const;

const LIMITS = { name: 100, email: 254, avatar: 2048, id: 256 } as const;

// CSS Color 4 named colours (https://www.w3.org/TR/css-color-4/#named-colors), lower case, space-separated. A string
// constant (and the set built from it on first use) so that a bundle that never calls `isCssColor` leaves it out.
const NAMED_COLOR_LIST =
  ('aliceblue antiquewhite aqua aquamarine azure beige bisque black blanchedalmond blue blueviolet brown burlywood ' +
    'cadetblue chartreuse chocolate coral cornflowerblue cornsilk crimson cyan darkblue darkcyan darkgoldenrod darkgray ' +
    'darkgreen darkgrey darkkhaki darkmagenta darkolivegreen darkorange darkorchid darkred darksalmon darkseagreen ' +
    'darkslateblue darkslategray darkslategrey darkturquoise darkviolet deeppink deepskyblue dimgray dimgrey dodgerblue ' +
    'firebrick floralwhite forestgreen fuchsia gainsboro ghostwhite gold goldenrod gray green greenyellow grey honeydew ' +
    'hotpink indianred indigo ivory khaki lavender lavenderblush lawngreen lemonchiffon lightblue lightcoral lightcyan ' +
    'lightgoldenrodyellow lightgray lightgreen lightgrey lightpink lightsalmon lightseagreen lightskyblue lightslategray ' +
    'lightslategrey lightsteelblue lightyellow lime limegreen linen magenta maroon mediumaquamarine mediumblue ' +
    'mediumorchid mediumpurple mediumseagreen mediumslateblue mediumspringgreen mediumturquoise mediumvioletred ' +
    'midnightblue mintcream mistyrose moccasin navajowhite navy oldlace olive olivedrab orange orangered orchid ' +
    'palegoldenrod palegreen paleturquoise palevioletred papayawhip peachpuff peru pink plum powderblue purple ' +
    'rebeccapurple red rosybrown royalblue saddlebrown salmon sandybrown seagreen seashell sienna silver skyblue ' +
    'slateblue slategray slategrey snow springgreen steelblue tan teal thistle tomato turquoise violet wheat white ' +
    'whitesmoke yellow yellowgreen');
let namedColors: Set<string> | null = null;

const HEX_COLOR = /^#(?:[0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/i;
const NUM = String.raw`\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:%|deg)?\s*`;
const FUNC_COLOR = new RegExp(String.raw`^(?:rgba?|hsla?)\((?:${NUM},${NUM},${NUM}(?:,${NUM})?|${NUM}${NUM}${NUM}(?:/${NUM})?)\)$`, 'i');

/**
 * True for a CSS colour that cannot carry anything but a colour: hex, `rgb()/rgba()/hsl()/hsla()` with
 * numeric arguments, or a CSS named colour. Rejects everything else (`url(…)`, `;`, `var()`, …).
 */
export function isCssColor(value: unknown): value is string {
  return isCssColorWith(value, (word) => (namedColors ??= new Set(NAMED_COLOR_LIST.split(' '))).has(word));
}

/**
 * `isCssColor` with the named colours decided by `isNamed`, given one word of ASCII letters, lower case (a browser
 * asks its CSS parser, `CSS.supports('color', word)`, instead of carrying the list). A word cannot carry anything
 * but a keyword, whatever `isNamed` answers.
 */
export function isCssColorWith(value: unknown, isNamed: (word: string) => boolean): value is string {
  if (typeof value !== 'string' || value.length > 64) return false;
  const v = value.trim();
  return HEX_COLOR.test(v) || FUNC_COLOR.test(v) || (/^[a-z]+$/i.test(v) && isNamed(v.toLowerCase()));
}

/** True for an `http:`/`https:` URL or a relative URL (no scheme); rejects `javascript:`, `data:` and the rest. */
export function isSafeUrl(value: unknown): value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > LIMITS.avatar) return false;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\s\\]/.test(value)) return false;
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(value);
  if (!scheme) return !value.startsWith('//');
  return /^https?$/i.test(scheme[1] ?? '');
}

/**
 * The identity to show for `input`: known keys only, strings truncated to their limits, an avatar kept only when
 * `isSafeUrl`. Never throws; junk becomes absent fields.
 */
export function sanitizeUser(input: unknown): UserIdentity {
  const out: UserIdentity = {};
  if (input === null || typeof input !== 'object') return out;
  const u = input as Record<string, unknown>;
  for (const key of ['name', 'email', 'id'] as const) {
    const v = Object.hasOwn(u, key) ? u[key] : undefined;
    if (typeof v === 'string' && v.trim() !== '') out[key] = v.slice(0, LIMITS[key]);
    else if (typeof v === 'number' && key === 'id' && Number.isFinite(v)) out.id = String(v);
  }
  const avatar = Object.hasOwn(u, 'avatar') ? u['avatar'] : undefined;
  if (isSafeUrl(avatar)) out.avatar = avatar;
  return out;
}

/** `color` when it is a valid CSS colour, else the palette colour for the `joinIndex`-th user to join. */
export function pickColor(color: unknown, joinIndex: number): string {
  if (isCssColor(color)) return color.trim();
  return PALETTE[Math.abs(joinIndex) % PALETTE.length] as string;
}

/** Largest awareness state JSON a client may publish, in characters. Carets and pointers need < 1 KiB. */
export const MAX_AWARENESS_STATE = 4096;

export interface StampedPresence {
  user: UserIdentity;
  color: string;
  joinTime: number;
}

/**
 * Rewrites a y-protocols awareness update from one connection (format: varuint count, then per entry varuint
 * clientID, varuint clock, varString JSON state; y-protocols/awareness.js `encodeAwarenessUpdate`).
 * Entries for client ids other than `ownClientId` are dropped (RELIABILITY.md S4), states over
 * `MAX_AWARENESS_STATE` or not objects are dropped, and the stamped fields are overwritten with `stamp`.
 * Returns `null` when nothing is left. Throws on bytes that do not decode.
 */
export function stampAwarenessUpdate(update: Uint8Array, ownClientId: number, stamp: StampedPresence): Uint8Array | null {
  const dec = decoding.createDecoder(update);
  const count = decoding.readVarUint(dec);
  const kept: Array<{ clientId: number; clock: number; json: string }> = [];
  for (let i = 0; i < count; i++) {
    const clientId = decoding.readVarUint(dec);
    const clock = decoding.readVarUint(dec);
    const text = decoding.readVarString(dec);
    if (clientId !== ownClientId || text.length > MAX_AWARENESS_STATE) continue;
    const state = parseJsonSafely(text);
    if (state === null) {
      kept.push({ clientId, clock, json: 'null' });
      continue;
    }
    if (typeof state !== 'object' || Array.isArray(state)) continue;
    const stamped = { ...(state as Record<string, unknown>), user: stamp.user, color: stamp.color, joinTime: stamp.joinTime };
    kept.push({ clientId, clock, json: JSON.stringify(stamped) });
  }
  if (decoding.hasContent(dec)) throw new Error('trailing bytes in awareness update');
  if (kept.length === 0) return null;
  const enc = encoding.createEncoder();
  encoding.writeVarUint(enc, kept.length);
  for (const entry of kept) {
    encoding.writeVarUint(enc, entry.clientId);
    encoding.writeVarUint(enc, entry.clock);
    encoding.writeVarString(enc, entry.json);
  }
  return encoding.toUint8Array(enc);
}
