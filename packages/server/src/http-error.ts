/** The refusals of the REST endpoints (rest.ts, webhooks/rest.ts, webhooks/changes.ts): an HTTP status and why. */

/**
 * Machine-readable reasons of the REST API's content refusals (400/415): `invalid_body` (not the JSON or fields
 * expected), `invalid_delta` (a Delta that does not describe a document), `html_too_deep` (HTML nested deeper than
 * html-input.ts `MAX_HTML_DEPTH`), `unsupported_media_type`, `invalid_format` (an unknown `?format=`).
 */
export type RestErrorCode = 'invalid_body' | 'invalid_delta' | 'html_too_deep' | 'unsupported_media_type' | 'invalid_format';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: RestErrorCode,
  ) {
    super(message);
  }
}
