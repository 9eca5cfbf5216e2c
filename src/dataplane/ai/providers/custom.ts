// Family custom: a server that speaks the formats its configuration lists, each at its own path
// or the format's usual one, reached through a Service or an InferencePool (backendRef) or the
// provider's host and port.
// Rerank requests are forwarded as they are; a Realtime format makes the provider a WebSocket
// endpoint for Realtime sessions (realtime/session.ts).

import { INFERENCE_GROUP } from '../../../api/kinds/inference/inference-pool.ts';
import type { CustomProvider, ProviderFormat } from '../../../api/types/llm-provider.ts';
import type { ClientFormat } from './errors.ts';
import { ProviderConfigError } from './errors.ts';
import type { FamilyAddress } from './family-address.ts';
import { providerOrigin } from './origin.ts';
import { type ConfiguredPath, configuredPath, plainPath, prefixedClientPath } from './paths.ts';
import { type ProviderDefinition, ProviderPlanner, ROUTE_CLIENT_FORMAT } from './planner.ts';
import type { Origin, PoolResolver, ProviderService, ServiceResolver } from './types.ts';

/**
 * The usual path of each ProviderFormat (its client format is the route type's of the same name).
 * Rerank's is the OpenAI-compatible servers' (vLLM, Jina...); Cohere's own API takes /v2/rerank,
 * which the format's `path` says. Realtime's is the WebSocket endpoint of OpenAI's API.
 */
const USUAL_PATHS: Record<ProviderFormat, string> = {
  Completions: '/v1/chat/completions',
  Messages: '/v1/messages',
  Responses: '/v1/responses',
  Embeddings: '/v1/embeddings',
  GammaTokenCount: '/v1/messages/count_tokens',
  Rerank: '/v1/rerank',
  Realtime: '/v1/realtime',
};

/** An OpenAI-style server (any of these formats) is asked for its model list at /v1/models. */
const OPENAI_STYLE: readonly ClientFormat[] = ['completions', 'responses', 'embeddings'];
const MODELS_PATH = '/v1/models';

/** What compileProvider passes on: the provider's name, its namespace and how its Services resolve. */
interface CustomOptions {
  name?: string | undefined;
  namespace?: string | undefined;
  resolveService?: ServiceResolver | undefined;
  resolvePool?: PoolResolver | undefined;
}

function customTarget(
  config: CustomProvider,
  address: FamilyAddress,
  options: CustomOptions,
): { origin: Origin; service: ProviderService | undefined } | ProviderConfigError {
  const ref = config.backendRef;
  // A backendRef wins over host and port, as in agentgateway.
  if (ref !== undefined) {
    const kind = ref.kind ?? 'Service';
    if (kind === 'InferencePool' && ref.group === INFERENCE_GROUP) return poolTarget(config, ref.name, options);
    if ((ref.group ?? '') !== '' || kind !== 'Service') {
      return new ProviderConfigError(
        'custom.backendRef.kind',
        `${ref.group ? `${ref.group}/` : ''}${kind} is not a kind gw serves; refer to a Service, or to an InferencePool of group ${INFERENCE_GROUP}`,
      );
    }
    if (ref.port === undefined) return new ProviderConfigError('custom.backendRef.port', 'is required for a Service');
    const { namespace, resolveService } = options;
    if (namespace === undefined || resolveService === undefined) {
      return new ProviderConfigError(
        'custom.backendRef',
        "the provider's namespace and Services are needed to resolve it",
      );
    }
    // The Service's address in every mode (files, the embedded API server, a cluster): its spec.
    const destination = resolveService(ref.name, ref.port);
    if (typeof destination === 'string') {
      return new ProviderConfigError('custom.backendRef', `Service ${namespace}/${ref.name}: ${destination}`);
    }
    const service: ProviderService = { kind: 'Service', namespace, name: ref.name, port: ref.port, destination };
    const { protocol, host, port } = destination;
    return { origin: { protocol, host, port }, service };
  }
  if (address.host === undefined) return new ProviderConfigError('host', 'is required when custom has no backendRef');
  if (address.port === undefined) return new ProviderConfigError('port', 'is required when custom has no backendRef');
  return { origin: providerOrigin(address.host, address.port), service: undefined };
}

/**
 * An InferencePool: the member a request goes to is picked per request, so the origin only names
 * the pool (its Host is the member's when sent). A Realtime session is not a request a picker
 * sees, so a pool does not serve one.
 */
function poolTarget(
  config: CustomProvider,
  name: string,
  options: CustomOptions,
): { origin: Origin; service: ProviderService } | ProviderConfigError {
  const realtime = (config.formats ?? []).findIndex((entry) => entry.type === 'Realtime');
  if (realtime !== -1)
    return new ProviderConfigError(
      `custom.formats[${realtime}].type`,
      'Realtime is not served through an InferencePool (its endpoint picker chooses per HTTP request); refer to a Service',
    );
  const { namespace, resolvePool } = options;
  if (namespace === undefined || resolvePool === undefined)
    return new ProviderConfigError(
      'custom.backendRef',
      "the provider's namespace and InferencePools are needed to resolve it",
    );
  const pool = resolvePool(name);
  if (typeof pool === 'string')
    return new ProviderConfigError('custom.backendRef', `InferencePool ${namespace}/${name}: ${pool}`);
  return {
    origin: { protocol: 'http:', host: `${name}.${namespace}.inferencepool`, port: pool.port },
    service: { kind: 'InferencePool', namespace, name },
  };
}

/** A usual path under a GwModel baseURL's path prefix, which replaces its `/v1`. */
function withPrefix(usualPath: string, prefix: string | undefined): string {
  return prefixedClientPath(usualPath, prefix, '/v1');
}

export function compileCustom(
  config: CustomProvider,
  address: FamilyAddress,
  options: CustomOptions,
): ProviderPlanner | ProviderConfigError {
  const { name } = options;
  const target = customTarget(config, address, options);
  if (target instanceof ProviderConfigError) return target;

  const routes = new Map<ClientFormat, ConfiguredPath>();
  const formats = config.formats ?? [];
  for (const [index, entry] of formats.entries()) {
    const usualPath = USUAL_PATHS[entry.type];
    const format = ROUTE_CLIENT_FORMAT[entry.type]!;
    if (routes.has(format)) {
      return new ProviderConfigError(`custom.formats[${index}].type`, `${entry.type} is listed twice`);
    }
    // A format's own path beats the provider's path, which beats the format's usual path (under a
    // GwModel baseURL's path, which takes the place of its /v1).
    const path =
      entry.path === undefined
        ? (address.path ?? plainPath(withPrefix(usualPath, address.pathPrefix)))
        : configuredPath(entry.path, `custom.formats[${index}].path`);
    if (path instanceof ProviderConfigError) return path;
    routes.set(format, path);
  }
  if (routes.size === 0) {
    return new ProviderConfigError(
      'custom.formats',
      `lists no format; list the APIs the server speaks (${Object.keys(USUAL_PATHS).join(', ')})`,
    );
  }
  if (OPENAI_STYLE.some((format) => routes.has(format))) {
    routes.set('models', address.path ?? plainPath(withPrefix(MODELS_PATH, address.pathPrefix)));
  }
  const definition: ProviderDefinition = {
    name,
    family: 'custom',
    origin: target.origin,
    service: target.service,
    keyStyle: 'bearer',
    model: config.model,
    routes,
    forwardedPath: (clientPath) => address.path ?? plainPath(withPrefix(clientPath, address.pathPrefix)),
    forwardedAnthropicVersion: false,
  };
  return new ProviderPlanner(definition);
}
