// The plain HTTP backend kind: a GwBackend `static` (host and port, or a Unix socket) and a
// Kubernetes Service. Compiled into connection settings, a shared keep-alive pool and the
// backend auth; a request is forwarded through the pool as it is (proxy/http-forward.ts), with
// traffic.retry, traffic.hostRewrite and the route and backend deadlines. Its response takes the
// response path every kind's does (proxy/response-path.ts). Kinds that reach one HTTP destination
// of their own (a2a) forward through the same forwarder (compileHttpForwarder).

import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Pool } from 'undici';
import type { BackendFull } from '../../api/types/backend-policies.ts';
import { fieldNamespace } from '../../contract/dataplane-config.ts';
import { systemClock } from '../../util/clock.ts';
import { remainingMs, shorterTimeout } from '../../util/deadlines.ts';
import {
  AuthConfigError,
  type AuthIncoming,
  type CompiledBackendAuth,
  compileBackendAuth,
  finishBackendAuth,
  NO_QUERY,
  STREAMED_BODY,
  settled,
} from '../auth/backend/index.ts';
import {
  EndpointHealth,
  judgeResponse,
  type ObservedResponse,
  type UnhealthyCondition,
} from '../balancing/endpoint-health.ts';
import { type BackendHealthReport, healthView } from '../balancing/health-report.ts';
import { compileUnhealthyCondition } from '../balancing/unhealthy-condition.ts';
import { ExpressionError } from '../cel/expression.ts';
import { requestBufferOrStream } from '../policies/forwarding/buffer-or-stream.ts';
import { rewriteHost } from '../policies/forwarding/host-rewrite.ts';
import { bodyFailure } from '../proxy/body.ts';
import type { ClientResponse } from '../proxy/client-response.ts';
import { sendText } from '../proxy/direct-response.ts';
import { addForwardedFor, withClientHeaderCase } from '../proxy/headers.ts';
import {
  type ForwardOptions,
  type ForwardOutcome,
  forwardHttp,
  hasRequestBody,
  type RetryPlan,
  type UpstreamFailure,
} from '../proxy/http-forward.ts';
import { sendOwnFailure } from '../proxy/own-failure.ts';
import { celContext } from '../telemetry/cel-context.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import {
  type ConnectionSettings,
  ConnectionSettingsError,
  connectionSettings,
} from '../upstream/connection-settings.ts';
import type { Destination } from '../upstream/destination.ts';
import { serviceDestination, staticDestination } from '../upstream/destinations.ts';
import { throughMesh } from '../upstream/mesh-connection.ts';
import { NO_MESH_ENVIRONMENT } from '../upstream/mesh-refusals.ts';
import { openTunnel } from '../upstream/tunnel.ts';
import { backendAuthOptions } from './auth-options.ts';
import {
  type Backend,
  type BackendKind,
  type BackendRefInput,
  type BackendRefusal,
  backendRefusal,
  type RoutedRequest,
} from './backend.ts';

export const httpKind: BackendKind<BackendRefInput> = {
  compile(input: BackendRefInput): Backend | BackendRefusal {
    const { object, ref, context } = input;
    const tls = ref.policy.tls !== undefined;
    // A Service in the ambient mesh (the Gateway is in the mesh): reached at its pods over HBONE.
    const mesh = object.kind === 'Service' ? object.mesh : undefined;
    if (mesh && !context.mesh) return backendRefusal(`backend ${input.key}: ${NO_MESH_ENVIRONMENT}`, 503);
    const destination =
      object.kind === 'Service'
        ? serviceDestination(object.spec, ref.port, tls, mesh && `${input.name}.${input.namespace}.svc`)
        : object.kind === 'GwBackend'
          ? staticDestination(object.spec.static!, tls)
          : 'an InferencePool is not an HTTP backend';
    if (typeof destination === 'string') return backendRefusal(`backend ${input.key}: ${destination}`);
    return compileHttpForwarder(input, destination, object.kind === 'Service' ? 'service' : 'static', mesh);
  },
};

/**
 * The connection settings a backendRef's effective policy gives `destination`, or the refusal
 * naming the field. A field set by a GwPolicy of another namespace (on the Gateway, a route)
 * resolves there: a tls Secret, a tunnel's backendRef.
 */
