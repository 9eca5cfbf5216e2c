// A test that needs a program of the machine's (openssl, kubectl, nginx, perl, an older Node)
// skips where it is missing, and says so loudly: a line on standard error when the file loads,
// besides the skip reason in the test report. In CI (the CI variable set, as .ci/run is run) a
// missing tool is a failure instead, since .ci/run installs every tool the tests use: a CI run that
// quietly tested less than the suite would look green.
import { test } from 'node:test';

const inCi = ['1', 'true'].includes((process.env.CI ?? '').toLowerCase());

/**
 * The skip option for tests that need `tool`: false when `problem` is undefined (the tool is
 * there), else the reason to skip with. Where the tool is missing, a line says so on standard
 * error, and in CI a test named for the tool fails.
 */
export function skipWithoutTool(tool: string, problem: string | undefined): string | false {
  if (problem === undefined) return false;
  const reason = `${tool} is missing: ${problem}`;
  process.stderr.write(`\n*** SKIPPED (${tool} missing): ${problem} ***\n\n`);
  if (inCi) {
    test(`${tool} is installed (CI installs every tool the tests use: .ci/run)`, () => {
      throw new Error(`${reason}; .ci/run should have installed it`);
    });
  }
  return reason;
}
