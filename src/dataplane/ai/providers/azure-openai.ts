// The Azure OpenAI wire, shared by the two Azure families: betaalpha (an endpoint of the user's
// choosing) and beta (a resource named by resourceName and resourceType). Both speak OpenAI's
// formats at Azure's paths, so Messages requests become Chat Completions as for alpha. With apiVersion
// `v1` (the default) or `preview`, requests go to a v1 API base (`/openai/v1`, or a Foundry
// project's `/api/projects/{project}/openai/v1`; preview adds ?api-version=preview) and name the
// deployment in the body's model. With a dated version (2024-10-21, ...) an Azure OpenAI resource
// takes chat completions and embeddings at /openai/deployments/{deployment}/..., the Responses API
// and the model listing at /openai/responses and /openai/models, all with ?api-version=<version>.
// Realtime sessions (WebSocket) go to /openai/v1/realtime or, dated, /openai/realtime.
// Keys go in the `api-key` header (keyStyle); Entra ID tokens (backend auth beta) as Bearer tokens.
import { ProviderConfigError } from './errors.ts';
import type { FamilyAddress } from './family-address.ts';
import { type ConfiguredPath, plainPath } from './paths.ts';
import { ProviderPlanner } from './planner.ts';
import type { ProviderFamily, UpstreamFormat } from './types.ts';

/** The API version when the provider names none (the API's default). */
export const AZURE_DEFAULT_API_VERSION = 'v1';

/** The versions served by the v1 API: `preview` is its preview surface. */
const V1_VERSIONS: ReadonlySet<string> = new Set(['v1', 'preview']);

/** Whether `apiVersion` is served by the v1 API (no deployment in the path). */
export function isV1Version(apiVersion: string): boolean {
  return V1_VERSIONS.has(apiVersion);
}

// A deployment name is one path segment: letters, digits, "-", "_" and "." (not a dot segment).
const DEPLOYMENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** `value` unless it cannot be one path segment of Azure's (a deployment, a project), naming `field`. */
export function pathSegment(value: string, field: string, what: string): string | ProviderConfigError {
  if (DEPLOYMENT_NAME.test(value)) return value;
  return new ProviderConfigError(field, `must be ${what} (letters, digits, ".", "_" and "-"; got "${value}")`);
}

/** The OpenAI formats of an Azure OpenAI resource and the path below the v1 base of each. */
const RESOURCE_FORMATS: readonly (readonly [UpstreamFormat, string])[] = [
  ['completions', '/chat/completions'],
  ['responses', '/responses'],
  ['embeddings', '/embeddings'],
  ['models', '/models'],
];

/** `path` with the api-version query; v1 carries none. */
function versioned(path: string, apiVersion: string): ConfiguredPath {
  return apiVersion === 'v1' ? plainPath(path) : { path, query: [['api-version', apiVersion]] };
}

/** The formats at a v1 API base (`preview` adds its api-version). */
export function v1Routes(
  base: string,
  apiVersion: string,
  formats: readonly (readonly [UpstreamFormat, string])[] = RESOURCE_FORMATS,
): Map<UpstreamFormat, ConfiguredPath> {
  return new Map(formats.map(([format, suffix]) => [format, versioned(`${base}${suffix}`, apiVersion)]));
}

/**
 * The paths of each format an Azure OpenAI resource serves at `apiVersion` (a dated one needs the
 * deployment). A Realtime session (WebSocket) names its deployment in the query: `model` on the
 * v1 API (/openai/v1/realtime), `deployment` with a dated version (/openai/realtime).
 */
export function resourceRoutes(
  apiVersion: string,
  deployment: string | undefined,
): Map<UpstreamFormat, ConfiguredPath> {
  if (isV1Version(apiVersion)) {
    const routes = v1Routes('/openai/v1', apiVersion);
    const realtime = versioned('/openai/v1/realtime', apiVersion);
    routes.set(
      'realtime',
      deployment === undefined ? realtime : { path: realtime.path, query: [...realtime.query, ['model', deployment]] },
    );
    return routes;
  }
  // A dated version: the deployment is in the path of chat completions and embeddings.
  const scoped = `/openai/deployments/${deployment}`;
  return new Map([
    ['completions', versioned(`${scoped}/chat/completions`, apiVersion)],
    ['responses', versioned('/openai/responses', apiVersion)],
    ['embeddings', versioned(`${scoped}/embeddings`, apiVersion)],
    ['models', versioned('/openai/models', apiVersion)],
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

/** `apiVersion` unless it is empty, naming `field`. */
export function azureApiVersion(apiVersion: string | undefined, field: string): string | ProviderConfigError {
  const version = apiVersion ?? AZURE_DEFAULT_API_VERSION;
  return version.trim() === '' ? new ProviderConfigError(field, 'must not be empty') : version;
}

/** What sets one Azure provider apart: where it is, its version, its deployment and its paths. */
export interface AzureProvider {
  family: Extract<ProviderFamily, 'betaalpha' | 'beta'>;
  host: string;
  apiVersion: string;
  /** The deployment: the model override (the v1 API and the Responses API read it from the body). */
  deployment: string | undefined;
  routes: Map<UpstreamFormat, ConfiguredPath>;
}

/** The planner of an Azure provider, with the address overrides applied. */
export function azurePlanner(azure: AzureProvider, address: FamilyAddress, name: string | undefined): ProviderPlanner {
  const configured = address.path && withApiVersion(address.path, azure.apiVersion);
  const routes =
    configured === undefined
      ? azure.routes
      : new Map<UpstreamFormat, ConfiguredPath>([...azure.routes.keys()].map((format) => [format, configured]));
  return new ProviderPlanner({
    name,
    family: azure.family,
    origin: address.origin(azure.host),
    service: undefined,
    keyStyle: 'api-key',
    model: azure.deployment,
    routes,
    // Passthrough and Detect requests go to the client's own path (and keep the client's query).
    forwardedPath: (clientPath) => configured ?? plainPath(clientPath),
    forwardedAnthropicVersion: false,
    // The resource's host picks the Entra ID token scope, wherever `host` sends the requests.
    credentialHost: azure.host,
  });
}

/** `pathPrefix`, which the Azure families do not take: their paths are not below a /v1 base. */
export function refusePathPrefix(address: FamilyAddress): ProviderConfigError | undefined {
  return address.pathPrefix === undefined
    ? undefined
    : new ProviderConfigError('pathPrefix', 'applies to the alpha and gamma families only; remove it');
}
