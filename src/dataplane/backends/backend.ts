// The one seam for backend kinds (docs/backends.md): a kind compiles its part of a configuration
// once into a Backend, and a Backend serves the requests routed to it. The request handler does
// everything around it the same way for every kind — routing, the traffic pipeline, the route's
// filters, the response path — and knows no kind by name. Adding a kind is one file implementing
// BackendKind and one line in ./registry.ts.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Pool } from 'undici';
import type { CORS } from '../../api/types/traffic.ts';
import type {
  BackendObjectConfig,
  BackendRefConfig,
  DataPlaneConfig,
  ModelsConfig,
} from '../../contract/dataplane-config.ts';
import type { BackendHealthReport } from '../balancing/health-report.ts';
import type { MeshTransport } from '../mesh/transport.ts';
import type { PolicyExchange } from '../policies/exchange.ts';
import type { PolicyRuntime } from '../policies/runtime.ts';
import type { ForwardingPolicy } from '../policies/types.ts';
import type { GatewayAnswers } from '../proxy/answers.ts';
import type { ClientResponse } from '../proxy/client-response.ts';
import type { ForwardRequest } from '../routing/filters.ts';
import type { BackendType, RequestRecord } from '../telemetry/request-record.ts';
import type { AddressLookup } from '../upstream/address-lookup.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import type { ConnectionSettings, DataLookup } from '../upstream/connection-settings.ts';
import type { CompiledBackendPolicies } from './backend-policies.ts';

/** What the rule (and listener) a request took tell the backend that serves it. */
export interface RouteContext {
  /** Frontend.http.maxBufferSize of the listener: the most of a body gw buffers. */
  readonly maxBufferBytes: number;
  /** HTTPRoute timeouts.request or traffic.timeouts.request: the whole request, from its arrival. */
  readonly requestTimeoutMs: number | undefined;
  /** HTTPRoute timeouts.backendRequest: each upstream attempt. */
  readonly backendRequestTimeoutMs: number | undefined;
  /** The shorter of the two. */
  readonly timeoutMs: number | undefined;
  /** How the traffic policy has requests forwarded (retry, host rewrite; response buffering for the response path). */
  readonly forwarding: ForwardingPolicy;
  /** CORS policies of the rule and of PreRouting, whose allowed origins the MCP origin check admits. */
  readonly cors: readonly CORS[];
  /** Frontend.http.http1HeaderCase of the port: Preserve sends the client's header case upstream. */
  readonly preserveHeaderCase: boolean;
}

/** A request routed to a backend, after the traffic pipeline and the route's request filters. */
export interface RoutedRequest {
  readonly req: IncomingMessage;
  /**
   * Where the kind writes its response: the client's, or the response path's capture when
   * something works on the body (proxy/response-path.ts). Either way the response path runs.
   */
  readonly res: ClientResponse;
  readonly record: RequestRecord;
  /** Path (normalised, after filters) and query as they go upstream, with the request headers. */
  readonly forward: ForwardRequest;
  readonly scheme: 'http' | 'https';
  readonly route: RouteContext;
  /** The request's policy state when traffic policies ran (a buffered body, response hooks). */
  readonly exchange: PolicyExchange | undefined;
}

/** The host and port a CONNECT asks for (an IPv6 host without brackets). */
export interface ConnectAuthority {
  readonly host: string;
  readonly port: number;
}

/** A compiled backend: serves the requests routed to it. */
export interface Backend {
  /** The backend's type in telemetry (CEL `backend.type`, agentgateway's values). */
  readonly type: BackendType;
  serve(request: RoutedRequest): Promise<void>;
  /**
   * For Frontend.connect Route: a byte stream to the backend's address, for a CONNECT tunnel to
   * `authority` (what the client asked for, which a dynamic forward proxy connects to). Only kinds
   * that forward bytes as they are (plain HTTP destinations) have it.
   */
  readonly tunnel?: (authority: ConnectAuthority) => Promise<Duplex>;
  /**
   * For a backend with passive health (backend policy `health`): false while it is evicted. A rule
   * sends to its available backends first, and to evicted ones only when none is available.
   */
  readonly available?: () => boolean;
  /**
   * How gw words its own answers (a policy's refusal, a failure of its own) on a request to `path`
   * routed here: LLM backends answer in the client's API format. Unset: plain text.
   */
  readonly answersFor?: (path: string) => GatewayAnswers;
  /** The live state it keeps (models and their health, provider groups), for operators; unset: none. */
  readonly health?: () => BackendHealthReport;
}

