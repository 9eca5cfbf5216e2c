// Backend authentication beta (spec document 2, BetaAuth): Microsoft Entra ID access tokens
// obtained with @azure/identity — a client secret from a Secret, a managed identity, workload
// identity, or, with none of them set, the SDK's default chain over gw's environment
// (docs/decisions/0015-beta-credentials.md). The credential is built once per configuration and
// kept across reloads that do not change it (context.shared); its tokens go through TokenCache,
// so a request with a valid token never waits. The client secret lives only in the credential.
import type * as AzureIdentity from '@azure/identity';
import type { AccessToken, TokenCredential } from '@azure/identity';
import type { BetaAuth, BetaManagedIdentity } from '../../../api/types/backend-auth.ts';
import type { LocalSecretObjectRef } from '../../../api/types/references.ts';
import { authKindLabel } from '../../../api/vendors.ts';
import { type Clock, systemClock } from '../../../util/clock.ts';
import { withDeadline } from '../../../util/deadlines.ts';
import { loadOnFirstUse } from '../../../util/load-on-first-use.ts';
import { BackendCredentialError } from './credential-error.ts';
import { AuthConfigError } from './errors.ts';
import { type BackendTarget, type CredentialKindCompiler, tokenStep } from './kind.ts';
import { BEARER_LOCATION } from './location.ts';
import { type SecretData, secretValue } from './secret-value.ts';
import { type FetchedToken, TokenCache } from './token-cache.ts';

const azureIdentity = loadOnFirstUse<typeof AzureIdentity>('@azure/identity');

const LABEL = authKindLabel('beta');
const FAILURE = `gw could not obtain ${LABEL} credentials for the backend.`;

/** The Secret keys of `beta.secretRef`, as the spec names them. */
export const BETA_SECRET_KEYS = { clientId: 'clientID', tenantId: 'tenantID', clientSecret: 'clientSecret' } as const;

/** The scope of Azure AI services (Azure OpenAI, AI Services, Cognitive Services): gw's default. */
export const AZURE_AI_SCOPE = 'https://cognitiveservices.azure.com/.default';
/** The scope of Azure AI Foundry project endpoints, `<resource>.services.ai.azure.com`. */
export const AZURE_FOUNDRY_SCOPE = 'https://ai.azure.com/.default';
const FOUNDRY_HOST_SUFFIX = '.services.ai.azure.com';

/** How long one token fetch (with the SDK's retries) may take before the requests waiting for it fail. */
export const BETA_FETCH_TIMEOUT_MS = 10_000;
/** The SDK's HTTP retries: a few quick ones, so that a fetch fails within the timeout rather than at it. */
const RETRY_OPTIONS = { maxRetries: 2, retryDelayInMs: 250, maxRetryDelayInMs: 2_000 };

/** What workload identity reads from the pod's environment (the workload identity webhook sets them). */
export const WORKLOAD_IDENTITY_ENVIRONMENT = ['AZURE_CLIENT_ID', 'AZURE_TENANT_ID', 'AZURE_FEDERATED_TOKEN_FILE'];

/** Letters, digits, '-' and '.': what the SDK accepts as a tenant (a GUID or a domain name). */
const TENANT_ID = /^[0-9A-Za-z.-]+$/;

/**
 * The token scope for the backend: Foundry project endpoints take ai.azure.com tokens, every other
 * Azure AI resource (and any other backend: BetaAuth has no scope field) cognitiveservices tokens.
 */
export function betaScope(target: BackendTarget | undefined): string {
  const host = target?.host.toLowerCase().replace(/\.$/, '');
  return host?.endsWith(FOUNDRY_HOST_SUFFIX) ? AZURE_FOUNDRY_SCOPE : AZURE_AI_SCOPE;
}

export interface BetaClientSecret {
  tenantId: string;
  clientId: string;
  clientSecret: string;
}

/**
 * The service principal of `beta.secretRef` (keys clientID, tenantID, clientSecret), or an
 * AuthConfigError naming `beta.secretRef...` when the Secret or a key is missing or empty, or the
 * tenant is no tenant ID. The controller asks the same question (controller/secret-contents.ts).
 */
