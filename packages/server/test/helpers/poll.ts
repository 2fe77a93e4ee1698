/**
 * A bounded poll for conditions that span several clients (no single event tells when all of them agree).
 * Checks every 20 ms, fails with `what` after `timeoutMs`.
 */
export async function pollUntil(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
