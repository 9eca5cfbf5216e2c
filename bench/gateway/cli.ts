// How a benchmark script runs: --help prints its usage; options it cannot parse print the usage
// and exit 2; on Ctrl-C (SIGINT, SIGTERM) or a crash, every process it started is stopped first.
import { stopAllChildren } from './child-process.ts';

/**
 * Parses the command line with `parse` and runs `main`, whose result is the exit code.
 * `onInterrupt` runs first when the run is interrupted (before the children are stopped).
 */
export function runBench<Options>(
  usage: string,
  parse: (args: string[]) => Options,
  main: (options: Options) => Promise<number>,
  onInterrupt: () => void = () => {},
): void {
  const interrupt = () => {
    onInterrupt();
    process.stderr.write('interrupted: stopping every process the benchmark started\n');
    stopAllChildren().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);

  const start = async (): Promise<number> => {
    if (process.argv.includes('--help') || process.argv.includes('-h')) {
      process.stdout.write(usage);
      return 0;
    }
    let options: Options;
    try {
      options = parse(process.argv.slice(2));
    } catch (error) {
      process.stderr.write(`${(error as Error).message}\n\n${usage}`);
      return 2;
    }
    return main(options);
  };
  start().then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      stopAllChildren().finally(() => process.exit(1));
    },
  );
}