export function backendRefConnection(
  input: BackendRefInput,
  destination: Destination,
): ConnectionSettings | BackendRefusal {
  const { ref, context, namespace } = input;
  try {
    return connectionSettings(
      destination,
      ref.policy,
      context.data,
      fieldNamespace(ref.policyNamespaces, 'tls', namespace),
      { backends: context.backends, namespace: fieldNamespace(ref.policyNamespaces, 'tunnel', namespace) },
    );
  } catch (error) {
    if (error instanceof ConnectionSettingsError)
      return backendRefusal(`backend ${input.key}: backend policy ${error.field}: ${error.message}`);
    throw error;
  }
}

/**
 * The http kind's forwarder to `destination` for a backendRef: its backend policy's connection
 * settings (tcp, tls, http, tunnel), backend auth and passive health, compiled once. Other kinds
 * that reach one HTTP destination (a2a) forward through it rather than a client of their own.
 */
export function compileHttpForwarder(
  input: BackendRefInput,
  destination: Destination,
  type: HttpBackendType,
  mesh?: MeshService,
): HttpForwarder | BackendRefusal {
  const { ref, context, namespace } = input;
  const policy = ref.policy;
  const connection = backendRefConnection(input, destination);
  if ('refused' in connection) return connection;
  let settings = connection;
  let dial = (): Promise<Duplex> => openTunnel(settings);
  if (mesh && context.mesh) {
    const meshSettings = throughMesh(
      settings,
      mesh,
      destination.port,
      context.mesh,
      `${input.key} port ${destination.port}`,
    );
    settings = meshSettings;
    dial = meshSettings.dial;
  }
  let auth: CompiledBackendAuth | undefined;
  if (policy.auth !== undefined) {
    const authNamespace = fieldNamespace(ref.policyNamespaces, 'auth', namespace);
    const compiled = compileBackendAuth(
      policy.auth,
      context.data,
      authNamespace,
      backendAuthOptions(context, authNamespace, { host: settings.socket.host }),
    );
    if (compiled instanceof AuthConfigError)
      return backendRefusal(`backend ${input.key}: backend policy auth.${compiled.field}: ${compiled.message}`);
    auth = compiled;
  }
  const health = compilePassiveHealth(policy.health, input.key);
  if (health !== undefined && 'refused' in health) return health;
  // An HTTP/1.1 destination also gets gw's own client, which carries requests whose body is in memory.
  const client = settings.http1 !== undefined ? context.client(settings) : undefined;
  return new HttpBackend(type, settings, context.pool(settings), dial, auth, health, client);
}

/** A backend that forwards to one HTTP destination, and lets the kind that owns it say how. */
export interface HttpForwarder extends Backend {
  readonly type: HttpBackendType;
  readonly available?: () => boolean;
  /** Forwards the request as serve() does, with what `how` changes. */
  forward(routed: RoutedRequest, how: ForwardingChanges): Promise<void>;
}

/** What a kind changes about forwarding one request. */
export interface ForwardingChanges {
  /** The request body gw has read already: sent instead of the request stream (exactly these bytes). */
  readonly body?: Buffer;
  /** How a failed exchange is answered (the protocol's error shape); plain text unless given. */
  readonly answerFailure?: (res: ClientResponse, failure: UpstreamFailure) => void;
}

/**
 * A backend forwarding to one destination as the http kind does (backend auth, retry, host
 * rewrite, deadlines), without passive health: for a kind that picks the destination itself
 * (the dynamic forward proxy, per request).
 */
export function destinationForwarder(
  type: HttpBackendType,
  settings: ConnectionSettings,
  pool: Pool,
  client: UpstreamClient | undefined,
  auth: CompiledBackendAuth | undefined,
): Backend {
  return new HttpBackend(type, settings, pool, () => openTunnel(settings), auth, undefined, client);
}

/**
 * The one operation of an AWS-style API that a typed backend sends every request to (an
 * AgentCore runtime's InvokeAgentRuntime): it replaces the client's path, query and body and
 * reads the API's answers; the rest — connection settings, pool, backend auth, retry, deadlines,
 * passive health — is the http kind's.
 */
export interface UpstreamOperation {
  /**
   * Shapes the upstream request: writes its headers (Host included) into `headers` and gives its
   * path, query and body. Undefined when it has answered the client itself (a method the
   * operation does not take, a body it could not read).
   */
  prepare(routed: RoutedRequest, headers: Record<string, string | string[]>): Promise<PreparedOperation | undefined>;
}

export interface PreparedOperation {
  path: string;
  query: string;
  body: IncomingMessage | Buffer | undefined;
  /** How the operation's answers reach the client (ForwardOptions.inspect). */
  inspect?: ForwardOptions['inspect'];
}

