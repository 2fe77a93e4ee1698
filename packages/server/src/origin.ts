/**
 * Origin allow-lists of API keys (P1, RELIABILITY.md S11). An entry is `self` (same origin as this server) or an
 * exact origin `scheme://host[:port]`. An empty list allows every origin.
 */

/** The literal that stands for "the origin this server is reached at" in an allow-list. */
export const SELF_ORIGIN = 'self';

const ORIGIN_SHAPE = /^[a-z][a-z0-9+.-]*:\/\/[^/?#@\s\\]+$/i;

/**
 * Normalises one allow-list entry (lower-case scheme and host, default port dropped) or throws a `TypeError`
 * naming the value and the expected form.
 */
export function normalizeOriginSpec(value: string): string {
  if (value === SELF_ORIGIN) return value;
  const url = ORIGIN_SHAPE.test(value) ? tryUrl(value) : undefined;
  if (!url || url.host === '') {
    throw new TypeError(
      `origin ${JSON.stringify(value)}: expected "self" or scheme://host[:port] without path, query or credentials (e.g. https://app.example.com)`,
    );
  }
  return `${url.protocol}//${url.host}`;
}

/**
 * True when a request with this `Origin` header may use a key with this allow-list. `host` is the request's
 * `Host` header, used for `self`. A request without an `Origin` header is not from a browser page and is allowed;
 * the opaque origin `null` (sandboxed frames, `file:`) matches only an empty list.
 */
export function isOriginAllowed(origin: string | undefined, allowList: readonly string[], host: string | undefined): boolean {
  if (origin === undefined) return true;
  if (allowList.length === 0) return true;
  const url = ORIGIN_SHAPE.test(origin) ? tryUrl(origin) : undefined;
  if (!url) return false;
  const normalized = `${url.protocol}//${url.host}`;
  for (const spec of allowList) {
    if (spec === SELF_ORIGIN) {
      if (host !== undefined && sameHost(url, host)) return true;
    } else if (spec === normalized) {
      return true;
    }
  }
  return false;
}

/** Compares the Origin's host with a `Host` header, both normalised under the Origin's scheme (default ports). */
function sameHost(origin: URL, hostHeader: string): boolean {
  if (!/^[^/?#@\s\\]+$/.test(hostHeader)) return false;
  const host = tryUrl(`${origin.protocol}//${hostHeader}`);
  return host !== undefined && host.host === origin.host;
}

function tryUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}
