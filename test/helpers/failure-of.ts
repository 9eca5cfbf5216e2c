// The error a call that should fail fails with, for asserting on it (an SDK's APIError: status,
// message, body); a call that succeeds fails the test.
import assert from 'node:assert/strict';

export async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return await promise.then(
    () => assert.fail('not refused'),
    (error: unknown) => error,
  );
}
