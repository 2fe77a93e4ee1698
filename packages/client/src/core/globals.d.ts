// The few host globals the DOM-free core uses; present in browsers and in Node alike. Declared here so that this
// folder compiles without the DOM lib, which keeps `document`/`window` out of the core (STYLE.md §2).
declare function setTimeout(handler: () => void, ms?: number): unknown;
declare function clearTimeout(handle: unknown): void;
declare function setInterval(handler: () => void, ms?: number): unknown;
declare function clearInterval(handle: unknown): void;
declare const console: { warn(...args: unknown[]): void; error(...args: unknown[]): void };
/** Base64 decoding to a binary string (token-refresh.ts reads a JWT's `exp`). */
declare function atob(data: string): string;
