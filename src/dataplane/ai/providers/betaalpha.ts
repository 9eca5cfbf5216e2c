// Family betaalpha: Azure OpenAI at an endpoint of the user's choosing. The host is the resource
// endpoint (`<resource>.openai.azure.com`); paths, api-version and key placement are Azure OpenAI's
// (azure-openai.ts). The deployment is `deploymentName`, required with a dated apiVersion.
import type { BetaAlphaConfig } from '../../../api/types/llm-provider.ts';
import {
  azureApiVersion,
  azurePlanner,
  isV1Version,
  pathSegment,
  refusePathPrefix,
  resourceRoutes,
} from './azure-openai.ts';
import { ProviderConfigError } from './errors.ts';
import type { FamilyAddress } from './family-address.ts';
import type { ProviderPlanner } from './planner.ts';

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

export function compileBetaAlpha(
  config: BetaAlphaConfig,
  address: FamilyAddress,
  name: string | undefined,
): ProviderPlanner | ProviderConfigError {
  const prefix = refusePathPrefix(address);
  if (prefix) return prefix;
  const host = endpointHost(config.endpoint);
  if (host instanceof ProviderConfigError) return host;
  const apiVersion = azureApiVersion(config.apiVersion, 'betaalpha.apiVersion');
  if (apiVersion instanceof ProviderConfigError) return apiVersion;
  const deployment =
    config.deploymentName === undefined
      ? undefined
      : pathSegment(config.deploymentName, 'betaalpha.deploymentName', 'a deployment name');
  if (deployment instanceof ProviderConfigError) return deployment;
  if (deployment === undefined && !isV1Version(apiVersion)) {
    return new ProviderConfigError('betaalpha.deploymentName', `is required when apiVersion is "${apiVersion}"`);
  }
  const routes = resourceRoutes(apiVersion, deployment);
  return azurePlanner({ family: 'betaalpha', host, apiVersion, deployment, routes }, address, name);
}