/** A backend sending every request to `operation` at one destination, as the http kind forwards. */
export function operationForwarder(
  settings: ConnectionSettings,
  pool: Pool,
  auth: CompiledBackendAuth | undefined,
  health: PassiveHealth | undefined,
  operation: UpstreamOperation,
): Backend {
  return new HttpBackend('unknown', settings, pool, () => openTunnel(settings), auth, health, undefined, operation);
}

/** Passive health of a backend policy (`health`), or the refusal of its unhealthyCondition. */
export function compilePassiveHealth(
  health: BackendFull['health'],
  key: string,
): PassiveHealth | BackendRefusal | undefined {
  if (health === undefined) return undefined;
  const unhealthy = compileUnhealthyCondition(health);
  if (unhealthy instanceof ExpressionError)
    return backendRefusal(`backend ${key}: backend policy health.unhealthyCondition: ${unhealthy.message}`);
  return { state: new EndpointHealth(health, { now: systemClock.monotonicMs }), unhealthy };
}

/** telemetry's type of a backend forwarded here (`unknown`: a typed API such as AgentCore, agentgateway's value). */
type HttpBackendType = 'static' | 'service' | 'dynamic' | 'unknown';

/** The Service a mesh destination is (upstream/mesh-connection.ts). */
type MeshService = Parameters<typeof throughMesh>[1];

/** Health of an HTTP backend (backend policy `health`): what its responses say, and whether it is evicted. */
interface PassiveHealth {
  readonly state: EndpointHealth;
  readonly unhealthy: UnhealthyCondition;
}

class HttpBackend implements HttpForwarder {
  readonly type: HttpBackendType;
  readonly #settings: ConnectionSettings;
  readonly #pool: Pool;
  /** gw's own HTTP/1.1 client to the destination, when it speaks HTTP/1.1 (ForwardOptions.client). */
  readonly #client: UpstreamClient | undefined;
  readonly #auth: CompiledBackendAuth | undefined;
  readonly #health: PassiveHealth | undefined;
  readonly #operation: UpstreamOperation | undefined;

  constructor(
    type: HttpBackendType,
    settings: ConnectionSettings,
    pool: Pool,
    dial: () => Promise<Duplex>,
    auth: CompiledBackendAuth | undefined,
    health: PassiveHealth | undefined,
    client: UpstreamClient | undefined,
    operation?: UpstreamOperation,
  ) {
    this.type = type;
    this.#settings = settings;
    this.tunnel = dial;
    this.#pool = pool;
    this.#client = client;
    this.#auth = auth;
    this.#health = health;
    this.#operation = operation;
    if (health) {
      this.available = () => !health.state.evicted;
      this.health = () => ({ endpoint: healthView(health.state, systemClock.monotonicMs()) });
    }
  }

  /** Set with a health policy: false while evicted (a rule picks its other backends first). */
  readonly available?: () => boolean;
  /** Set with a health policy: its score and eviction. */
  readonly health?: () => BackendHealthReport;

  /** A byte stream to the destination (CONNECT routes): TCP or TLS, or HBONE to a mesh pod. */
  readonly tunnel: () => Promise<Duplex>;

  serve(routed: RoutedRequest): Promise<void> {
    return this.forward(routed, NO_CHANGES);
  }

