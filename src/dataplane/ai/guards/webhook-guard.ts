// The webhook prompt guard (Webhook: backendRef, headers, forwardHeaderMatches, failureMode): a
// service of the user's that reads one side's texts and says pass, mask or reject
// (webhook-protocol.ts). It is named by a backendRef to a Service or a static GwBackend, whose
// tcp, tls, http and auth policies apply to the call; it is called through service-call.ts (a
// deadline, a bounded answer, every failure a GuardFailure that failureMode turns into a 503,
// FailClosed, or a pass, FailOpen). The call carries the client's headers that
// forwardHeaderMatches select, then the CEL-computed `headers` over them.
import type { HTTPHeaderMatch } from '../../../api/kinds/gateway-api/http-route.ts';
import type { Webhook } from '../../../api/types/ai.ts';
import { fieldNamespace } from '../../../contract/dataplane-config.ts';
import { TOKEN } from '../../../util/http-field-syntax.ts';
import type { Expression } from '../../cel/expression.ts';
import { compileField } from '../../policies/cel-field.ts';
import { endpointBackendPolicy, resolveEndpoint } from '../../policies/endpoint.ts';
import { evaluateHeaderValue } from '../../policies/http/cel-values.ts';
import { isProblem } from '../../policies/types.ts';
import { compileFullMatch } from '../../routing/regex.ts';
import { FRAMING } from '../../upstream/http1/request-head.ts';
import type { Guard, GuardCall, GuardCompiler, GuardConfigProblem, GuardVerdict } from './guard.ts';
import { compileGuardService, type GuardService, type GuardServicePolicies } from './service-call.ts';
import { WEBHOOK_PATHS, webhookRequestBody, webhookVerdict } from './webhook-protocol.ts';

/** The GwBackend policies a webhook call applies; a GwBackend setting others is refused (resolveEndpoint). */
const APPLIED_POLICIES = ['tcp', 'tls', 'http', 'tunnel', 'auth'] as const;

/**
 * Headers gw writes on the call itself (its body's type and length, the connection's own): a
 * webhook's headers or forwardHeaderMatches naming one are refused rather than dropped.
 */
const GW_SET_HEADERS: ReadonlySet<string> = new Set(['content-type', 'host', ...FRAMING]);

/** A client header forwarded when one of its values matches. */
interface ForwardedHeader {
  readonly name: string;
  readonly matches: (value: string) => boolean;
}

export const webhookGuard: GuardCompiler<Webhook> = (config, path, input) => {
  const scope = {
    backends: input.context.backends,
    namespace: fieldNamespace(input.namespaces, 'ai', input.namespace),
  };
  const reference = { backendRef: config.backendRef };
  const endpoint = resolveEndpoint(reference, scope, path, APPLIED_POLICIES);
  if (isProblem(endpoint)) return { path: endpoint.field, message: endpoint.message };
  const policies = endpointBackendPolicy(reference, scope) as GuardServicePolicies | undefined;
  const computed = computedHeaders(config.headers ?? {}, `${path}.headers`);
  if (!Array.isArray(computed)) return computed;
  const forwarded = forwardedHeaders(config.forwardHeaderMatches ?? [], `${path}.forwardHeaderMatches`);
  if (!Array.isArray(forwarded)) return forwarded;
  const service = compileGuardService(
    {
      name: `the webhook guard (${endpoint.name})`,
      destination: {
        protocol: endpoint.tls || policies?.tls !== undefined ? 'https:' : 'http:',
        host: endpoint.host,
        port: endpoint.port,
        ...(endpoint.socketPath ? { socketPath: endpoint.socketPath } : {}),
        ...(endpoint.inferredVersion ? { inferredVersion: endpoint.inferredVersion } : {}),
      },
      basePath: endpoint.basePath,
      policies,
      path,
    },
    // The GwBackend's policies are its own: their Secrets resolve in its namespace.
    { namespace: config.backendRef.namespace ?? scope.namespace, context: input.context },
  );
  if ('path' in service) {
    // Its problems name the GwBackend's policies, which the webhook reaches through its backendRef.
    const policy = service.path.slice(path.length + 1);
    return { path: `${path}.backendRef`, message: `${endpoint.name} ${policy}: ${service.message}` };
  }
  return new WebhookGuard(service, computed, forwarded, config.failureMode ?? 'FailClosed');
};

