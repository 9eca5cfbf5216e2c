// What the commands share in reading their arguments: an unknown option gets the closest known one
// suggested, and --help/-h is recognised before a command reads anything else.
import { didYouMean } from '../util/did-you-mean.ts';

/** The message for a parseArgs error, with "did you mean --x?" for an unknown option. */
export function argsErrorText(error: unknown, options: Readonly<Record<string, unknown>>): string {
  const message = (error as Error).message;
  const unknown = (error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && /'(-[^']*)'/.exec(message);
  if (!unknown) return message;
  const given = unknown[1]!;
  const names = Object.keys(options).map((name) => `--${name}`);
  const hint = didYouMean(given.split('=')[0]!, names);
  return `unknown option ${given}${hint ? ` (${hint})` : ''}`;
}

/** Whether the arguments ask for help: --help or -h before any "--". */
export function asksForHelp(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === '--') return false;
    if (arg === '--help' || arg === '-h') return true;
  }
  return false;
}
