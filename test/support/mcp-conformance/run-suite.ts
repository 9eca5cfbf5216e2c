// Runs every server scenario of @modelcontextprotocol/conformance (its CLI, `server --suite all`)
// against an MCP endpoint in one child process, and reads back each scenario's outcome: passed
// when none of its checks failed (warnings and notes do not fail a scenario, as in the CLI).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface ScenarioResult {
  scenario: string;
  passed: boolean;
  /** The checks that failed: "<check id>: <error message>". */
  failures: string[];
}

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

const SUMMARY_LINE = /^[✓✗] (\S+): (\d+) passed, (\d+) failed$/;
/** Output kept of the child for an error message (the suite prints every check). */
const OUTPUT_LIMIT = 1024 * 1024;

function conformanceCli(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('@modelcontextprotocol/conformance/package.json')), 'dist', 'index.js');
}

function failedChecks(outputDir: string, scenario: string): string[] {
  // The CLI writes server-<scenario>-<timestamp>/checks.json per scenario.
  const dir = readdirSync(outputDir).find(
    (name) => name.startsWith(`server-${scenario}-`) && /^\d{4}-/.test(name.slice(`server-${scenario}-`.length)),
  );
  if (dir === undefined) return ['the scenario wrote no checks'];
  const checks = JSON.parse(readFileSync(join(outputDir, dir, 'checks.json'), 'utf8')) as Check[];
  return checks
    .filter((check) => check.status === 'FAILURE')
    .map((check) => `${check.id}: ${check.errorMessage ?? 'failed'}`);
}

/** Every server scenario against `url`; rejects if the suite does not finish within `timeoutMs`. */
export async function runServerScenarios(url: URL, timeoutMs = 50_000): Promise<ScenarioResult[]> {
  const outputDir = mkdtempSync(join(tmpdir(), 'gw-conformance-'));
  try {
    // process.execPath: the Node running the tests, which is new enough for the suite (22+).
    const child = spawn(
      process.execPath,
      [conformanceCli(), 'server', '--url', url.href, '--suite', 'all', '--output-dir', outputDir],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    const keep = (chunk: Buffer) => {
      if (output.length < OUTPUT_LIMIT) output += chunk.toString('utf8');
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('close', (exitCode, exitSignal) => resolve([exitCode, exitSignal])),
    );
    clearTimeout(timer);
    // Exit code 1 means some scenario failed; anything else (a signal, a crash) is no result.
    if (signal !== null || (code !== 0 && code !== 1))
      throw new Error(`the conformance suite ended with ${signal ?? `code ${code}`}:\n${output.slice(-4000)}`);
    const summary = output.slice(output.lastIndexOf('=== SUMMARY ==='));
    const results: ScenarioResult[] = [];
    for (const line of summary.split('\n')) {
      const match = SUMMARY_LINE.exec(line.trim());
      if (!match) continue;
      const scenario = match[1]!;
      const passed = match[3] === '0';
      results.push({ scenario, passed, failures: passed ? [] : failedChecks(outputDir, scenario) });
    }
    if (results.length === 0) throw new Error(`the conformance suite printed no summary:\n${output.slice(-4000)}`);
    return results;
  } finally {
    rmSync(outputDir, { recursive: true, force: true });
  }
}
