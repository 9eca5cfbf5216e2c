// Everything the data plane knows about one request, filled in by the proxy as the request
// progresses and read once at the end by the access log and the metrics (and, through
// cel-context.ts, by any CEL expression a policy evaluates on the way). A plain class with every
// field initialised in the constructor: one hidden class, no per-request maps, cheap enough to
// create for every request at tens of thousands per second.
import type { IncomingHttpHeaders } from 'node:http';
import type { Usage } from '../ai/formats/usage.ts';
import type { GuardOutcome } from '../ai/guards/outcome.ts';
import type { InlineModerationRecord } from '../ai/inline-moderation-record.ts';
import type { CostLookup, LlmCost, ModelPrices } from '../ai/model-prices.ts';

/** Headers as the proxy holds them: Node's incoming headers, or a plain object it built. */
export type HeaderMap = IncomingHttpHeaders | Record<string, string | string[] | number | undefined>;

/** The kind of backend a request went to (CEL `backend.type`, agentgateway's values). */
export type BackendType = 'ai' | 'mcp' | 'static' | 'dynamic' | 'service' | 'unknown';

/**
 * What an LLM request asked for (OpenTelemetry `gen_ai.operation.name` values; `rerank` is gw's
 * own, the conventions having none for it).
 */
export type LlmOperation = 'chat' | 'text_completion' | 'embeddings' | 'generate_content' | 'rerank';

const NO_HEADERS: HeaderMap = Object.freeze({});

/** The LLM part of a request: set only for requests that went to an AI backend. */
export class LlmRecord {
  /** Provider family of the spec (`alpha`, `gamma`, `custom`...): CEL `llm.provider`. */
  providerFamily = '';
  /** The vendor as OpenTelemetry names it (`openai`, `anthropic`...; src/api/vendors.ts): `gen_ai.provider.name`. */
  genAiProvider = '';
  /** The configured provider's name (NamedLLMProvider.name): CEL `llm.providerName`. */
  providerName = '';
  /** The model the client asked for (after aliases), `gen_ai.request.model`. */
  requestModel = '';
  /** The model the provider says answered, `gen_ai.response.model`; empty until the response names it. */
  responseModel = '';
  operation: LlmOperation = 'chat';
  streaming = false;
  /** Token usage reported by the provider; undefined when the response carried none. */
  usage: Usage | undefined = undefined;
  /** What the usage cost by the Gateway's model catalog (ai/model-prices.ts); undefined when unpriced. */
  cost: LlmCost | undefined = undefined;
  /** Whether the catalog priced the model; undefined without a catalog or without usage. */
  costLookup: CostLookup | undefined = undefined;
  /** process.hrtime.bigint() when the first token (first content chunk) reached gw; 0n until then. */
  firstTokenTime = 0n;
  /** What each prompt guard did (ai.promptGuard), in the order they ran; undefined when none ran. */
  guards: GuardOutcome[] | undefined = undefined;
  /** What an alpha provider's inline moderation reported (alpha.moderation); undefined without it. */
  moderation: InlineModerationRecord | undefined = undefined;
}

/**
 * The MCP part of a request: set by the MCP backend from the request's (first) JSON-RPC request,
 * with the tool, prompt or resource and its target once routing found them.
 */
export interface McpRequestRecord {
  readonly method: string;
  readonly sessionId?: string;
  readonly tool?: { readonly name: string; readonly target: string };
  readonly prompt?: { readonly name: string; readonly target: string };
  readonly resource?: { readonly uri: string; readonly target: string };
  /** The JSON-RPC error the client got. */
  readonly error?: { readonly code: number; readonly message: string };
}

/**
 * The A2A part of a request: set by the a2a backend for the A2A calls and agent cards it serves
 * (backends/a2a/calls.ts).
 */
export interface A2aRequestRecord {
  /**
   * The method: a JSON-RPC call's as the client named it (`SendMessage`, `message/send`), a REST
   * call's by the spec's name for its operation; absent for the agent card.
   */
  readonly method?: string;
  /** The task the call names (a follow-up message, a task read, cancelled, subscribed to...). */
  readonly taskId?: string;
}

