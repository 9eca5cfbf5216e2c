// Backend authentication: the credentials gw writes on requests to a backend (spec document 2,
// "Backend authentication" and "Credential locations"). docs/providers.md describes the rules.
export {
  type AuthIncoming,
  type BackendAuthOptions,
  CLIENT_CREDENTIAL_HEADERS,
  type CompiledBackendAuth,
  compileBackendAuth,
  type KeyStyle,
  stripClientCredentials,
} from './compile.ts';
export { AuthConfigError } from './errors.ts';
export type { TargetHeaders } from './headers.ts';
export { type AuthTarget, NO_QUERY } from './location.ts';
export { DEFAULT_SECRET_KEY, type SecretData } from './secret-value.ts';
