// An AI provider's own request policies (extAuth, transformation: a NamedLLMProvider's policies,
// a GwPolicy naming it by sectionName) on one attempt (decision 0045): they check and change a
// copy of the request as the backend received it — a Subrequest of its policy exchange — so one
// provider's changes never reach another provider's attempt, and what they set for the response
// is dropped with the attempt when it fails over.
import type { RoutedRequest } from '../backends/backend.ts';
import type { Subrequest } from '../policies/exchange.ts';
import { type NamedStep, runSteps } from '../policies/pipeline.ts';
import { llmAnswers } from './llm-answers.ts';
import type { ClientFormat } from './providers/index.ts';

/** One provider attempt's request when the provider has request policies of its own. */
export interface ProviderSubrequest {
  /** The request as the attempt sees it: its own path, query, headers and policy state. */
  routed: RoutedRequest;
  /** Abandoned when the attempt fails over: what its policies set for the response goes with it. */
  subrequest: Subrequest;
}

/**
 * Runs `steps` on a copy of the routed request whose body is `body`. Answers the client itself
 * (in its API `format`) and returns undefined when a policy answers (an authorization refusal).
 */
export async function providerSubrequest(
  routed: RoutedRequest,
  steps: readonly NamedStep[],
  body: Buffer,
  format: ClientFormat,
): Promise<ProviderSubrequest | undefined> {
  const parent = routed.exchange;
  // The request handler gives a request an exchange whenever its backend's providers have policies.
  if (parent === undefined) throw new Error("a provider's request policies need the request's policy exchange");
  const forward = { path: routed.forward.path, query: routed.forward.query, headers: { ...routed.forward.headers } };
  const subrequest = parent.fork(forward, body, parent.method);
  const answer = await runSteps(steps, subrequest);
  if (answer) {
    llmAnswers(format).local(routed.res, answer);
    return undefined;
  }
  return { routed: { ...routed, forward: subrequest.forward, exchange: subrequest }, subrequest };
}
