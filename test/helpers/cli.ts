// Runs the gw command in-process with captured output (and optional standard input).
import { main } from '../../src/cli/main.ts';

export async function runGw(args: string[], stdin = ''): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    readStdin: () => stdin,
  });
  return { code, stdout, stderr };
}
