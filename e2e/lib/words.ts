// Word-integrity helpers shared by the fuzz oracles (fuzz.test.ts, richtext-fuzz.test.ts, any-editor-fuzz.test.ts).
import assert from 'node:assert/strict';

/**
 * True when `text` holds `word`'s letters, in order, split once around a gap (under 5,000 characters) that `fromGap`
 * accepts: how a word looks after Yjs's undo put text back inside it (yjs src/structs/Item.js, `redoItem`, places
 * restored text next to its current left neighbour, which can be the first letters of a word a peer is typing).
 */
export function splitAround(text: string, word: string, fromGap: (gap: string) => boolean): boolean {
  for (let k = 1; k < word.length; k++) {
    const head = word.slice(0, k);
    const tail = word.slice(k);
    for (let at = text.indexOf(head); at !== -1; at = text.indexOf(head, at + 1)) {
      for (let end = text.indexOf(tail, at + k + 1); end !== -1 && end - at < 5_000; end = text.indexOf(tail, end + 1)) {
        if (fromGap(text.slice(at + k, end))) return true;
      }
    }
  }
  return false;
}

/** The shape of every word the fuzz types (the seed lines' and each user's numbered words). */
export const WORD = /(?:ann|bob|cid)\d+q|seed\dw\d/;

/** The items of `before` that `after` no longer holds (as many times as they were lost). */
export function lost(before: string[], after: string[]): string[] {
  const left = [...after];
  return before.filter((w) => {
    const i = left.indexOf(w);
    if (i >= 0) left.splice(i, 1);
    return i < 0;
  });
}
/** The fuzz's words in `before` that `after` no longer holds. */
export const wordsRemoved = (before: string, after: string) => lost([...before.matchAll(new RegExp(WORD.source, 'g'))].map((m) => m[0]), [...after.matchAll(new RegExp(WORD.source, 'g'))].map((m) => m[0]));

/**
 * The text `before` lost to become `after`, when it lost one run (an Enter adds no text): what lies between their
 * common start and their common end.
 */
export function removedRange(before: string, after: string): string {
  let head = 0;
  while (head < after.length && before[head] === after[head]) head++;
  let tail = 0;
  while (tail < after.length - head && before[before.length - 1 - tail] === after[after.length - 1 - tail]) tail++;
  return before.slice(head, before.length - tail);
}

/** What one run found about word integrity: words missing or doubled, the final text, the operations. */
export interface Integrity {
  seed: number;
  missing: string[];
  doubled: string[];
  text: string;
  log: string[];
}

/** Every word typed and not deleted is in the document, intact. */
export function assertNoneMissing(result: Integrity): void {
  // Each missing word with what is left of it: where its pieces are in the text, and the operations naming it.
  const where = result.missing.map((w) => {
    const pieces = [w.slice(0, 1), w.slice(1)].map((piece) => {
      const at = result.text.indexOf(piece);
      return at < 0 ? `"${piece}" nowhere` : `"${piece}" in …${JSON.stringify(result.text.slice(Math.max(0, at - 25), at + 25))}…`;
    });
    // Its letters in order with only whitespace between them: a line break or spaces put inside it while it was typed.
    const spread = new RegExp(w.split('').join('\\s*')).exec(result.text);
    const across = spread ? `; spelled across whitespace: …${JSON.stringify(result.text.slice(Math.max(0, spread.index - 25), spread.index + spread[0].length + 25))}…` : '';
    // The operations logged around its typing: the log is in the order operations ended, so these ran at about
    // the same time.
    const typedAt = result.log.findIndex((l) => l.endsWith(` type ${w}`));
    const around = typedAt < 0 ? [] : result.log.slice(Math.max(0, typedAt - 12), typedAt + 13);
    return `${w}: ${pieces.join(', ')}${across}; ops: ${result.log.filter((l) => l.includes(w)).join(' | ')}\n  around its typing:\n    ${around.join('\n    ')}`;
  });
  assert.deepEqual(result.missing, [], `intact words (seed ${result.seed}):\n${where.join('\n')}\ntext: ${JSON.stringify(result.text)}`);
}

/** No word that nobody removed is in the document twice; each doubled word is shown where it is. */
export function assertNoneDoubled(result: Integrity): void {
  const where = result.doubled.map((w) => `${w}: ${[...result.text.matchAll(new RegExp(w, 'g'))].map((m) => JSON.stringify(result.text.slice(Math.max(0, m.index - 40), m.index + w.length + 40))).join(' | ')}`);
  assert.deepEqual(result.doubled, [], `no word twice (seed ${result.seed}):\n${where.join('\n')}`);
}
