// A password-hashing thread of the hashing pool (hashing-pool.ts): it checks one password at a
// time, synchronously, off the event loop, and answers with whether the user's own hash matched.
// It runs at a lower CPU priority than the event loop's thread (Linux nice values are per thread),
// so that on a busy machine serving requests wins over checking passwords.
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { checkWithDecoys, type PasswordVerifier, passwordVerifier } from './htpasswd.ts';

/** A check as the pool sends it: hashes as their htpasswd text, the password as the bytes sent. */
export interface HashingJob {
  id: number;
  password: Uint8Array;
  /** The user's own hash; absent for an unknown user. */
  own?: string;
  /** Hashes checked (answers ignored) when `own` does not match. */
  decoys: string[];
}

export type HashingAnswer = { id: number; matched: boolean } | { id: number; error: string };

/** Niceness of the hashing threads (0 is the event loop's; 19 the lowest priority). */
const HASHING_NICENESS = 10;

function verifier(hash: string): PasswordVerifier {
  const parsed = passwordVerifier(hash);
  if (!parsed) throw new Error('a hash the pool was given is not one gw can verify');
  return parsed;
}

function answer(job: HashingJob): HashingAnswer {
  const password = Buffer.from(job.password.buffer, job.password.byteOffset, job.password.byteLength);
  try {
    const matched = checkWithDecoys(
      password,
      job.own === undefined ? undefined : verifier(job.own),
      job.decoys.map(verifier),
    );
    return { id: job.id, matched };
  } catch (error) {
    return { id: job.id, error: (error as Error).message };
  } finally {
    password.fill(0);
  }
}

if (parentPort) {
  try {
    setPriority(0, HASHING_NICENESS);
  } catch {
    // Where a thread cannot lower its own priority, it hashes at the process's.
  }
  const port = parentPort;
  port.on('message', (job: HashingJob) => port.postMessage(answer(job)));
}