  async forward(routed: RoutedRequest, how: ForwardingChanges): Promise<void> {
    const { req, res, record, forward, exchange, route } = routed;
    const upstreamHeaders = forward.headers as Record<string, string | string[]>;
    // The client as gw knows it: the PROXY protocol header's source when the port takes one.
    addForwardedFor(upstreamHeaders, record.clientAddress, routed.scheme);
    const forwarding = route.forwarding;
    let requestPath = forward.path;
    let search = forward.query;
    let body: IncomingMessage | Buffer | undefined =
      how.body ?? exchange?.body ?? (hasRequestBody(req) ? req : undefined);
    let inspect: ForwardOptions['inspect'];
    if (this.#operation !== undefined) {
      const prepared = await this.#operation.prepare(routed, upstreamHeaders);
      if (prepared === undefined) return;
      ({ path: requestPath, query: search, body, inspect } = prepared);
    }
    // Before backend auth: a signature over the request covers the Host the backend gets.
    rewriteHost(forwarding.hostRewrite, this.#settings, upstreamHeaders, req.headers.host);
    const auth = this.#auth;
    // Without backend auth (most static backends) none of this is made per request.
    const incoming: AuthIncoming | undefined = auth && { headers: req.headers, variables: () => celContext(record) };
    let pending: void | Promise<void>;
    if (auth && (search !== '' || auth.writesQuery)) {
      const params = new URLSearchParams(search);
      pending = auth.apply({ headers: upstreamHeaders, query: params }, incoming!);
      // A credential being fetched writes the query when it comes.
      if (pending !== undefined) await settled(pending);
      search = params.toString();
    } else pending = auth?.apply({ headers: upstreamHeaders, query: NO_QUERY }, incoming!);
    // HTTPRoute backendRequest and BackendHTTP.requestTimeout: each attempt.
    const attemptTimeoutMs = shorterTimeout(route.backendRequestTimeoutMs, this.#settings.requestTimeoutMs);
    let retry: RetryPlan | undefined;
    if (
      forwarding.retry !== undefined &&
      exchange !== undefined &&
      (forwarding.retry.precondition?.(exchange) ?? true)
    ) {
      if (body === req) {
        // Every attempt sends the same body: read it whole (up to the listener's buffer limit); a
        // larger body is sent once, streamed, without retries.
        let buffered: Buffer | undefined;
        try {
          buffered = await requestBufferOrStream(req, exchange.maxBodyBytes);
        } catch (error) {
          const { status, message } = bodyFailure(error);
          return void sendText(res, status, message, { connection: 'close' });
        }
        if (buffered !== undefined) body = exchange.body = buffered;
      }
      if (body !== req) retry = { policy: forwarding.retry, exchange, attemptTimeoutMs };
    }
    const path = search ? `${requestPath}?${search}` : requestPath;
    const finishing =
      auth &&
      finishBackendAuth(
        pending,
        auth,
        () => ({
          method: req.method ?? 'GET',
          origin: this.#settings.origin,
          path,
          headers: upstreamHeaders,
          body: body === req ? STREAMED_BODY : (body as Buffer | undefined),
        }),
        incoming!,
      );
    const failure = finishing && (await finishing);
    if (failure !== undefined) {
      // A 5xx is gw's own (a request id, the detail in the log); a 4xx says what was wrong with the request.
      if (failure.status >= 500) return sendOwnFailure(res, record, failure.logText, failure.status);
      record.error = failure.logText;
      return void sendText(res, failure.status, failure.message, { connection: 'close' });
    }
    const upstreamStart = process.hrtime.bigint();
    record.upstreamStartTime = upstreamStart;
    // HTTPRoute timeouts.request or traffic.timeouts.request: the whole request from its arrival —
    // policies, a delay and every retry included.
    const requestTimeoutMs = remainingMs(route.requestTimeoutMs, record.startTime, upstreamStart);
    const outcome = await forwardHttp(res, {
      pool: this.#pool,
      client: this.#client,
      method: req.method ?? 'GET',
      path,
      headers:
        route.preserveHeaderCase && req.httpVersionMajor === 1
          ? withClientHeaderCase(upstreamHeaders, req.rawHeaders)
          : upstreamHeaders,
      body,
      timeoutMs: retry ? requestTimeoutMs : shorterTimeout(requestTimeoutMs, attemptTimeoutMs),
      retry,
      ...(how.answerFailure ? { answerFailure: how.answerFailure } : {}),
      inspect,
    });
    record.upstreamEndTime = process.hrtime.bigint();
    if (outcome.failure)
      record.error = `upstream ${outcome.failure}${outcome.detail ? ` (${outcome.detail})` : ''}${retriesText(outcome.retries)}`;
    if (this.#health && outcome.failure !== 'aborted') this.#observe(this.#health, outcome);
  }

  /** Feeds what the backend answered (or that it could not be reached) to its health. */
  #observe(health: PassiveHealth, outcome: ForwardOutcome): void {
    const observed: ObservedResponse =
      outcome.failure !== undefined && outcome.upstreamHeadersMs === undefined
        ? { connectionFailed: true }
        : { status: outcome.status, latencyMs: outcome.upstreamHeadersMs };
    health.state.record(judgeResponse(observed, health.unhealthy));
  }
}

const NO_CHANGES: ForwardingChanges = Object.freeze({});

function retriesText(retries: number | undefined): string {
  return !retries ? '' : retries === 1 ? ' after 1 retry' : ` after ${retries} retries`;
}
