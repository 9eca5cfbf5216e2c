// A guard service (a webhook, OpenAI's moderations API, Bedrock's ApplyGuardrail, Model Armor)
// as gw calls it: its connection (the guard-service policies' tcp, tls and http: a pool of its
// own), its credentials (the policies' auth, written and signed as a backend's are), a deadline
// (http.requestTimeout, else agentgateway's 10 s) and a bounded JSON answer. Whatever goes wrong
// — no connection, the deadline, a credential that cannot be had, a status that is not 2xx, an
// answer that is not JSON — is a GuardFailure, which the guard's failure mode turns into a 503 or
// a pass (decision 0028). A failure's message names the service and what happened, never a
// credential or the texts sent.
import type { IncomingHttpHeaders } from 'node:http';
import type { BackendAuth } from '../../../api/types/backend-auth.ts';
import type { BackendHTTP, BackendTCP, BackendTLS, BackendTunnel } from '../../../api/types/backend-connection.ts';
import { fieldNamespace } from '../../../contract/dataplane-config.ts';
import { durationMs } from '../../../util/units.ts';
import {
  AuthConfigError,
  BackendCredentialError,
  type BackendTarget,
  type CompiledBackendAuth,
  compileBackendAuth,
  finishBackendAuth,
  type KeyStyle,
  NO_QUERY,
} from '../../auth/backend/index.ts';
import { backendAuthOptions } from '../../backends/auth-options.ts';
import { BodyTooLargeError } from '../../proxy/body.ts';
import type { CelVariables } from '../../telemetry/cel-context.ts';
import type { UpstreamClient } from '../../upstream/client.ts';
import { ConnectionSettingsError, connectionSettings, type Destination } from '../../upstream/connection-settings.ts';
import { type GuardCompileInput, type GuardConfigProblem, GuardFailure } from './guard.ts';

/** agentgateway's deadline for a guard call, unless the policies set http.requestTimeout. */
export const DEFAULT_GUARD_DEADLINE_MS = 10_000;

/** The largest answer a guard service may give (its verdict and, for a mask, the texts again). */
export const MAX_GUARD_ANSWER_BYTES = 8 * 1024 * 1024;

/** The guard-service policies (spec: tcp, tls, http, tunnel, auth; the auth type is the service's). */
export interface GuardServicePolicies {
  tcp?: BackendTCP | undefined;
  tls?: BackendTLS | undefined;
  http?: BackendHTTP | undefined;
  tunnel?: BackendTunnel | undefined;
  auth?: BackendAuth | undefined;
}

export interface GuardServiceOptions {
  /** The service, as users read it in messages: "OpenAI moderation", "the webhook guard (Service ns/name:port)". */
  name: string;
  /** Where it is reached (scheme, host, port; a Service's inferred HTTP version or socket). */
  destination: Destination;
  /** A path every call's path is appended to (a webhook url's path); '' for none. */
  basePath?: string;
  /** The guard's policies, found at `${path}.policies`. */
  policies: GuardServicePolicies | undefined;
  /** The field of the guard (`ai.promptGuard.request[0].alphaModeration`), for problems. */
  path: string;
  /** Credentials when the policies set no auth (Bedrock signs with the ambient AWS credentials). */
  defaultAuth?: BackendAuth;
  /** What the service is, for the credentials' defaults (cloudone's signing region, cloudtwo's audience). */
  target?: Omit<BackendTarget, 'host'>;
  /** Where a key goes when the auth names no location (default: Authorization: Bearer). */
  keyStyle?: KeyStyle;
}

/** One call: its path, JSON body and extra headers; the request it checks for. */
export interface GuardServiceRequest {
  path: string;
  body: unknown;
  /** Headers of the call (a repeated one as a list); gw's own content-type and content-length win. */
  headers?: Record<string, string | string[]>;
  /** The client's request headers (a passthrough credential) and CEL variables. */
  incoming: { headers: IncomingHttpHeaders; variables: CelVariables };
  signal: AbortSignal;
}

export interface GuardService {
  readonly name: string;
  /** POSTs the body and resolves with the parsed JSON answer of a 2xx status; rejects with GuardFailure. */
  post(request: GuardServiceRequest): Promise<unknown>;
}

