// A seeded random source for the property tests: lib0's PRNG (the one Yjs's own tests use), as a () => [0, 1).
import * as prng from 'lib0/prng';

export function seededRandom(seed: number): () => number {
  const gen = prng.create(seed);
  return () => prng.real53(gen);
}
