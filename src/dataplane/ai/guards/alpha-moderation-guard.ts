// The alphaModeration prompt guard (AlphaModeration: model, policies): the request's texts —
// every message's, system, user, assistant and tool results alike — go to OpenAI's moderations
// API in one call (`POST /v1/moderations`, `{"model", "input": [texts]}`), and a flagged result
// rejects the request with the guard's CustomResponse; the access log names the flagged
// categories. The service is https://api.openai.com unless OPENAI_BASE_URL (the OpenAI SDKs'
// variable, read when the configuration compiles) names another base URL (decision 0028). Like
// agentgateway's, the guard has no failure mode: a call that fails refuses the request (503).
import type { AlphaModeration } from '../../../api/types/ai.ts';
import { isServiceEndpointProblem, serviceEndpoint } from '../../upstream/service-endpoint.ts';
import { type Guard, type GuardCall, type GuardCompiler, GuardFailure, type GuardVerdict } from './guard.ts';
import { DEFAULT_MODERATION_MODEL, readModerationResults } from './moderation-results.ts';
import { compileGuardService, type GuardService } from './service-call.ts';

/** The environment variable naming another OpenAI base URL (the OpenAI SDKs' convention). */
export const OPENAI_BASE_URL_ENV = 'OPENAI_BASE_URL';

/** OpenAI's API, as the SDKs name their default base URL. */
export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export const alphaModerationGuard: GuardCompiler<AlphaModeration> = (config, path, input) => {
  const endpoint = serviceEndpoint(OPENAI_DEFAULT_BASE_URL, [OPENAI_BASE_URL_ENV]);
  if (isServiceEndpointProblem(endpoint)) return { path, message: endpoint.message };
  const service = compileGuardService(
    {
      name: 'OpenAI moderation',
      destination: endpoint.destination,
      basePath: endpoint.basePath,
      policies: config.policies,
      path,
      keyStyle: 'bearer',
    },
    input,
  );
  if ('path' in service) return service;
  return new AlphaModerationGuard(service, config.model ?? DEFAULT_MODERATION_MODEL);
};

class AlphaModerationGuard implements Guard {
  readonly kind = 'alphaModeration';
  readonly failureMode = 'FailClosed';
  readonly #service: GuardService;
  readonly #model: string;

  constructor(service: GuardService, model: string) {
    this.#service = service;
    this.#model = model;
  }

  async check(call: GuardCall): Promise<GuardVerdict> {
    const input = call.texts.map((each) => each.text).filter((text) => text.length > 0);
    // Nothing to moderate (a request of images only): nothing to send.
    if (input.length === 0) return { action: 'pass' };
    const answer = await this.#service.post({
      path: '/moderations',
      body: { model: this.#model, input },
      incoming: { headers: call.headers, variables: call.variables },
      signal: call.signal,
    });
    const verdict = readModerationResults((answer as { results?: unknown } | null)?.results);
    if (verdict === undefined || (answer as { results: unknown[] }).results.length !== input.length)
      throw new GuardFailure(`${this.#service.name} answered without a result for each text`);
    if (!verdict.flagged) return { action: 'pass' };
    return { action: 'reject', matched: verdict.categories };
  }
}
