// External processing (traffic.extProc): Envoy's ext_proc protocol. Each request that meets the
// policy opens one bidirectional Process stream to the processor: the request side runs here as
// the pipeline step (request-phase.ts), the response side in the HTTP forwarder before the head
// is written (response-phase.ts), and the stream is half-closed when the exchange is done.
// docs/policies/ext-proc.md describes what gw sends and how it applies the answers.
import type { ExtProcOrConditional } from '../../../api/types/inbound-auth.ts';
import { compileExpression, type Expression, ExpressionError } from '../../cel/expression.ts';
import { interceptResponse } from '../../proxy/http-forward.ts';
import type { PolicyExchange } from '../exchange.ts';
import { isProblem, type PolicyCompiler, type StepResult } from '../types.ts';
import { processRequest } from './request-phase.ts';
import { responseInterceptor } from './response-phase.ts';
import { ExtProcSession } from './session.ts';
import { compileSettings, type ExtProcSettings } from './settings.ts';

interface ConditionalEntry {
  /** Unset on the last entry: it applies when no earlier condition held. */
  condition: Expression | undefined;
  settings: ExtProcSettings;
}

export const compileExtProc: PolicyCompiler<ExtProcOrConditional> = (value, context) => {
  const field = `${context.path}.extProc`;
  if (!value.conditional) {
    const settings = compileSettings(value, context, field);
    if (isProblem(settings)) return settings;
    return { request: (exchange) => runExtProc(settings, exchange) };
  }
  const entries: ConditionalEntry[] = [];
  for (const [index, entry] of value.conditional.entries()) {
    const where = `${field}.conditional[${index}]`;
    let condition: Expression | undefined;
    if (entry.condition !== undefined) {
      const compiled = compileExpression(entry.condition);
      if (compiled instanceof ExpressionError)
        return { field: `${where}.condition`, message: `is not valid CEL: ${compiled.message}` };
      condition = compiled;
    }
    const settings = compileSettings(entry.policy, context, `${where}.policy`);
    if (isProblem(settings)) return settings;
    entries.push({ condition, settings });
  }
  return {
    request: (exchange) => {
      const chosen = choose(entries, exchange);
      return chosen ? runExtProc(chosen, exchange) : undefined;
    },
  };
};

/** The first entry whose condition holds (an expression that fails does not hold). */
function choose(entries: readonly ConditionalEntry[], exchange: PolicyExchange): ExtProcSettings | undefined {
  for (const entry of entries) {
    if (!entry.condition) return entry.settings;
    try {
      if (entry.condition.evaluate(exchange.cel()) === true) return entry.settings;
    } catch {
      // a failing condition selects nothing
    }
  }
  return undefined;
}

async function runExtProc(settings: ExtProcSettings, exchange: PolicyExchange): Promise<StepResult> {
  const session = new ExtProcSession(settings, exchange);
  exchange.onDone(() => session.close());
  const result = await processRequest(session);
  if (result.kind === 'answer') {
    session.close();
    return result.response;
  }
  const modes = session.modes;
  if (result.kind === 'continue' && (modes.responseHeaders === 'Send' || modes.responseBody !== 'None'))
    interceptResponse(exchange.res, responseInterceptor(session));
  else session.close();
  return undefined;
}
