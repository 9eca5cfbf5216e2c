// Backend authentication: the credentials gw writes on requests to a backend (spec document 2,
// "Backend authentication" and "Credential locations"). docs/providers.md describes the rules.
export {
  type BackendAuthOptions,
  CLIENT_CREDENTIAL_HEADERS,
  type CompiledBackendAuth,
  compileBackendAuth,
  finishBackendAuth,
  type KeyStyle,
  settled,
  stripClientCredentials,
} from './compile.ts';
export { BackendCredentialError } from './credential-error.ts';
export { AuthConfigError } from './errors.ts';
export type { TargetHeaders } from './headers.ts';
export { type AuthIncoming, type BackendTarget, type OutgoingRequest, STREAMED_BODY } from './kind.ts';
export { type AuthTarget, NO_QUERY } from './location.ts';
export { DEFAULT_SECRET_KEY, type SecretData } from './secret-value.ts';
