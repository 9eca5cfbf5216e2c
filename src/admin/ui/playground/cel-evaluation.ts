// The CEL playground's evaluation: an expression typed in the browser against a recorded
// request's variables (recorded-cel.ts), with gw's CEL engine and the request path's structural
// limits. CEL has no loops but its macros nest, so an expression of a few hundred characters can
// still take minutes; each evaluation therefore runs in a thread of its own (cel-thread.ts) with
// a deadline and a memory bound, and the thread is ended when either is reached. Few run at once.
import { Worker } from 'node:worker_threads';
import type { RecordedVariables } from '../../../dataplane/telemetry/recorded-cel.ts';
import { siblingModule } from '../../../util/sibling-module.ts';
import { type CelAnswer, type CelJob, READY } from './cel-thread.ts';

/** Longest expression taken (the request path's limits bound its AST further). */
export const MAX_EXPRESSION_LENGTH = 4096;
/** An evaluation still running after this is ended (counted from the thread's engine being loaded). */
export const CEL_DEADLINE_MS = 1000;
/** A thread that has not loaded the engine after this is ended (a machine too busy). */
const STARTUP_TIMEOUT_MS = 10_000;
/** Evaluations running at once; one more is refused. */
export const MAX_CONCURRENT_EVALUATIONS = 2;

const THREAD_FILE = siblingModule(import.meta.url, 'cel-thread');
const THREAD_LIMITS = { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 };

let running = 0;

export async function evaluateCel(expression: string, variables: RecordedVariables): Promise<CelAnswer> {
  if (expression.trim() === '') return { error: 'the expression is empty' };
  if (expression.length > MAX_EXPRESSION_LENGTH)
    return { error: `the expression is longer than ${MAX_EXPRESSION_LENGTH} characters` };
  if (running >= MAX_CONCURRENT_EVALUATIONS)
    return { error: `${MAX_CONCURRENT_EVALUATIONS} evaluations are running already; try again when they end` };
  running++;
  try {
    const job: CelJob = { expression, variables };
    const worker = new Worker(THREAD_FILE, { workerData: job, resourceLimits: THREAD_LIMITS });
    return await new Promise<CelAnswer>((resolve) => {
      const stopAfter = (ms: number, error: string) =>
        setTimeout(() => {
          resolve({ error });
          void worker.terminate();
        }, ms);
      let timer = stopAfter(STARTUP_TIMEOUT_MS, 'the evaluation could not start: the machine is too busy');
      const done = (answer: CelAnswer) => {
        clearTimeout(timer);
        resolve(answer);
        void worker.terminate();
      };
      worker.on('message', (message: CelAnswer | typeof READY) => {
        if (message !== READY) return done(message);
        clearTimeout(timer);
        timer = stopAfter(CEL_DEADLINE_MS, `the evaluation took longer than ${CEL_DEADLINE_MS} ms and was stopped`);
      });
      worker.once('error', (error) =>
        done({
          error:
            (error as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY'
              ? 'the evaluation used more memory than allowed and was stopped'
              : error.message,
        }),
      );
      worker.once('exit', () => done({ error: 'the evaluation ended without an answer' }));
    });
  } finally {
    running--;
  }
}
