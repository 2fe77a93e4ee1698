/** Identifiers and secrets of webhook endpoints and events, shared by every store. */
import { randomBytes } from 'node:crypto';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './types.js';

/** `we_` + 12 random bytes (base64url): names an endpoint in the CLI. */
export function newEndpointId(): string {
  return `we_${randomBytes(12).toString('base64url')}`;
}

/** A Standard Webhooks secret: `whsec_` + base64 of 32 random bytes (what the `standardwebhooks` library takes). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The URL an endpoint is created with: absolute, http: or https:, no credentials. Throws a TypeError for people. */
export function validateWebhookUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`url ${JSON.stringify(url)}: expected an absolute http:// or https:// URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new TypeError(`url ${JSON.stringify(url)}: expected http:// or https://, not ${parsed.protocol}`);
  }
  if (parsed.username !== '' || parsed.password !== '') throw new TypeError(`url: credentials in the URL are not allowed`);
  if (url.length > 2048) throw new TypeError('url: longer than 2048 characters');
  return parsed.toString();
}

/** Event type names, checked; an empty list or `undefined` means every type. */
export function validateEventTypes(events: readonly string[] | undefined): WebhookEventType[] {
  if (events === undefined || events.length === 0) return [...WEBHOOK_EVENT_TYPES];
  const known = new Set<string>(WEBHOOK_EVENT_TYPES);
  for (const e of events) {
    if (!known.has(e)) throw new TypeError(`events: unknown event ${JSON.stringify(e)} (expected ${WEBHOOK_EVENT_TYPES.join(', ')})`);
  }
  return [...new Set(events)] as WebhookEventType[];
}
