/** JSON.parse that drops `__proto__`, `constructor` and `prototype` keys (RELIABILITY.md S10). */
export function parseJsonSafely(text: string): unknown {
  return JSON.parse(text, (key, value: unknown) =>
    key === '__proto__' || key === 'constructor' || key === 'prototype' ? undefined : value,
  );
}
