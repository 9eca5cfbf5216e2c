// The seam every backend credential kind plugs into (cloudone, beta, cloudtwo,
// oauthTokenExchange, crossAppAccess, jwtSign): a kind compiles its spec once into a step that
// writes the credential on each upstream request, and, for a kind that signs the request as it
// leaves (cloudone's SigV4), a signer that runs last. compile.ts keeps the table of kinds.
import type { IncomingHttpHeaders } from 'node:http';
import type { Clock } from '../../../util/clock.ts';
import type { EndpointScope } from '../../policies/endpoint.ts';
import type { CelVariables } from '../../telemetry/cel-context.ts';
import { BackendCredentialError } from './credential-error.ts';
import type { AuthConfigError } from './errors.ts';
import type { TargetHeaders } from './headers.ts';
import type { AuthTarget, CredentialLocation } from './location.ts';
import type { SecretData } from './secret-value.ts';

export interface AuthIncoming {
  /** The client's request headers. */
  headers: IncomingHttpHeaders;
  /**
   * For passthrough: the token an inbound authentication policy (JWT, API key, basic) validated,
   * which that policy may have removed from the headers.
   */
  credential?: string;
  /**
   * The request's CEL variables, for expressions of a credential (session names and tags,
   * token-exchange additionalParams, subject tokens read by expression). Built on first use.
   */
  variables?: () => CelVariables;
}

/** The body of an outgoing request that is forwarded as it arrives: a signature cannot cover it. */
export const STREAMED_BODY: unique symbol = Symbol('streamed body');

/** The request as it leaves for the backend, for a credential that signs it (cloudone SigV4). */
export interface OutgoingRequest {
  method: string;
  /** scheme://host[:port] the connection goes to; the Host header, when set, is what is sent. */
  origin: string;
  /** The path with its query, exactly as sent. */
  path: string;
  headers: TargetHeaders;
  /** The bytes sent, or STREAMED_BODY when they are forwarded as they come. */
  body: Buffer | string | undefined | typeof STREAMED_BODY;
}

/** Writes a credential on one request; a promise when it must be fetched first (rejects with a BackendCredentialError). */
export type CredentialStep = (target: AuthTarget, incoming: AuthIncoming) => void | Promise<void>;

/** Signs the outgoing request in place (headers); last, once nothing else changes it. */
export type RequestSigner = (request: OutgoingRequest, incoming: AuthIncoming) => void | Promise<void>;

/** What the backend is, for defaults a kind derives from it (a token audience, a signing region). */
export interface BackendTarget {
  /** The host requests go to (the ID token audience of cloudtwo derives from it). */
  host: string;
  /** The provider family of an AI backend (`beta` picks its token scope by it). */
  family?: string;
  /** The typed backend's region (cloudone's default signing region). */
  region?: string;
  /** The typed backend's AWS signing name (cloudone's default serviceName): bedrock-agentcore for an AgentCore runtime. */
  service?: string;
}

export interface CredentialKindContext {
  data: SecretData;
  /** The namespace Secrets and endpoint references are read in. */
  namespace: string;
  clock: Clock;
  /** BackendAuth.location when set. */
  location: CredentialLocation | undefined;
  target: BackendTarget | undefined;
  /** Where endpoint references (token endpoints) resolve; absent where none can. */
  endpoints: EndpointScope | undefined;
  /** Warnings about a configuration that works but will likely be refused (a certificate that does not match its key). */
  warn: (message: string) => void;
  /**
   * State kept across configurations while they use it: a token cache outlives a reload that does
   * not change the credential. `identity` is every input the state depends on (the spec, the
   * Secret values, digested by the caller); the same identity gets the same state.
   */
  shared<T>(kind: string, identity: readonly string[], create: () => T): T;
}

export interface CompiledCredential {
  step?: CredentialStep;
  sign?: RequestSigner;
  /** Whether the step may write a query parameter. */
  writesQuery?: boolean;
}

export type CredentialKindCompiler<Spec> = (
  spec: Spec,
  context: CredentialKindContext,
) => CompiledCredential | AuthConfigError;

/**
 * A step that writes a token obtained by `token` at `location`: synchronously when the token is
 * at hand (cached), else once it is. A token the location cannot carry (a token endpoint's
 * answer with a line break) fails the request rather than reaching the header. `token` gets the
 * upstream request too, for a kind that reads the client's token from its query or removes it.
 */
export function tokenStep(
  location: CredentialLocation,
  kind: string,
  token: (incoming: AuthIncoming, target: AuthTarget) => string | Promise<string>,
): CredentialStep {
  const write = (target: AuthTarget, value: string) => {
    if (location.problem(value) !== undefined)
      throw new BackendCredentialError(
        502,
        `gw could not obtain ${kind} credentials for the backend.`,
        `the ${kind} token ${location.problem(value)}`,
      );
    location.write(target, value);
  };
  return (target, incoming) => {
    const value = token(incoming, target);
    if (typeof value === 'string') return write(target, value);
    return value.then((resolved) => write(target, resolved));
  };
}
