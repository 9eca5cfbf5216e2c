// The address overrides of an LLMProvider (host, port, path, pathPrefix), checked once.
import type { LLMProvider } from '../../../api/types/llm-provider.ts';
import { ProviderConfigError } from './errors.ts';
import { providerOrigin } from './origin.ts';
import { type ConfiguredPath, configuredPath, pathPrefix } from './paths.ts';
import type { Origin } from './types.ts';

export interface FamilyAddress {
  host: string | undefined;
  port: number | undefined;
  /** `path`: replaces the path of every request to the provider. */
  path: ConfiguredPath | undefined;
  /** `pathPrefix` without trailing slashes: replaces the family's "/v1" base. */
  pathPrefix: string | undefined;
  /** The family's default host with the overrides applied. */
  origin(defaultHost: string): Origin;
}

export function familyAddress(provider: LLMProvider): FamilyAddress | ProviderConfigError {
  const path = provider.path === undefined ? undefined : configuredPath(provider.path, 'path');
  if (path instanceof ProviderConfigError) return path;
  const prefix = provider.pathPrefix === undefined ? undefined : pathPrefix(provider.pathPrefix, 'pathPrefix');
  if (prefix instanceof ProviderConfigError) return prefix;
  const { host, port } = provider;
  if (host !== undefined && host.trim() === '') return new ProviderConfigError('host', 'must not be empty');
  return {
    host,
    port,
    path,
    pathPrefix: prefix,
    origin: (defaultHost) => providerOrigin(host ?? defaultHost, port),
  };
}