export function betaClientSecret(
  ref: LocalSecretObjectRef,
  data: SecretData,
  namespace: string,
): BetaClientSecret | AuthConfigError {
  const read = (key: string) => secretValue({ ...ref, key }, data, namespace, 'beta.secretRef', { stripBearer: false });
  const clientId = read(BETA_SECRET_KEYS.clientId);
  if (clientId instanceof AuthConfigError) return clientId;
  const tenantId = read(BETA_SECRET_KEYS.tenantId);
  if (tenantId instanceof AuthConfigError) return tenantId;
  if (!TENANT_ID.test(tenantId)) {
    return new AuthConfigError(
      'beta.secretRef.key',
      `key "${BETA_SECRET_KEYS.tenantId}" of Secret ${namespace}/${ref.name} is not a tenant ID (a GUID or domain name: letters, digits, "-" and ".")`,
    );
  }
  const clientSecret = read(BETA_SECRET_KEYS.clientSecret);
  if (clientSecret instanceof AuthConfigError) return clientSecret;
  return { tenantId, clientId, clientSecret };
}

type ManagedIdentityField = 'clientId' | 'objectId' | 'resourceId';

/** How gw authenticates to Entra ID, resolved from BetaAuth once per configuration. */
type BetaMethod =
  | { kind: 'clientSecret'; secret: BetaClientSecret }
  | { kind: 'managedIdentity'; id: { field: ManagedIdentityField; value: string } | undefined }
  | { kind: 'workloadIdentity' }
  | { kind: 'environment' };

/**
 * The user-assigned identity of `managedIdentity`: the one of clientId, objectId and resourceId
 * that is not empty (the API requires all three; "" leaves one out), none for the system-assigned
 * identity.
 */
function managedIdentityId(
  identity: BetaManagedIdentity,
): { field: ManagedIdentityField; value: string } | undefined | AuthConfigError {
  const fields: ManagedIdentityField[] = ['clientId', 'objectId', 'resourceId'];
  const set = fields.filter((field) => (identity[field] ?? '').trim() !== '');
  if (set.length > 1) {
    return new AuthConfigError(
      `beta.managedIdentity.${set[1]}`,
      `at most one of clientId, objectId and resourceId may be non-empty (got ${set.join(' and ')}); leave the others ""`,
    );
  }
  const field = set[0];
  return field === undefined ? undefined : { field, value: identity[field].trim() };
}

function betaMethod(config: BetaAuth, data: SecretData, namespace: string): BetaMethod | AuthConfigError {
  const methods = (['secretRef', 'managedIdentity', 'workloadIdentity'] as const).filter(
    (field) => config[field] !== undefined,
  );
  if (methods.length > 1) {
    return new AuthConfigError(
      `beta.${methods[1]}`,
      'at most one of secretRef, managedIdentity, workloadIdentity may be set',
    );
  }
  if (config.secretRef !== undefined) {
    const secret = betaClientSecret(config.secretRef, data, namespace);
    return secret instanceof AuthConfigError ? secret : { kind: 'clientSecret', secret };
  }
  if (config.managedIdentity !== undefined) {
    const id = managedIdentityId(config.managedIdentity);
    return id instanceof AuthConfigError ? id : { kind: 'managedIdentity', id };
  }
  if (config.workloadIdentity !== undefined) {
    const missing = WORKLOAD_IDENTITY_ENVIRONMENT.filter((name) => !process.env[name]);
    if (missing.length > 0) {
      return new AuthConfigError(
        'beta.workloadIdentity',
        `workload identity reads ${WORKLOAD_IDENTITY_ENVIRONMENT.join(', ')} from gw's environment, and ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set: run gw in a pod whose service account is set up for Azure workload identity (label azure.workload.identity/use: "true")`,
      );
    }
    return { kind: 'workloadIdentity' };
  }
  return { kind: 'environment' };
}

/** Where a method is configured, for errors about it. */
function methodField(method: BetaMethod): string {
  switch (method.kind) {
    case 'clientSecret':
      return 'beta.secretRef';
    case 'managedIdentity':
      return 'beta.managedIdentity';
    case 'workloadIdentity':
      return 'beta.workloadIdentity';
    case 'environment':
      return 'beta';
  }
}

/** The variables through which the SDK finds and configures credentials, as "NAME=value", sorted. */
function azureEnvironment(): string[] {
  return Object.entries(process.env)
    .filter(([name]) => /^(AZURE_|IDENTITY_|MSI_|IMDS_)/.test(name))
    .map(([name, value]) => `${name}=${value ?? ''}`)
    .sort();
}

/** Environment values a failure message must never carry (secrets of the SDK's environment credential and App Service). */
function environmentSecrets(): string[] {
  return Object.entries(process.env)
    .filter(([name, value]) => /^(AZURE_|IDENTITY_|MSI_)/.test(name) && /SECRET|PASSWORD|HEADER/.test(name) && value)
    .map(([, value]) => value as string);
}

