// The thread the CEL playground evaluates in (cel-evaluation.ts starts one per evaluation and
// ends it at its deadline): gw's CEL engine with the request path's limits, against a recorded
// request's variables. Its answer is plain data: the value as a person reads it, or why not.
import { parentPort, workerData } from 'node:worker_threads';
import { compileExpression, ExpressionError } from '../../../dataplane/cel/expression.ts';
import { decodeVariables, displayCel, type RecordedVariables } from '../../../dataplane/telemetry/recorded-cel.ts';

export interface CelJob {
  expression: string;
  variables: RecordedVariables;
}

export type CelAnswer = { value: unknown } | { error: string };

/** Posted once the engine is loaded, just before the evaluation starts (the deadline starts then). */
export const READY = 'ready';

function evaluate(job: CelJob): CelAnswer {
  const expression = compileExpression(job.expression);
  if (expression instanceof ExpressionError) return { error: `does not compile: ${expression.message}` };
  try {
    return { value: displayCel(expression.evaluate(decodeVariables(job.variables))) };
  } catch (error) {
    return { error: (error as Error).message.split('\n')[0]! };
  }
}

parentPort?.postMessage(READY);
parentPort?.postMessage(evaluate(workerData as CelJob));
