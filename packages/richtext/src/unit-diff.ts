/**
 * A character diff over the units of the flat text (characters, embeds, `"\n"`s), by `fast-diff` (Quill's own
 * diff, a port of diff-match-patch's) with its semantic cleanup: the runs the two sequences share are kept, and
 * a short coincidental match between two changes is not (a peer's insertion there would land inside new text).
 */
import diff from 'fast-diff';
import type { LineUnit } from './ytext.js';

/** One step over both sequences: `n` units kept (0), deleted from the old (-1) or inserted from the new (1). */
export interface DiffStep {
  kind: -1 | 0 | 1;
  n: number;
}

/**
 * The steps turning `old` into `next`. Each unit is one UTF-16 code unit of the compared strings: a text unit is
 * its character, an embed a private-use character that neither sequence holds, one per distinct embed.
 */
export function unitDiff(old: readonly LineUnit[], next: readonly LineUnit[]): DiffStep[] {
  const used = new Set<string>();
  for (const u of [...old, ...next]) if (typeof u.insert === 'string') used.add(u.key);
  const codes = new Map<string, string>();
  let free = 0xe000;
  const code = (u: LineUnit): string => {
    if (typeof u.insert === 'string') return u.key;
    let c = codes.get(u.key);
    if (c === undefined) {
      while (used.has(String.fromCharCode(free))) free++;
      c = String.fromCharCode(free++);
      codes.set(u.key, c);
    }
    return c;
  };
  const a = old.map(code).join('');
  const b = next.map(code).join('');
  return diff(a, b, undefined, true).map(([kind, text]) => ({ kind, n: text.length }));
}
