// Backend authentication cloudtwo (spec document 2, CloudtwoAuth): a Google access token (scope
// cloud-platform) or an ID token for an audience, from the credentials JSON of a Secret or from
// the ambient credentials, written as a Bearer token (or at the auth's location). Tokens live in a
// TokenCache (kind gcp) kept across configurations while the spec and the Secret are unchanged:
// refreshed before they expire, one fetch for concurrent requests. docs/backend-auth.md, "cloudtwo
// (Google Cloud)"; the choices the spec leaves open are docs/decisions/0016-cloudtwo-credentials.md.
import { isIP } from 'node:net';
import type { CloudtwoAuth } from '../../../../api/types/backend-auth.ts';
import { authKindLabel } from '../../../../api/vendors.ts';
import { AuthConfigError } from '../errors.ts';
import { type CredentialKindCompiler, tokenStep } from '../kind.ts';
import { BEARER_LOCATION } from '../location.ts';
import { TokenCache } from '../token-cache.ts';
import { cloudtwoCredentials } from './credentials.ts';
import { ambientTokenFetch, type CloudtwoTokenType, secretTokenFetch, type TokenFetch } from './token-source.ts';

/** The metrics label of cloudtwo token fetches. */
export const GCP_METRICS_KIND = 'gcp';

// The metadata server's identity request carries the audience in its query unescaped
// (google-auth-library's Compute client): these would change the request.
const AUDIENCE_UNSAFE = /[\s&#%+]/;

/**
 * The ID token audience: `audience`, else `https://<host>` of the backend (as agentgateway derives
 * it; a Cloud Run service's URL is the audience it checks), or an AuthConfigError.
 */
function idTokenAudience(config: CloudtwoAuth, host: string | undefined): string | AuthConfigError {
  if (config.audience !== undefined) {
    if (config.audience.trim() === '') return new AuthConfigError('cloudtwo.audience', 'must not be empty');
    if (AUDIENCE_UNSAFE.test(config.audience))
      return new AuthConfigError('cloudtwo.audience', 'must not contain whitespace, &, #, % or +');
    return config.audience;
  }
  const name = host
    ?.replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (name === undefined || name === '' || isIP(name) !== 0)
    return new AuthConfigError(
      'cloudtwo.audience',
      'is required: the backend has no hostname to derive the ID token audience from (set the audience the service expects, such as its https URL)',
    );
  return `https://${name}`;
}

export const compileCloudtwo: CredentialKindCompiler<CloudtwoAuth> = (config, context) => {
  const type: CloudtwoTokenType = config.type ?? 'AccessToken';
  let audience: string | undefined;
  if (type === 'IdToken') {
    const derived = idTokenAudience(config, context.target?.host);
    if (derived instanceof AuthConfigError) return derived;
    audience = derived;
  }
  let fetch: () => TokenFetch;
  let identity: string[];
  if (config.secretRef !== undefined) {
    const credentials = cloudtwoCredentials(config.secretRef, context.data, context.namespace);
    if (credentials instanceof AuthConfigError) return credentials;
    fetch = () => secretTokenFetch(credentials, { type, audience, clock: context.clock });
    identity = ['secret', type, audience ?? '', JSON.stringify(credentials.json())];
  } else {
    fetch = () => ambientTokenFetch({ type, audience, clock: context.clock });
    identity = ['ambient', type, audience ?? ''];
  }
  // The clients and their tokens outlive a reload that changes neither the spec nor the Secret.
  const source = context.shared('cloudtwo', identity, () => ({
    cache: new TokenCache({ kind: GCP_METRICS_KIND, clock: context.clock }),
    fetch: fetch(),
  }));
  const location = context.location ?? BEARER_LOCATION;
  return {
    step: tokenStep(location, authKindLabel('cloudtwo'), () => source.cache.get('', source.fetch)),
    writesQuery: location.inQuery,
  };
};
