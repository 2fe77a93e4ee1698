/** The server's logging sink. Kept tiny on purpose: stdout carries the CLI's own lines, diagnostics go to stderr. */
export interface Logger {
  info(message: string): void;
  warn(message: string, error?: unknown): void;
  error(message: string, error?: unknown): void;
}

export const consoleLogger: Logger = {
  info: (message) => console.log(message),
  warn: (message, error) => console.error(`warn: ${message}${describe(error)}`),
  error: (message, error) => console.error(`error: ${message}${describe(error)}`),
};

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

function describe(error: unknown): string {
  if (error === undefined) return '';
  if (error instanceof Error) return `: ${error.stack ?? error.message}`;
  return `: ${String(error)}`;
}