/** Compiles a guard service's connection and credentials, or the field that cannot be served. */
export function compileGuardService(
  options: GuardServiceOptions,
  input: GuardCompileInput,
): GuardService | GuardConfigProblem {
  const { policies, path } = options;
  const { context, namespace } = input;
  let settings: ReturnType<typeof connectionSettings>;
  try {
    settings = connectionSettings(
      options.destination,
      policies,
      context.data,
      fieldNamespace(input.namespaces, 'tls', namespace),
      // A guard's policies are part of the backend policy's ai section: its tunnel resolves where that was set.
      { backends: context.backends, namespace: fieldNamespace(input.namespaces, 'ai', namespace) },
    );
  } catch (error) {
    if (error instanceof ConnectionSettingsError)
      return { path: `${path}.policies.${error.field}`, message: error.message };
    throw error;
  }
  let auth: CompiledBackendAuth | undefined;
  const authConfig = policies?.auth ?? options.defaultAuth;
  if (authConfig !== undefined) {
    const authNamespace = fieldNamespace(input.namespaces, 'auth', namespace);
    const compiled = compileBackendAuth(
      authConfig,
      context.data,
      authNamespace,
      backendAuthOptions(
        context,
        authNamespace,
        { ...options.target, host: options.destination.host },
        options.keyStyle,
      ),
    );
    if (compiled instanceof AuthConfigError)
      return { path: `${path}.policies.auth.${compiled.field}`, message: compiled.message };
    auth = compiled;
  }
  const deadlineMs = policies?.http?.requestTimeout
    ? durationMs(policies.http.requestTimeout)
    : DEFAULT_GUARD_DEADLINE_MS;
  return new HttpGuardService(
    options.name,
    context.client(settings),
    settings.origin,
    options.basePath ?? '',
    auth,
    deadlineMs,
  );
}

class HttpGuardService implements GuardService {
  readonly name: string;
  readonly #client: UpstreamClient;
  readonly #origin: string;
  readonly #basePath: string;
  readonly #auth: CompiledBackendAuth | undefined;
  readonly #deadlineMs: number;

  constructor(
    name: string,
    client: UpstreamClient,
    origin: string,
    basePath: string,
    auth: CompiledBackendAuth | undefined,
    deadlineMs: number,
  ) {
    this.name = name;
    this.#client = client;
    this.#origin = origin;
    this.#basePath = basePath;
    this.#auth = auth;
    this.#deadlineMs = deadlineMs;
  }

  async post(request: GuardServiceRequest): Promise<unknown> {
    const payload = Buffer.from(JSON.stringify(request.body));
    const headers: Record<string, string | string[]> = {
      ...request.headers,
      'content-type': 'application/json',
      'content-length': String(payload.length),
    };
    let path = this.#basePath + request.path;
    const incoming = { headers: request.incoming.headers, variables: () => request.incoming.variables };
    const auth = this.#auth;
    if (auth !== undefined) {
      // A key whose location is a query parameter is written in the query of the call.
      const query = auth.writesQuery ? new URLSearchParams() : NO_QUERY;
      const withQuery = () => (query !== NO_QUERY && query.size > 0 ? `${path}?${query}` : path);
      const failure = await finishBackendAuth(
        auth.apply({ headers, query }, incoming),
        auth,
        () => ({ method: 'POST', origin: this.#origin, path: withQuery(), headers, body: payload }),
        incoming,
      );
      if (failure instanceof BackendCredentialError)
        throw new GuardFailure(`${this.name}: no credential (${failure.detail})`, 'credential');
      path = withQuery();
    }
    const timeout = AbortSignal.timeout(this.#deadlineMs);
    const signal = AbortSignal.any([request.signal, timeout]);
    let status: number;
    let bytes: Buffer;
    try {
      const response = await this.#client.request({ path, method: 'POST', headers, body: payload, signal });
      status = response.statusCode;
      bytes = await response.body.readAll(MAX_GUARD_ANSWER_BYTES);
    } catch (error) {
      if (error instanceof BodyTooLargeError)
        throw new GuardFailure(`${this.name} answered more than ${MAX_GUARD_ANSWER_BYTES} bytes`, 'invalid_answer');
      if (timeout.aborted)
        throw new GuardFailure(`${this.name} did not answer within ${this.#deadlineMs} ms`, 'timeout');
      if (request.signal.aborted)
        throw new GuardFailure(`the client went away while ${this.name} was asked`, 'canceled');
      throw new GuardFailure(`${this.name} could not be reached (${(error as Error).message})`, 'unreachable');
    }
    if (status < 200 || status >= 300) throw new GuardFailure(`${this.name} answered HTTP ${status}`, String(status));
    try {
      return JSON.parse(bytes.toString('utf8'));
    } catch {
      throw new GuardFailure(`${this.name} answered with a body that is not JSON`, 'invalid_answer');
    }
  }
}