function createCredential(method: BetaMethod): TokenCredential {
  const identity = azureIdentity();
  // The authority host is gw's own (AZURE_AUTHORITY_HOST, else the public cloud), never a
  // client's: instance discovery would only add a call to login.microsoftonline.com that a
  // sovereign or private cloud cannot answer (docs/decisions/0015-beta-credentials.md).
  const common = { disableInstanceDiscovery: true, retryOptions: RETRY_OPTIONS };
  switch (method.kind) {
    case 'clientSecret': {
      const { tenantId, clientId, clientSecret } = method.secret;
      return new identity.ClientSecretCredential(tenantId, clientId, clientSecret, common);
    }
    case 'managedIdentity': {
      const retryOptions = { maxRetries: RETRY_OPTIONS.maxRetries };
      const id = method.id;
      if (id === undefined) return new identity.ManagedIdentityCredential({ retryOptions });
      if (id.field === 'clientId') return new identity.ManagedIdentityCredential({ clientId: id.value, retryOptions });
      if (id.field === 'objectId') return new identity.ManagedIdentityCredential({ objectId: id.value, retryOptions });
      return new identity.ManagedIdentityCredential({ resourceId: id.value, retryOptions });
    }
    case 'workloadIdentity':
      return new identity.WorkloadIdentityCredential(common);
    case 'environment':
      return new identity.DefaultAzureCredential(common);
  }
}

/** An SDK failure as the log may carry it: no known secret, no JWT, bounded. */
export function failureDetail(error: unknown, secrets: readonly string[]): string {
  let text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  for (const secret of secrets) if (secret.length >= 4) text = text.split(secret).join('[redacted]');
  text = text
    .replace(/eyJ[\w-]*\.[\w-]*\.[\w-]*/g, '[token]')
    .replace(/\s+/g, ' ')
    .trim();
  return text.length > 600 ? `${text.slice(0, 600)}…` : text;
}

/** The credential's token for `scope`, with its expiry on gw's clock, within BETA_FETCH_TIMEOUT_MS. */
async function fetchToken(
  credential: TokenCredential,
  scope: string,
  clock: Clock,
  describe: string,
  secrets: readonly string[],
): Promise<FetchedToken> {
  const abort = new AbortController();
  let token: AccessToken | null;
  try {
    token = await withDeadline(
      credential.getToken(scope, { abortSignal: abort.signal }),
      BETA_FETCH_TIMEOUT_MS,
      () => new Error(`no token within ${BETA_FETCH_TIMEOUT_MS} ms`),
      () => abort.abort(),
    );
  } catch (error) {
    throw new BackendCredentialError(502, FAILURE, `${describe}: ${failureDetail(error, secrets)}`);
  }
  if (!token?.token) throw new BackendCredentialError(502, FAILURE, `${describe}: the credential returned no token`);
  // The SDK reports expiry on the system clock; what is left of the token's life is what counts.
  const remainingMs = token.expiresOnTimestamp - systemClock.epochMs();
  return { value: token.token, expiresAtMs: clock.epochMs() + remainingMs };
}

interface BetaState {
  credential: TokenCredential;
  cache: TokenCache;
}

/** The beta kind: an Entra ID access token for the backend's scope, written at `location` (default Authorization: Bearer). */
export const compileBeta: CredentialKindCompiler<BetaAuth> = (config, context) => {
  const method = betaMethod(config, context.data, context.namespace);
  if (method instanceof AuthConfigError) return method;
  const scope = betaScope(context.target);
  const location = context.location ?? BEARER_LOCATION;
  const secrets = [...(method.kind === 'clientSecret' ? [method.secret.clientSecret] : []), ...environmentSecrets()];
  let state: BetaState;
  try {
    // The environment is part of what the credential is: the SDK reads it when it is built.
    state = context.shared('beta', [JSON.stringify(method), scope, ...azureEnvironment()], () => ({
      credential: createCredential(method),
      cache: new TokenCache({ kind: 'azure', clock: context.clock }),
    }));
  } catch (error) {
    return new AuthConfigError(
      methodField(method),
      `the Azure credential cannot be created: ${failureDetail(error, secrets)}`,
    );
  }
  const describe = `Entra ID token for ${scope} (${methodField(method)})`;
  const fetch = () => fetchToken(state.credential, scope, context.clock, describe, secrets);
  return {
    step: tokenStep(location, LABEL, () => state.cache.get('', fetch)),
    writesQuery: location.inQuery,
  };
};
