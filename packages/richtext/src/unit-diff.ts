/**
 * A diff over the units of the flat text (characters, embeds, `"\n"`s), by `fast-diff` (Quill's own diff, a port of
 * diff-match-patch's) with its semantic cleanup, in two passes: words first, then characters inside the words one
 * side replaced by the other's. A word (a run of letters and digits) is kept or replaced whole, so a new word is never
 * made of letters of an old one beside it (`ann56q` pasted before `ann12q` keeping that `ann`: a peer's typing
 * inside `ann12q` would then land inside the new word); inside replaced words the characters the two share are kept
 * (typing inside a word keeps its other letters). A short coincidental match between two changes is not kept (a
 * peer's insertion there would land inside new text).
 */
import diff from 'fast-diff';
import type { LineUnit } from './ytext.js';

/** One step over both sequences: `n` units kept (0), deleted from the old (-1) or inserted from the new (1). */
export interface DiffStep {
  kind: -1 | 0 | 1;
  n: number;
}

/** Whether `u` is a letter or a digit: part of a word. */
const isWordUnit = (u: LineUnit | undefined): boolean => typeof u?.insert === 'string' && /^[\p{L}\p{N}]$/u.test(u.key);

/** The words of `units` (runs of letters and digits) and every other unit alone, as [key, units] pairs. */
function tokens(units: readonly LineUnit[]): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  for (let i = 0; i < units.length; ) {
    let j = i + 1;
    if (isWordUnit(units[i])) while (isWordUnit(units[j])) j++;
    out.push([units.slice(i, j).map((u) => u.key).join(''), j - i]);
    i = j;
  }
  return out;
}

/** The steps turning `old` into `next`: words first, then the characters of the words replaced. */
export function unitDiff(old: readonly LineUnit[], next: readonly LineUnit[]): DiffStep[] {
  const sides = [tokens(old), tokens(next)];
  // One private-use character per distinct token (the strings compared hold these codes only).
  const codes = new Map<string, string>();
  const [sa, sb] = sides.map((t) => t.map(([key]) => codes.get(key) ?? codes.set(key, String.fromCharCode(0xe000 + codes.size)).get(key)).join(''));
  if (codes.size > 0x1900) return charDiff(old, next);
  const out: DiffStep[] = [];
  // Tokens and units consumed on each side, and the units of a pending replacement.
  const tok = [0, 0];
  const unit = [0, 0];
  const pending = [0, 0];
  const flush = () => {
    const [d, n] = pending;
    if (d! > 0 && n! > 0) out.push(...charDiff(old.slice(unit[0]! - d!, unit[0]), next.slice(unit[1]! - n!, unit[1])));
    else if (d! + n! > 0) out.push({ kind: d! > 0 ? -1 : 1, n: d! + n! });
    pending.fill(0);
  };
  for (const [kind, text] of diff(sa!, sb!, undefined, true)) {
    if (!kind) flush();
    for (const side of kind ? [kind < 0 ? 0 : 1] : [0, 1]) {
      let n = 0;
      for (let k = 0; k < text.length; k++) n += sides[side]![tok[side]! + k]![1];
      tok[side]! += text.length;
      unit[side]! += n;
      if (kind) pending[side]! += n;
      else if (!side) out.push({ kind, n });
    }
  }
  flush();
  return out;
}

/**
 * The character steps turning `old` into `next`. Each unit is one UTF-16 code unit of the compared strings: a text
 * unit is its character, an embed a private-use character that neither sequence holds, one per distinct embed.
 */
function charDiff(old: readonly LineUnit[], next: readonly LineUnit[]): DiffStep[] {
  // An embed's key (its JSON after a NUL) is no single character: the set holds the text's characters.
  const used = new Set([...old, ...next].map((u) => u.key));
  const codes = new Map<string, string>();
  let free = 0xe000;
  const code = (u: LineUnit): string => {
    if (typeof u.insert === 'string') return u.key;
    if (!codes.has(u.key)) {
      while (used.has(String.fromCharCode(free))) free++;
      codes.set(u.key, String.fromCharCode(free++));
    }
    return codes.get(u.key)!;
  };
  return diff(old.map(code).join(''), next.map(code).join(''), undefined, true).map(([kind, text]) => ({ kind, n: text.length }));
}