/** Why a backend cannot be served: its requests are answered with `status` and the message. */
export interface BackendRefusal {
  readonly refused: true;
  readonly status: number;
  readonly message: string;
}

export function backendRefusal(message: string, status = 500): BackendRefusal {
  return { refused: true, status, message };
}

export function isRefusal(value: Backend | BackendRefusal): value is BackendRefusal {
  return (value as BackendRefusal).refused === true;
}

/** What compiling one configuration offers every kind: its data, shared pools and long-lived state. */
export interface BackendCompileContext {
  /** The Gateway, "namespace/name". */
  readonly gateway: string;
  /** Secrets and ConfigMaps of the configuration, by "Kind ns/name". */
  readonly data: DataLookup;
  /** The configuration's Service and GwBackend specs (targets, endpoint references). */
  readonly backends: DataPlaneConfig['backends'];
  /** The configuration's programmed GwModels, by "ns/name". */
  readonly models: DataPlaneConfig['models'];
  /** The shared undici pool for these settings, recorded as used by this configuration. */
  pool(settings: ConnectionSettings): Pool;
  /** The shared pool for settings, looked up at each use (an MCP session outlives its configuration). */
  currentPool(settings: ConnectionSettings): Pool;
  /** The shared provider client for these settings, recorded as used by this configuration. */
  client(settings: ConnectionSettings): UpstreamClient;
  /** State of policies and backends kept across configurations while they use it (sessions, buckets, caches). */
  readonly runtime: PolicyRuntime;
  /** The way into Istio's ambient mesh, when the process has the mesh environment (decision 0035). */
  readonly mesh: MeshTransport | undefined;
  /** State kept for the life of the data plane, created on first use (MCP session keys). */
  lifetime<T>(key: string, create: () => T): T;
  /**
   * Whether this data plane listens on the port now (any Gateway's listener), read when a request
   * needs it: a forward proxy must not send a request back to the gateway itself.
   */
  servesPort(port: number): boolean;
  /** Resolves a name learnt per request (a dynamic forward proxy's destination) to its addresses. */
  readonly resolveHost: AddressLookup;
  /** Reports something that cannot be served as configured, once (the log line, without the Gateway). */
  report(problem: string): void;
}

/** A backendRef to a GwBackend or Service, as a kind compiles it. */
export interface BackendRefInput {
  /** "GwBackend ns/name" or "Service ns/name". */
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  readonly object: BackendObjectConfig;
  /** The reference with its effective policy (and per-section policies). */
  readonly ref: BackendRefConfig;
  /**
   * The request policies (extAuth, transformation) an AI provider or MCP target runs on its own
   * calls, by section name (backend-policies.ts placeRequestPolicies; decision 0045). Absent: none.
   */
  readonly subBackendPolicies?: ReadonlyMap<string, CompiledBackendPolicies>;
  readonly context: BackendCompileContext;
}

/** The GwModels a rule or listener serves, as the models kind compiles them. */
export interface ModelsInput {
  readonly models: ModelsConfig;
  readonly context: BackendCompileContext;
}

/** A backend kind: compiles its backends once per configuration. */
export interface BackendKind<Input> {
  compile(input: Input): Backend | BackendRefusal;
  /**
   * How gw words its answers for a reference of this kind that is refused (./refused.ts), as the
   * kind's Backend.answersFor would; unset: plain text.
   */
  refusedAnswers?(ref: BackendRefConfig): (path: string) => GatewayAnswers;
}
