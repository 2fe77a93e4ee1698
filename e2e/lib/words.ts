// Word-integrity helpers shared by the fuzz oracles (fuzz.test.ts, richtext-fuzz.test.ts).

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
