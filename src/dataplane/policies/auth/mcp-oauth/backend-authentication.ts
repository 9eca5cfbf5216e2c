// The deprecated backend.mcp.authentication (MCPAuthentication) of a rule's MCP backends: the
// same JWT check as traffic.jwtAuthentication with mcp (issuer, audiences, remote key set, mode,
// the 401 pointing at the protected resource metadata) and the same MCP OAuth endpoints, plus
// the client secret gw adds to proxied token requests. It runs after the rule's traffic
// policies, when the request is about to go to the MCP backend — which is why the spec prefers
// jwtAuthentication.mcp, running before transformation and rate limiting. It is compiled from
// the rule's backend references and their effective backend policies, without looking inside
// the MCP backend itself. docs/policies/mcp-oauth.md.
import type { JWTAuthentication, MCPAuthentication } from '../../../../api/types/inbound-auth.ts';
import {
  type BackendObjectConfig,
  type BackendPolicyConfig,
  namespaceOfKey,
} from '../../../../contract/dataplane-config.ts';
import type { PolicyExchange } from '../../exchange.ts';
import { isProblem, type PolicyCompileContext, type PolicyProblem, type RequestStep } from '../../types.ts';
import { compileJwtAuthentication } from '../jwt.ts';
import { compileMcpOAuthEndpoint, type McpOAuthEndpoint } from './endpoint.ts';
import { compileChallenge } from './protected-resource.ts';
import { backendMcpSettings } from './settings.ts';

/** A backend reference of a rule as the compiler has it. */
export interface RuleBackend {
  /** "GwBackend ns/name" or "Service ns/name". */
  key: string;
  /** The backend (undefined when it is not in the configuration). */
  object: BackendObjectConfig | undefined;
  /** The effective backend policy of the reference. */
  policy: BackendPolicyConfig;
}

export interface McpBackendAuthentication {
  /** The JWT check, run after the rule's traffic policies. */
  step: RequestStep;
  /** The MCP OAuth endpoints of the rule's MCP URL. */
  endpoint: McpOAuthEndpoint;
}

const FIELD = 'backend.mcp.authentication';

/** The authentication of the rule's MCP backends, undefined when none has one. */
export function compileMcpBackendAuthentication(
  backends: readonly RuleBackend[],
  context: PolicyCompileContext,
): McpBackendAuthentication | PolicyProblem | undefined {
  const found: { key: string; value: MCPAuthentication }[] = [];
  for (const backend of backends) {
    // Only MCP backends: for others backend.mcp does not apply.
    if (backend.object?.kind !== 'GwBackend' || backend.object.spec.mcp === undefined) continue;
    const value = backend.policy.mcp?.authentication;
    if (value !== undefined) found.push({ key: backend.key, value });
  }
  if (found.length === 0) return undefined;
  const first = found[0]!;
  const same = JSON.stringify(first.value);
  if (found.some((entry) => JSON.stringify(entry.value) !== same))
    return {
      field: FIELD,
      message: `differs between the rule's MCP backends (${found.map((entry) => entry.key).join(', ')}); one rule takes one — or use traffic.jwtAuthentication.mcp`,
    };
  const namespace = namespaceOfKey(first.key);
  const backendContext: PolicyCompileContext = { ...context, namespace, path: FIELD };
  const where = (problem: PolicyProblem): PolicyProblem => ({
    field: problem.field,
    message: `(${first.key}) ${problem.message}`,
  });
  const settings = backendMcpSettings(first.value, backendContext, FIELD);
  if (isProblem(settings)) return where(settings);
  const jwt: JWTAuthentication = {
    mode: first.value.mode ?? 'Strict',
    providers: [{ issuer: settings.issuer, audiences: first.value.audiences, jwks: { remote: first.value.jwks } }],
    mcp: {
      resourceMetadata: first.value.resourceMetadata,
      provider: first.value.provider,
      clientId: first.value.clientId,
    },
  };
  const compiled = compileJwtAuthentication(jwt, backendContext);
  if (isProblem(compiled)) return where({ field: asBackendField(compiled.field), message: compiled.message });
  const check = compiled.request!;
  const endpoint = compileMcpOAuthEndpoint(settings, backendContext, FIELD);
  if (isProblem(endpoint)) return where(endpoint);
  const challenge = compileChallenge(settings);
  return {
    endpoint,
    step: (exchange: PolicyExchange) => {
      // As agentgateway: a traffic JWT policy has already checked and removed the token, so this
      // check cannot be made — refused rather than skipped.
      if (exchange.record.jwtClaims !== undefined) {
        exchange.record.error = `mcp authentication: the token was already checked and removed by traffic.jwtAuthentication; use its mcp field instead of ${FIELD}`;
        return {
          status: 401,
          headers: { 'www-authenticate': challenge(exchange) },
          body: 'MCP authentication cannot check a token another JWT policy consumed',
        };
      }
      return check(exchange);
    },
  };
}

/** A field of the JWT policy built from MCPAuthentication, named as MCPAuthentication names it. */
function asBackendField(field: string): string {
  return field
    .replace('.jwtAuthentication.providers[0].jwks.remote', '.jwks')
    .replace('.jwtAuthentication.providers[0]', '')
    .replace('.jwtAuthentication.mcp', '')
    .replace('.jwtAuthentication', '');
}
