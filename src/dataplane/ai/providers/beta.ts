// Family beta: Azure AI resources, named rather than addressed (docs/decisions/0022-azure-ai-foundry.md).
// resourceType selects the host: Alpha is an Azure OpenAI resource, `<resourceName>.openai.azure.com`,
// served exactly as betaalpha serves its endpoint (the `model` override is the deployment, required
// in the path with a dated apiVersion); Omega is an Azure AI Foundry resource,
// `<resourceName>.services.ai.azure.com`, whose project `projectName` serves the v1 API at
// /api/projects/{projectName}/openai/v1: Chat Completions, Responses and Embeddings (Messages
// translated to Chat Completions). Its Claude deployments (a model named claude*) take only the
// Anthropic Messages API, at /anthropic/v1/messages (other chat formats translated to it). Keys go
// in `api-key`; with no backend auth an Entra ID token of gw's environment is sent (endpoint.ts),
// its scope picked by the resource's host (auth/backend/beta.ts).
import type { BetaConfig, BetaSettings } from '../../../api/types/llm-provider.ts';
import { modelProviderLabel } from '../../../api/vendors.ts';
import {
  AZURE_DEFAULT_API_VERSION,
  azureApiVersion,
  azurePlanner,
  isV1Version,
  pathSegment,
  refusePathPrefix,
  resourceRoutes,
  v1Routes,
} from './azure-openai.ts';
import { ModelSwitchedProvider } from './by-model.ts';
import { ProviderConfigError } from './errors.ts';
import type { FamilyAddress } from './family-address.ts';
import { type ConfiguredPath, plainPath } from './paths.ts';
import type { CompiledProvider, UpstreamFormat } from './types.ts';

/** The host suffix of each resource type. */
const BETA_HOST_SUFFIXES = { Alpha: 'openai.azure.com', Omega: 'services.ai.azure.com' } as const;

// An Azure resource name is a DNS label (its custom subdomain): letters, digits and inner hyphens.
const RESOURCE_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** What a Foundry project serves of the v1 API (its model listing is the resource's, not served here). */
const PROJECT_FORMATS: readonly (readonly [UpstreamFormat, string])[] = [
  ['completions', '/chat/completions'],
  ['responses', '/responses'],
  ['embeddings', '/embeddings'],
];

/** Where a Foundry resource serves its Claude deployments: the Anthropic Messages API. */
const CLAUDE_ROUTES: readonly [UpstreamFormat, ConfiguredPath][] = [
  ['messages', plainPath('/anthropic/v1/messages')],
  ['count_tokens', plainPath('/anthropic/v1/messages/count_tokens')],
];

/** A Claude deployment, by agentgateway's rule: the deployment (model) name starts with "claude". */
function isClaudeModel(model: string): boolean {
  return model.toLowerCase().startsWith('claude');
}

/** The host of a beta resource. */
function betaHost(config: Pick<BetaConfig, 'resourceName' | 'resourceType'>): string {
  return `${config.resourceName}.${BETA_HOST_SUFFIXES[config.resourceType]}`;
}

export function compileBeta(
  config: BetaConfig,
  address: FamilyAddress,
  name: string | undefined,
): CompiledProvider | ProviderConfigError {
  const prefix = refusePathPrefix(address);
  if (prefix) return prefix;
  if (!RESOURCE_NAME.test(config.resourceName)) {
    return new ProviderConfigError(
      'beta.resourceName',
      `must be an Azure resource name, the first label of its host (letters, digits and "-", at most 63; got "${config.resourceName}")`,
    );
  }
  const apiVersion = azureApiVersion(config.apiVersion, 'beta.apiVersion');
  if (apiVersion instanceof ProviderConfigError) return apiVersion;
  const host = betaHost(config);
  if (config.resourceType === 'Omega') {
    if (config.projectName === undefined) {
      return new ProviderConfigError(
        'beta.projectName',
        'is required when resourceType is Omega (Azure AI Foundry): requests go to /api/projects/{projectName}/openai/v1; set the name of the Foundry project',
      );
    }
    const project = pathSegment(config.projectName, 'beta.projectName', 'a Foundry project name');
    if (project instanceof ProviderConfigError) return project;
    if (!isV1Version(apiVersion)) {
      return new ProviderConfigError(
        'beta.apiVersion',
        `a Foundry project (resourceType Omega) serves the v1 API only: set v1 (the default) or preview (got "${apiVersion}")`,
      );
    }
    const routes = v1Routes(`/api/projects/${project}/openai/v1`, apiVersion, PROJECT_FORMATS);
    const openai = azurePlanner({ family: 'beta', host, apiVersion, deployment: config.model, routes }, address, name);
    // Claude deployments answer only the Anthropic Messages API, at the resource's /anthropic/v1,
    // versioned by anthropic-version: apiVersion (the OpenAI API's) is not sent there.
    const claude = azurePlanner(
      {
        family: 'beta',
        host,
        apiVersion: AZURE_DEFAULT_API_VERSION,
        deployment: config.model,
        routes: new Map(CLAUDE_ROUTES),
      },
      address,
      name,
    );
    return new ModelSwitchedProvider(openai, claude, isClaudeModel);
  }
  if (config.projectName !== undefined) {
    return new ProviderConfigError(
      'beta.projectName',
      'applies to resourceType Omega (Azure AI Foundry projects) only; remove it or set resourceType Omega',
    );
  }
  // An Azure OpenAI resource: the model override is the deployment, in the path with a dated version.
  if (!isV1Version(apiVersion) && config.model === undefined) {
    return new ProviderConfigError(
      'beta.model',
      `is required when apiVersion is "${apiVersion}": a dated API version takes the deployment in the path; set model to the deployment name, or use apiVersion v1`,
    );
  }
  const deployment =
    config.model === undefined || isV1Version(apiVersion)
      ? config.model
      : pathSegment(config.model, 'beta.model', 'a deployment name');
  if (deployment instanceof ProviderConfigError) return deployment;
  return azurePlanner(
    { family: 'beta', host, apiVersion, deployment, routes: resourceRoutes(apiVersion, deployment) },
    address,
    name,
  );
}

/**
 * Why a GwModel with provider Beta cannot be served with these settings, if it cannot: an Azure
 * OpenAI resource at a dated apiVersion takes the deployment in the path, and a GwModel has no
 * model override to name it.
 */
export function betaModelRefusal(settings: BetaSettings): string | undefined {
  const apiVersion = settings.apiVersion ?? AZURE_DEFAULT_API_VERSION;
  if (settings.resourceType === 'Alpha' && !isV1Version(apiVersion)) {
    return `spec.beta.apiVersion: provider ${modelProviderLabel('Beta')} models use the v1 API (v1 or preview; got "${apiVersion}"): a dated version takes the deployment in the path, which a GwModel cannot name; use a GwBackend with a beta provider and its model for it`;
  }
  return undefined;
}
