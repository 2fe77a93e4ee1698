import type { ErrorCode } from 'wave-protocol';

/**
 * The error type of every rejected Promise and every `error` event (API.md "Events").
 * `message` equals `code` for compatibility with Codox Wave; `detail` is the sentence for people.
 */
export class CoeditError extends Error {
  override readonly name = 'CoeditError';
  readonly code: ErrorCode;
  readonly detail: string;
  readonly fatal: boolean;

  constructor(code: ErrorCode, detail: string, fatal: boolean) {
    super(code);
    this.code = code;
    this.detail = detail;
    this.fatal = fatal;
  }

  /** The `error` event payload: `{ code, message, detail, fatal }`. */
  toEvent(): ErrorEvent {
    return { code: this.code, message: this.code, detail: this.detail, fatal: this.fatal };
  }
}

export interface ErrorEvent {
  code: ErrorCode;
  message: string;
  detail: string;
  fatal: boolean;
}

/** A config mistake: names the key and what was expected. */
export function invalidConfig(key: string, expected: string, got?: unknown): CoeditError {
  const seen = got === undefined ? '' : `, got ${describe(got)}`;
  return new CoeditError('invalid_config', `${key}: expected ${expected}${seen}`, true);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value.length > 40 ? `a string of ${value.length} characters` : JSON.stringify(value);
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}
