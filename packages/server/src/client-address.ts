/**
 * The address a request comes from, for the per-address budgets (failed authorisations S1, open connections S19).
 * Behind a reverse proxy every request comes from the proxy's address; with `--trust-proxy` the client's address is
 * taken from the headers the proxy adds instead. One proxy hop is trusted: the entry it appended, i.e. the **last**
 * `for=` of `Forwarded` (RFC 7239), else the last entry of `X-Forwarded-For`. Entries before it were written by the
 * client or by proxies we do not know and are never used (a client could name any address there).
 * Without `--trust-proxy` these headers are ignored: a client reaching the server directly could forge them.
 */
import type { IncomingMessage } from 'node:http';

/** Longest address kept (an IPv6 address with a zone is < 64 characters); longer header values are not addresses. */
const MAX_ADDRESS_LENGTH = 64;

/**
 * The client address of `req`: the socket's peer address, or with `trustProxy` the address the proxy forwarded
 * (falling back to the socket's when the proxy sent none or an unreadable one).
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const peer = req.socket.remoteAddress ?? '';
  if (!trustProxy) return peer;
  return forwardedFor(req.headers['forwarded']) ?? lastXForwardedFor(req.headers['x-forwarded-for']) ?? peer;
}

/** The last `for=` node of a `Forwarded` header (RFC 7239 §4), without quotes, brackets or port. */
export function forwardedFor(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header.join(',') : header;
  if (!value) return undefined;
  const elements = value.split(',');
  const last = elements[elements.length - 1]!;
  for (const pair of last.split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0 || pair.slice(0, eq).trim().toLowerCase() !== 'for') continue;
    return node(pair.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1'));
  }
  return undefined;
}

/** The last entry of `X-Forwarded-For` (the address the nearest proxy saw). */
export function lastXForwardedFor(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header.join(',') : header;
  if (!value) return undefined;
  const entries = value.split(',');
  return node(entries[entries.length - 1]!.trim());
}

/** An address out of a forwarded node: `[v6]:port` → `v6`, `v4:port` → `v4`; unreadable → undefined. */
function node(value: string): string | undefined {
  let address = value;
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed) address = bracketed[1]!;
  else if (/^[\d.]+:\d+$/.test(address)) address = address.slice(0, address.lastIndexOf(':'));
  if (address === '' || address.length > MAX_ADDRESS_LENGTH || !/^[0-9a-zA-Z.:_%-]+$/.test(address)) return undefined;
  // RFC 7239 obfuscated identifiers and "unknown" are not addresses.
  if (address.toLowerCase() === 'unknown' || address.startsWith('_')) return undefined;
  return address;
}
