// Polling for something a test cannot await directly (a log line written after the response, a
// connection closed on the other side, a configuration change being served).
import assert from 'node:assert/strict';

/**
 * Resolves true as soon as `condition()` holds (checked every `intervalMs`, 5 by default), false
 * once `timeoutMs` has passed. An async condition (a request) is awaited before the next check.
 */
export async function until(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  intervalMs = 5,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  return true;
}

/** Resolves once `check()` resolves true (tried every 20 ms); fails the test after `timeoutMs`. */
export async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  assert.ok(await until(check, timeoutMs, 20), `timed out waiting for ${what}`);
}
