// Polling for something a test cannot await directly (a log line written after the response, a
// connection closed on the other side).

/** Resolves true as soon as `condition()` holds (checked every 5 ms), false once `timeoutMs` has passed. */
export async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return true;
}
