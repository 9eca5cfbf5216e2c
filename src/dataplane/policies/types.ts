// The contract between the traffic-policy pipeline and each policy: a GwPolicy traffic field is
// compiled once per configuration into a CompiledPolicy (or a problem naming the field), then its
// request step runs per request in the pipeline's order (docs/policies.md).
import type { DataPlaneConfig, FieldNamespaces } from '../../contract/dataplane-config.ts';
import type { DataLookup } from '../upstream/connection-settings.ts';
import type { PolicyExchange } from './exchange.ts';
import type { PolicyRuntime } from './runtime.ts';

/** An answer the gateway gives itself (a rejection, a preflight, a direct response). */
export interface LocalResponse {
  status: number;
  headers?: Record<string, string | string[]>;
  /** Plain text (a trailing newline is added to text without one) or bytes as they are. */
  body?: string | Buffer;
  /**
   * Set when the answer is gw's own refusal (an authentication, authorization, rate limit or body
   * limit saying no; not a configured direct response or an answer relayed from an external
   * server), whose `body` is then a one-line message: an LLM route words it in its client's API
   * format (proxy/answers.ts). `overloaded`: gw is busy, the client may retry shortly.
   */
  own?: 'refusal' | 'overloaded';
}

/** undefined: go on with the next policy; a LocalResponse: answer it and stop. */
export type StepResult = LocalResponse | undefined;

export type RequestStep = (exchange: PolicyExchange) => StepResult | Promise<StepResult>;

/** How a request is forwarded, as traffic policies set it (the backend kinds and the response path apply these). */
export interface ForwardingPolicy {
  /** traffic.timeouts.request: the whole request, retries included. */
  requestTimeoutMs?: number;
  /** traffic.retry */
  retry?: RetryPolicy;
  /**
   * traffic.buffer.response: buffer the whole response (over maxBytes: 502 or, failing open,
   * streamed). maxBytes undefined: the listener's buffer limit (Frontend.http.maxBufferSize).
   */
  responseBuffer?: { maxBytes: number | undefined; failOpen: boolean };
  /** traffic.hostRewrite.mode; unset: Auto for hostname backends, None otherwise. */
  hostRewrite?: 'Auto' | 'None';
}

export interface RetryPolicy {
  /** Most retries after the first attempt. */
  attempts: number;
  codes: ReadonlySet<number>;
  backoffMs: number;
  /** Evaluated before the first attempt; false (or an error) means no retries. */
  precondition?: (exchange: PolicyExchange) => boolean;
  /** Evaluated on each response (status known); true retries it. */
  condition?: (
    exchange: PolicyExchange,
    status: number,
    headers: Record<string, string | string[] | undefined>,
  ) => boolean;
}

export interface CompiledPolicy {
  /** Runs on each request at the policy's place in the pipeline. */
  request?: RequestStep;
  forwarding?: ForwardingPolicy;
}

/** Why a policy cannot be used: the field path under the section ("traffic.extAuth.grpc") and the fix. */
export interface PolicyProblem {
  field: string;
  message: string;
}

/** Whether a compile result is a problem: an object of exactly `field` and `message`. */
export function isProblem(value: unknown): value is PolicyProblem {
  return (
    value !== null &&
    typeof value === 'object' &&
    'message' in value &&
    'field' in value &&
    Object.keys(value).length === 2
  );
}

export interface PolicyCompileContext {
  /** Path of the section being compiled, for problems: "traffic". */
  path: string;
  /** Namespace references in the policy resolve in (the route's, or the Gateway's for PreRouting). */
  namespace: string;
  /** Fields set by an object of another namespace, whose references resolve there instead. */
  namespaces?: FieldNamespaces;
  /** Secrets and ConfigMaps of the configuration, by "Kind ns/name". */
  data: DataLookup;
  /** Services and GwBackends of the configuration (endpoint references), by "Kind ns/name". */
  backends: DataPlaneConfig['backends'];
  /** Where the policy applies ("Gateway ns/gw listener l route ns/r rule 0"): state kept across reloads is keyed by it. */
  scope: string;
  /**
   * The policy attachment a field came from ("GwPolicy ns/p on Gateway ns/gw"), or the scope when
   * unknown: state shared by every rule one attachment reaches (a Gateway-wide rate limit's
   * buckets) is keyed by it.
   */
  owner?(field: string): string;
  /** Long-lived state shared across configurations (JWKS caches, rate-limit buckets, gRPC clients). */
  runtime: PolicyRuntime;
}

export type PolicyCompiler<T> = (value: T, context: PolicyCompileContext) => CompiledPolicy | PolicyProblem;

/** The problem of a field this data plane does not enforce (refused, never silently skipped). */
export function notEnforced(context: PolicyCompileContext, field: string): PolicyProblem {
  return {
    field: `${context.path}.${field}`,
    message: 'is not enforced by this data plane yet; the requests it covers are refused',
  };
}
