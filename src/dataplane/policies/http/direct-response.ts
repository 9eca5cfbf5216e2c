// Answers without calling a backend (traffic.directResponse). The body is the fixed `body`, or
// `bodyExpression` evaluated per request (strings and bytes written as they are, other values as
// JSON; `request.body` reads the request body). Header values are CEL; a header whose expression
// fails or gives no usable value is left out. No Content-Type is added: set one in `headers`.
// In the conditional form the first entry whose condition holds answers; when none does the
// request goes on to the backend. A bodyExpression that fails answers 500 (agentgateway
// answers a failed direct response 500 too) with a plain-text reason that names no value.
import type { DirectResponse, DirectResponseOrConditional } from '../../../api/types/traffic.ts';
import type { Expression } from '../../cel/expression.ts';
import { compileField } from '../cel-field.ts';
import { choose, compileChoice } from '../conditional.ts';
import type { PolicyExchange } from '../exchange.ts';
import { isProblem, type LocalResponse, type PolicyCompiler, type PolicyProblem } from '../types.ts';
import { bodyBytes, evaluateHeaderValue, readsBody, withVariables } from './cel-values.ts';
import { requestBody } from './request-body.ts';

interface CompiledDirectResponse {
  status: number;
  /** The fixed body, or undefined for none or a bodyExpression. */
  body: Buffer | undefined;
  bodyExpression: Expression | undefined;
  headers: { name: string; value: Expression }[];
  /** Whether an expression reads request.body, which is then read first. */
  readsRequestBody: boolean;
}

/** Framing headers are gw's to set from the body it sends. */
const FRAMING_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection']);

/** Statuses whose responses carry no body (RFC 9110). */
const NO_BODY = new Set([204, 205, 304]);

export const compileDirectResponse: PolicyCompiler<DirectResponseOrConditional> = (value, context) => {
  const choice = compileChoice(
    value as DirectResponse,
    value.conditional,
    `${context.path}.directResponse`,
    compileOne,
  );
  if (isProblem(choice)) return choice;
  return {
    request: (exchange) => {
      const response = choose(choice, () => exchange.cel());
      return response ? answer(response, exchange) : undefined;
    },
  };
};

function compileOne(policy: DirectResponse, field: string): CompiledDirectResponse | PolicyProblem {
  let bodyExpression: Expression | undefined;
  const sources: string[] = [];
  if (policy.bodyExpression !== undefined) {
    const compiled = compileField(policy.bodyExpression, `${field}.bodyExpression`);
    if (isProblem(compiled)) return compiled;
    bodyExpression = compiled;
    sources.push(policy.bodyExpression);
  }
  const headers: CompiledDirectResponse['headers'] = [];
  for (const [index, header] of (policy.headers ?? []).entries()) {
    if (FRAMING_HEADERS.has(header.name.toLowerCase()))
      return {
        field: `${field}.headers[${index}].name`,
        message: `${header.name} is set by gw from the body it sends`,
      };
    const compiled = compileField(header.value, `${field}.headers[${index}].value`);
    if (isProblem(compiled)) return compiled;
    headers.push({ name: header.name.toLowerCase(), value: compiled });
    sources.push(header.value);
  }
  return {
    status: policy.status,
    body: policy.body !== undefined ? Buffer.from(policy.body, 'utf8') : undefined,
    bodyExpression,
    headers,
    readsRequestBody: sources.some((source) => readsBody(source, 'request')),
  };
}

async function answer(response: CompiledDirectResponse, exchange: PolicyExchange): Promise<LocalResponse> {
  let variables = exchange.cel();
  if (response.readsRequestBody) {
    const body = await requestBody(exchange);
    if (!Buffer.isBuffer(body)) return body;
    variables = withVariables(variables, { request: { ...(variables.request as object), body } });
  }
  let body = response.body;
  if (response.bodyExpression) {
    try {
      body = bodyBytes(response.bodyExpression.evaluate(variables));
    } catch {
      return { status: 500, body: 'the direct response bodyExpression failed', own: 'refusal' };
    }
  }
  const headers: Record<string, string> = {};
  for (const header of response.headers) {
    const value = evaluateHeaderValue(header.value, variables);
    if (value !== undefined) headers[header.name] = value;
  }
  return { status: response.status, headers, body: NO_BODY.has(response.status) ? undefined : body };
}
