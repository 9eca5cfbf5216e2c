// CEL header and body transformations (traffic.transformation), after agentgateway: a request
// Transform changes the request as it goes upstream (headers, `:path`, `:authority`, `:method`,
// the body), a response Transform the response as it starts (headers, `:status`; the body when
// the response path buffers it — see transformation-state.ts). In the conditional form the entry is
// chosen once, when the request reaches the policy; when no entry applies nothing changes.
// `metadata` entries are computed first and are visible to the other expressions (and to the
// policies after this one) as `metadata`; the response Transform sees the request's too.
import type { Transformation, TransformationOrConditional } from '../../../api/types/traffic.ts';
import { choose, compileChoice } from '../conditional.ts';
import {
  type CompiledPolicy,
  isProblem,
  type PolicyCompileContext,
  type PolicyCompiler,
  type PolicyProblem,
  type RequestStep,
} from '../types.ts';
import { type CompiledTransform, compileTransform, transformRequest } from './transform.ts';
import { addResponseTransform, type ResponseLayer, transformationMetadata } from './transformation-state.ts';

interface CompiledTransformation {
  request: CompiledTransform | undefined;
  response: CompiledTransform | undefined;
}

export const compileTransformation: PolicyCompiler<TransformationOrConditional> = (value, context) =>
  compileAt(value, context, 'route');

/**
 * A backend's transformation (BackendFull.transformation): the same, run when the request goes to
 * that backend; its response Transform runs before the route's (the backend is nearer the response).
 */
export const compileBackendTransformation: PolicyCompiler<TransformationOrConditional> = (value, context) =>
  compileAt(value, context, 'backend');

function compileAt(
  value: TransformationOrConditional,
  context: PolicyCompileContext,
  layer: ResponseLayer,
): CompiledPolicy | PolicyProblem {
  const choice = compileChoice(
    value as Transformation,
    value.conditional,
    `${context.path}.transformation`,
    compileOne,
  );
  if (isProblem(choice)) return choice;
  const step: RequestStep = (exchange) => {
    const transformation = choose(choice, () => exchange.cel());
    if (!transformation) return undefined;
    if (transformation.response) addResponseTransform(exchange, transformation.response, layer);
    if (transformation.request)
      return transformRequest(transformation.request, exchange, transformationMetadata(exchange));
    return undefined;
  };
  return { request: step };
}

function compileOne(policy: Transformation, field: string): CompiledTransformation | PolicyProblem {
  const request = policy.request ? compileTransform(policy.request, 'request', `${field}.request`) : undefined;
  if (isProblem(request)) return request;
  const response = policy.response ? compileTransform(policy.response, 'response', `${field}.response`) : undefined;
  if (isProblem(response)) return response;
  return { request, response };
}
