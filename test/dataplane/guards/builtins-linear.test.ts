// The builtin detectors run in V8's backtracking engine (builtins.ts): each is written so that
// no position is tried more than a bounded number of ways. These inputs are built to make a
// backtracking pattern work hardest — long runs of what a detector accepts, broken just before
// it could match, at every word boundary — a mebibyte of each. A pattern with overlapping
// repeats would take minutes on them (quadratic or worse); the builtins take milliseconds.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BuiltIn } from '../../../src/api/types/ai.ts';
import { compileRegexGuard, RegexGuardConfigError } from '../../../src/dataplane/ai/guards/regex-guard.ts';

const MiB = 1024 * 1024;

/** `unit` repeated to a mebibyte. */
function fill(unit: string): string {
  return unit.repeat(Math.ceil(MiB / unit.length)).slice(0, MiB);
}

const HOSTILE: Record<BuiltIn, string[]> = {
  // Nineteen digits and more with single separators: every digit starts a candidate that runs to the limit.
  CreditCard: [fill('1 '), fill('1-'), fill(`${'1'.repeat(25)} `), fill('4111 1111 1111 111x ')],
  Ssn: [fill('123-45-678x '), fill('1-'), fill('123 45 123 45 ')],
  CaSin: [fill('123 456 78x '), fill('1 '), fill('123456789'.repeat(3))],
  PhoneNumber: [fill('+2 '), fill('+2 2'), fill(`+${'2'.repeat(20)} `), fill('(212) 555-12x '), fill('+1 +1 ')],
  Email: [fill('a.'), fill('a.a@'), fill('a@a.'), fill('a@a-a-'), fill('.@.')],
};

describe('builtin detectors on hostile input', () => {
  for (const [builtin, inputs] of Object.entries(HOSTILE) as Array<[BuiltIn, string[]]>) {
    it(`${builtin}: a mebibyte built against it is scanned in linear time`, () => {
      const guard = compileRegexGuard({ action: 'Mask', builtins: [builtin] }, 'ai.promptGuard.request[0].regex');
      assert.ok(!(guard instanceof RegexGuardConfigError));
      for (const input of inputs) {
        const started = performance.now();
        guard.scan(input);
        const elapsed = performance.now() - started;
        // Linear takes tens of milliseconds here; a quadratic scan of 2^20 characters, minutes.
        assert.ok(elapsed < 3000, `${builtin} on ${JSON.stringify(input.slice(0, 24))}...: ${elapsed.toFixed(0)} ms`);
      }
    });
  }
});
