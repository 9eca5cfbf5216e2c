// Family betaalpha: Azure OpenAI. It speaks OpenAI's formats, so nothing is translated beyond what
// alpha does (Messages requests become Chat Completions); what differs is where requests go and
// how the key is sent. The host is the resource endpoint (`<resource>.openai.azure.com`). With
// apiVersion `v1` (the default) or `preview`, requests go to the v1 API (/openai/v1/...; preview
// adds ?api-version=preview) and name the deployment in the body's model. With a dated version
// (2024-10-21, ...) chat completions and embeddings go to /openai/deployments/{deployment}/...,
// the Responses API and the model listing to /openai/responses and /openai/models, all with
// ?api-version=<version>. Realtime sessions (WebSocket) go to /openai/v1/realtime?model=<deployment>,
// or with a dated version to /openai/realtime?api-version=<version>&deployment=<deployment>.
// The deployment is the model override either way. Keys go in the
// `api-key` header (keyStyle); Entra ID tokens (backend auth beta) go as Bearer tokens.
import type { BetaAlphaConfig } from '../../../api/types/llm-provider.ts';
import { ProviderConfigError } from './errors.ts';
import type { FamilyAddress } from './family-address.ts';
import { type ConfiguredPath, plainPath } from './paths.ts';
import { ProviderPlanner } from './planner.ts';
import type { UpstreamFormat } from './types.ts';

/** The API version when the provider names none (the API's default). */
export const BETAALPHA_DEFAULT_API_VERSION = 'v1';

/** The versions served by the v1 API: `preview` is its preview surface. */
const V1_VERSIONS: ReadonlySet<string> = new Set(['v1', 'preview']);

// A deployment name is one path segment: letters, digits, "-", "_" and "." (not a dot segment).
const DEPLOYMENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

// A host name or an IP address, nothing else: no path, port, user or query may ride along.
const ENDPOINT_HOST = /^(?:[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.?|\[[0-9A-Fa-f:.]+\])$/;

/** `endpoint` without a scheme and trailing slashes, or why it is not a host. */
export function endpointHost(endpoint: string): string | ProviderConfigError {
  const host = endpoint
    .trim()
    .replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\//, '')
    .replace(/\/+$/, '');
  if (!ENDPOINT_HOST.test(host)) {
    return new ProviderConfigError(
      'betaalpha.endpoint',
      `must be a host such as my-resource.openai.azure.com (got "${endpoint}"); set a port with the provider's port and a path with its path`,
    );
  }
  return host.startsWith('[') ? host.slice(1, -1) : host;
}

/** The paths of each format Azure OpenAI serves, with the api-version query they carry. */
function azureRoutes(apiVersion: string, deployment: string | undefined): Map<UpstreamFormat, ConfiguredPath> {
  const versioned = (path: string): ConfiguredPath => ({ path, query: [['api-version', apiVersion]] });
  if (V1_VERSIONS.has(apiVersion)) {
    const v1 = (suffix: string): ConfiguredPath =>
      apiVersion === 'v1' ? plainPath(`/openai/v1${suffix}`) : versioned(`/openai/v1${suffix}`);
    // A Realtime session names its deployment in the query's `model`.
    const realtime = v1('/realtime');
    return new Map([
      ['completions', v1('/chat/completions')],
      ['responses', v1('/responses')],
      ['embeddings', v1('/embeddings')],
      ['models', v1('/models')],
      [
        'realtime',
        deployment === undefined
          ? realtime
          : { path: realtime.path, query: [...realtime.query, ['model', deployment]] },
      ],
    ]);
  }
  // A dated version: the deployment is in the path of chat completions and embeddings, and in the
  // `deployment` query parameter of a Realtime session (/openai/realtime).
  const scoped = `/openai/deployments/${deployment}`;
  return new Map([
    ['completions', versioned(`${scoped}/chat/completions`)],
    ['responses', versioned('/openai/responses')],
    ['embeddings', versioned(`${scoped}/embeddings`)],
    ['models', versioned('/openai/models')],
    [
      'realtime',
      {
        path: '/openai/realtime',
        query: [
          ['api-version', apiVersion],
          ['deployment', deployment!],
        ],
      },
    ],
  ]);
}

/** A configured `path` keeps its own query; the api-version is added when it has none. */
function withApiVersion(path: ConfiguredPath, apiVersion: string): ConfiguredPath {
  if (apiVersion === 'v1' || path.query.some(([name]) => name === 'api-version')) return path;
  return { path: path.path, query: [...path.query, ['api-version', apiVersion]] };
}

export function compileBetaAlpha(
  config: BetaAlphaConfig,
  address: FamilyAddress,
  name: string | undefined,
): ProviderPlanner | ProviderConfigError {
  if (address.pathPrefix !== undefined) {
    return new ProviderConfigError('pathPrefix', 'applies to the alpha and gamma families only; remove it');
  }
  const host = endpointHost(config.endpoint);
  if (host instanceof ProviderConfigError) return host;
  const apiVersion = config.apiVersion ?? BETAALPHA_DEFAULT_API_VERSION;
  if (apiVersion.trim() === '') return new ProviderConfigError('betaalpha.apiVersion', 'must not be empty');
  const deployment = config.deploymentName;
  if (deployment !== undefined && !DEPLOYMENT_NAME.test(deployment)) {
    return new ProviderConfigError(
      'betaalpha.deploymentName',
      `must be a deployment name (letters, digits, ".", "_" and "-"; got "${deployment}")`,
    );
  }
  if (deployment === undefined && !V1_VERSIONS.has(apiVersion)) {
    return new ProviderConfigError('betaalpha.deploymentName', `is required when apiVersion is "${apiVersion}"`);
  }
  const configured = address.path && withApiVersion(address.path, apiVersion);
  const routes =
    configured === undefined
      ? azureRoutes(apiVersion, deployment)
      : new Map<UpstreamFormat, ConfiguredPath>(
          (['completions', 'responses', 'embeddings', 'models', 'realtime'] as const).map((format) => [
            format,
            configured,
          ]),
        );
  return new ProviderPlanner({
    name,
    family: 'betaalpha',
    origin: address.origin(host),
    service: undefined,
    keyStyle: 'api-key',
    // The deployment is what Azure calls the model: the body names it (the v1 API, the Responses API).
    model: deployment,
    routes,
    // Passthrough and Detect requests go to the client's own path (and keep the client's query).
    forwardedPath: (clientPath) => configured ?? plainPath(clientPath),
    forwardedAnthropicVersion: false,
  });
}