function computedHeaders(
  headers: Record<string, string>,
  path: string,
): (readonly [string, Expression])[] | GuardConfigProblem {
  const out: (readonly [string, Expression])[] = [];
  for (const [name, source] of Object.entries(headers)) {
    const problem = unsettableHeader(name);
    if (problem !== undefined) return { path: `${path}.${name}`, message: problem };
    const expression = compileField(source, `${path}.${name}`);
    if (isProblem(expression)) return { path: expression.field, message: expression.message };
    out.push([name.toLowerCase(), expression]);
  }
  return out;
}

function forwardedHeaders(matches: readonly HTTPHeaderMatch[], path: string): ForwardedHeader[] | GuardConfigProblem {
  const out: ForwardedHeader[] = [];
  for (const [index, match] of matches.entries()) {
    const problem = unsettableHeader(match.name);
    if (problem !== undefined) return { path: `${path}[${index}].name`, message: problem };
    const name = match.name.toLowerCase();
    if ((match.type ?? 'Exact') === 'Exact') {
      out.push({ name, matches: (value) => value === match.value });
      continue;
    }
    const regex = compileFullMatch(match.value);
    if (regex instanceof Error)
      return { path: `${path}[${index}].value`, message: `is not a valid regular expression: ${regex.message}` };
    out.push({ name, matches: (value) => regex.test(value) });
  }
  return out;
}

/** Why gw cannot put a header of this name on the call, or undefined when it can. */
function unsettableHeader(name: string): string | undefined {
  if (!TOKEN.test(name))
    return `"${name}" is not an HTTP header name; gw sets header fields on the webhook call (pseudo-headers such as :path are not supported: the paths are /request and /response).`;
  if (GW_SET_HEADERS.has(name.toLowerCase()))
    return `gw writes ${name.toLowerCase()} on the webhook call itself (the JSON body's, or the connection's); remove it.`;
  return undefined;
}

class WebhookGuard implements Guard {
  readonly kind = 'webhook';
  readonly ownRejectionAnswer = true;
  readonly failureMode: 'FailClosed' | 'FailOpen';
  readonly #service: GuardService;
  readonly #computed: readonly (readonly [string, Expression])[];
  readonly #forwarded: readonly ForwardedHeader[];

  constructor(
    service: GuardService,
    computed: readonly (readonly [string, Expression])[],
    forwarded: readonly ForwardedHeader[],
    failureMode: 'FailClosed' | 'FailOpen',
  ) {
    this.#service = service;
    this.#computed = computed;
    this.#forwarded = forwarded;
    this.failureMode = failureMode;
  }

  async check(call: GuardCall): Promise<GuardVerdict> {
    const answer = await this.#service.post({
      path: WEBHOOK_PATHS[call.side],
      body: webhookRequestBody(call.side, call.texts),
      headers: this.#headers(call),
      incoming: { headers: call.headers, variables: call.variables },
      signal: call.signal,
    });
    return webhookVerdict(answer, call.side, call.texts, this.#service.name);
  }

  /** The client's headers forwardHeaderMatches select (every value, when one matches), then the computed ones. */
  #headers(call: GuardCall): Record<string, string | string[]> {
    const headers: Record<string, string | string[]> = {};
    for (const { name, matches } of this.#forwarded) {
      const value = call.headers[name];
      if (value === undefined || headers[name] !== undefined) continue;
      const values = Array.isArray(value) ? value : [value];
      if (values.some(matches)) headers[name] = values.length === 1 ? values[0]! : values;
    }
    // A computed header replaces a forwarded one; an expression that fails (or gives no header
    // value) leaves the header off the call.
    for (const [name, expression] of this.#computed) {
      const value = evaluateHeaderValue(expression, call.variables);
      if (value === undefined) delete headers[name];
      else headers[name] = value;
    }
    return headers;
  }
}
