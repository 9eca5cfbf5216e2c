// External processing (traffic.extProc): Envoy's ext_proc protocol. Each request that meets the
// policy opens one bidirectional Process stream to the processor: the request side runs here as
// the pipeline step (request-phase.ts), the response side in the response path of every backend
// kind before the head is written (response-phase.ts, proxy/response-path.ts), and the stream is
// half-closed when the exchange is done.
// docs/policies/ext-proc.md describes what gw sends and how it applies the answers.
import type { ExtProcOrConditional } from '../../../api/types/inbound-auth.ts';
import { interceptResponse } from '../../proxy/response-path.ts';
import { choose, compileChoice } from '../conditional.ts';
import type { PolicyExchange } from '../exchange.ts';
import { isProblem, type PolicyCompiler, type StepResult } from '../types.ts';
import { processRequest } from './request-phase.ts';
import { responseInterceptor } from './response-phase.ts';
import { ExtProcSession } from './session.ts';
import { compileSettings, type ExtProcSettings } from './settings.ts';

export const compileExtProc: PolicyCompiler<ExtProcOrConditional> = (value, context) => {
  const choice = compileChoice(value, value.conditional, `${context.path}.extProc`, (policy, field) =>
    compileSettings(policy, context, field),
  );
  if (isProblem(choice)) return choice;
  return {
    request: (exchange) => {
      const chosen = choose(choice, () => exchange.cel());
      return chosen ? runExtProc(chosen, exchange) : undefined;
    },
  };
};

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
    interceptResponse(exchange, responseInterceptor(session));
  else session.close();
  return undefined;
}