export class RequestRecord {
  /** process.hrtime.bigint() when the request arrived: the origin of every duration. */
  readonly startTime: bigint;
  /** Wall-clock time the request arrived (ms since the epoch), for CEL `request.startTime`. */
  readonly startedAt: number;
  /** process.hrtime.bigint() when the response was complete (or the request failed); 0n before. */
  endTime = 0n;

  gateway = '';
  listener = '';
  route = '';
  rule = '';

  method = '';
  scheme = 'http';
  /** Host as the client sent it (Host or :authority), port included when given. */
  host = '';
  /** Path without the query. */
  path = '';
  /** Query string without the leading `?`; empty when none. */
  query = '';
  /** HTTP version as Node reports it: `1.1`, `2.0`... */
  httpVersion = '';
  requestHeaders: HeaderMap = NO_HEADERS;

  clientAddress = '';
  clientPort = 0;

  /** Status sent to the client; 0 until the response starts. */
  status = 0;
  responseHeaders: HeaderMap = NO_HEADERS;
  /** Request body bytes received from the client. */
  bytesIn = 0;
  /** Response body bytes sent to the client. */
  bytesOut = 0;

  /** Backend key chosen by routing (CEL `backend.name`); empty when none was chosen. */
  backend = '';
  backendType: BackendType = 'unknown';
  /** The upstream endpoint (host:port, or a socket path) the last attempt went to. */
  upstreamHost = '';
  /** hrtime of the upstream call's start, its first response byte and its end; 0n when not reached. */
  upstreamStartTime = 0n;
  upstreamFirstByteTime = 0n;
  upstreamEndTime = 0n;

  /** Short text of why the request failed (gw's own, not a stack trace); empty on success. */
  error = '';
  /**
   * The id the client was given with a failure of gw's own (proxy/own-failure.ts), to find this
   * request's `error` in the logs; empty for every other request.
   */
  requestId = '';

  /** Claims of a verified JWT, when a JWT policy accepted one. */
  jwtClaims: Record<string, unknown> | undefined = undefined;
  /** Metadata of a verified API key, when an API key policy accepted one. */
  apiKey: Record<string, unknown> | undefined = undefined;

  /** The model catalog of the Gateway that took the request (GwParameters spec.modelCatalog), if it has one. */
  modelPrices: ModelPrices | undefined = undefined;

  llm: LlmRecord | undefined = undefined;
  mcp: McpRequestRecord | undefined = undefined;
  a2a: A2aRequestRecord | undefined = undefined;

  /** The request's trace span when the Frontend traces it (ended by the telemetry at finish). */
  span: TraceSpan | undefined = undefined;
  /** The W3C traceparent sent upstream for this request's span, when it is traced. */
  traceparent: string | undefined = undefined;

  constructor(startTime: bigint = process.hrtime.bigint(), startedAt: number = Date.now()) {
    this.startTime = startTime;
    this.startedAt = startedAt;
  }

  /** Marks the request complete; keeps an end time already set. */
  finish(endTime: bigint = process.hrtime.bigint()): void {
    if (this.endTime === 0n) this.endTime = endTime;
  }

  /** Whole-request duration in seconds (up to now while the request is still running). */
  durationSeconds(): number {
    const end = this.endTime === 0n ? process.hrtime.bigint() : this.endTime;
    return nanosToSeconds(end - this.startTime);
  }

  /** Time spent on the upstream call in seconds, or -1 when no upstream call completed. */
  upstreamSeconds(): number {
    if (this.upstreamStartTime === 0n || this.upstreamEndTime === 0n) return -1;
    return nanosToSeconds(this.upstreamEndTime - this.upstreamStartTime);
  }

  /** Time from request start to the first token in seconds, or -1 when there was none. */
  timeToFirstTokenSeconds(): number {
    const first = this.llm?.firstTokenTime ?? 0n;
    return first === 0n ? -1 : nanosToSeconds(first - this.startTime);
  }
}

/** The part of an OpenTelemetry span the record holds (kept structural: no SDK type here). */
export interface TraceSpan {
  end(endTime?: number): void;
}

export function nanosToSeconds(nanos: bigint): number {
  return Number(nanos) / 1e9;
}
