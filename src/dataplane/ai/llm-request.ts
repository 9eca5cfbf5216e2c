// The request flow every LLM endpoint shares (an `ai` GwBackend's providers, a GwModel's targets):
// read and check the client's body once, then for each candidate endpoint in turn apply its AI
// policies, plan the upstream request, send it, and stop at the first attempt that answered the
// client. A failed attempt moves on only while nothing has been sent to the client.
import type { RouteType } from '../../api/types/ai.ts';
import { remainingMs, shorterTimeout } from '../../util/deadlines.ts';
import {
  type AuthIncoming,
  type BackendCredentialError,
  finishBackendAuth,
  NO_QUERY,
  settled,
} from '../auth/backend/index.ts';
import type { RoutedRequest } from '../backends/backend.ts';
import type { ResponseOutcome } from '../balancing/endpoint-health.ts';
import type { Subrequest } from '../policies/exchange.ts';
import type { HeaderMutation } from '../policies/ext-proc/messages.ts';
import type { NamedStep } from '../policies/pipeline.ts';
import { BodyRefusedError, BodyTooLargeError, readRequestBody } from '../proxy/body.ts';
import { responseCompleted } from '../proxy/client-response.ts';
import { addForwardedFor } from '../proxy/headers.ts';
import { parseJsonBody } from '../proxy/json-body.ts';
import { applyHeaderModifier, type HeaderBag } from '../routing/filters.ts';
import { type CelVariables, celContext } from '../telemetry/cel-context.ts';
import { LlmRecord, type RequestRecord } from '../telemetry/request-record.ts';
import { type ProviderEndpoint, upstreamClient } from './endpoint.ts';
import { type AttemptInput, attempt } from './exchange.ts';
import { geminiCall } from './formats/gemini/path.ts';
import { type ApiFormat, isStreaming, type JsonObject } from './formats/index.ts';
import { isPlainObject } from './formats/json.ts';
import { rerankRequestProblem } from './formats/rerank.ts';
import { guardRequest } from './guards/apply.ts';
import type { PickerResponsePhase } from './inference-pool/endpoint-picker.ts';
import { applyPickerResponseChanges, pickPoolMember } from './inference-pool/pool-routing.ts';
import { InlineModeration } from './inline-moderation.ts';
import { sendClientError, sendGatewayError } from './llm-answers.ts';
import { priceLlmRequest } from './model-prices.ts';
import { type ProviderSubrequest, providerSubrequest } from './provider-subrequest.ts';
import {
  type ClientFormat,
  type Origin,
  PlanError,
  ROUTE_CLIENT_FORMAT,
  type UpstreamPlan,
} from './providers/index.ts';
import { dropForeignVendorHeaders } from './vendor-headers.ts';

const NOT_AN_OBJECT = 'its body is not a JSON object';
/** Most bytes of a request body an InferencePool's endpoint picker may send back in its place. */
const MAX_PICKER_BODY_BYTES = 32 * 1024 * 1024;

type ReadObject = { body: JsonObject; problem?: undefined } | { problem: string; ambiguous: boolean };

/**
 * The client's body as a JSON object every parser reads the same way (proxy/json-body.ts), or
 * why it is not one (for the client), and whether that is because parsers would differ on it.
 */
function jsonObjectOf(bytes: Buffer): ReadObject {
  const parsed = parseJsonBody(bytes);
  if (parsed.problem !== undefined) {
    const problem = parsed.kind === 'syntax' ? NOT_AN_OBJECT : `The request body ${parsed.problem}.`;
    return { problem, ambiguous: parsed.kind === 'ambiguous' };
  }
  const value = parsed.value;
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { problem: NOT_AN_OBJECT, ambiguous: false };
  return { body: value as JsonObject };
}

/** Whether a Content-Type names JSON (`application/json`, with or without parameters). */
function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const semicolon = contentType.indexOf(';');
  const essence = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return essence === 'application/json';
}

export interface LlmRequest {
  routeType: RouteType;
  /** The format the client speaks (errors are answered in it). */
  format: ClientFormat;
  /**
   * Whether gw read the body as an LLM request (false for Passthrough, and for a Detect body
   * that is not a JSON object: both are forwarded as they are).
   */
  parsed: boolean;
  bytes: Buffer | undefined;
  body: JsonObject | undefined;
  stream: boolean;
  llm: LlmRecord;
}

/** One endpoint to try, and where to report how the attempt went. */
export interface Candidate {
  endpoint: ProviderEndpoint;
  /** The model to send instead of the client's (a virtual model target's `model`). */
  model?: string;
  /** The backend telemetry records for this attempt (a virtual model's target: `GwModel ns/name`). */
  backend?: string;
  /** Why the request may not be sent here (a target's authorization): answered instead of an attempt. */
  rejection?: { status: number; message: string };
  report(outcome: ResponseOutcome): void;
}

/** Where a path's route type came from, for messages: an `ai` backend's routes, or a GwModel route's API paths. */
export const BACKEND_ROUTES = "the backend's policies.ai.routes (its default routes when unset)";

/**
 * Why a JSON body is not a request of its route type's format, or undefined. The checks are the
 * fields that tell the formats apart, so that a body sent to the wrong path (a Responses or
 * Embeddings body on a Completions path) is refused rather than sent to an API that is not its own.
 */
function formatProblem(routeType: RouteType, body: JsonObject): string | undefined {
  switch (routeType) {
    case 'Completions':
    case 'Messages':
    case 'GammaTokenCount':
      return Array.isArray(body.messages) ? undefined : 'it has no "messages" array';
    case 'Responses':
      return body.messages === undefined ? undefined : 'it has "messages", which a Responses request does not';
    case 'Embeddings':
      return body.input !== undefined ? undefined : 'it has no "input"';
    case 'Rerank':
      return rerankRequestProblem(body);
    case 'GenerateContent':
      return Array.isArray(body.contents) ? undefined : 'it has no "contents" array';
    case 'DeltaCountTokens':
      return Array.isArray(body.contents) || isPlainObject(body.generateContentRequest)
        ? undefined
        : 'it has neither a "contents" array nor a "generateContentRequest"';
    default:
      return undefined;
  }
}

/** The message of a request refused because it does not fit the route type its path was given. */
function routeTypeMismatch(routeType: RouteType, path: string, routedBy: string, problem: string): string {
  return (
    `The request does not fit the ${routeType} route type (${problem}); gw applied ${routeType} to ${path} ` +
    `by ${routedBy}. Send it to its API's path, or map this path to its route type in ai.routes.`
  );
}

/** The 413 of a body over the LLM buffer limit: how big the limit is and the field that raises it. */
function tooLargeMessage(limit: number): string {
  const mib = limit / (1024 * 1024);
  const size = Number.isInteger(mib) ? `${mib} MiB` : `${limit} bytes`;
  return (
    `The request body is larger than ${size}, the most gw buffers for an LLM request (an image or a PDF counts ` +
    `as its base64 text). Raise it with the Gateway's Frontend policy field http.maxBufferSize ` +
    `(GwPolicy spec.frontend.http.maxBufferSize).`
  );
}

/**
 * Reads the client's request for an LLM route type. Answers the client itself (and returns
 * undefined) when the route type is not served, the body is too large, unreadable, not a JSON
 * object, not a request of the route type's format, or JSON that parsers read differently
 * (docs/decisions/0009-one-parse.md). A Detect body is read when it is a JSON object sent as
 * `application/json`; any other is forwarded unread, as agentgateway does
 * (docs/decisions/0006-detect-route-type.md), unless parsers would read it differently.
 * `routedBy` says where the route type came from, for the refusals that name it.
 */
export async function readLlmRequest(
  routed: RoutedRequest,
  routeType: RouteType,
  maxBodyBytes: number,
  routedBy: string = BACKEND_ROUTES,
): Promise<LlmRequest | undefined> {
  const { req, res, record } = routed;
  const path = routed.forward.path;
  const clientFormat = ROUTE_CLIENT_FORMAT[routeType];
  if (routeType === 'Realtime') {
    // An upgrade is taken by the session before the body is read (realtime/session.ts).
    sendClientError(
      res,
      'realtime',
      400,
      `${path} has the Realtime route type by ${routedBy}: it is served as a WebSocket session only. Open it with a WebSocket upgrade over HTTP/1.1 (GET with Upgrade: websocket).`,
    );
    return undefined;
  }
  if (clientFormat === undefined && routeType !== 'Passthrough' && routeType !== 'Detect') {
    sendClientError(
      res,
      'completions',
      400,
      `gw does not serve the ${routeType} route type yet; ${path} has it by ${routedBy}.`,
    );
    return undefined;
  }
  const format: ClientFormat = clientFormat ?? 'completions';
  const llm = new LlmRecord();
  record.llm = llm;
  const mustParse = clientFormat !== undefined && clientFormat !== 'models';
  let bytes: Buffer | undefined;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    try {
      // A traffic policy may have read the body already (buffering, external processing).
      bytes = routed.exchange ? await routed.exchange.readBody(maxBodyBytes) : await readRequestBody(req, maxBodyBytes);
    } catch (error) {
      if (error instanceof BodyRefusedError) {
        // The rest of the body is discarded unread: the connection cannot carry another request.
        if (req.httpVersionMajor === 1) res.setHeader('connection', 'close');
        const message =
          error instanceof BodyTooLargeError
            ? tooLargeMessage(error.limit)
            : `${error.message.charAt(0).toUpperCase()}${error.message.slice(1)}.`;
        sendClientError(res, format, error.status, message, undefined, error.status === 503 ? 'overloaded' : undefined);
      } else {
        sendClientError(res, format, 400, 'The request body could not be read.');
      }
      return undefined;
    }
    record.bytesIn = bytes.length;
  } else if (mustParse) {
    sendClientError(
      res,
      format,
      400,
      routeTypeMismatch(
        routeType,
        path,
        routedBy,
        `a ${req.method} has no body; ${routeType} requests are POSTs of JSON`,
      ),
    );
    return undefined;
  }
  return interpretLlmRequest(routed, { routeType, format, bytes, llm }, routedBy);
}

/** A request's body as it goes to one provider, and what it is read as. */
interface LlmBody {
  routeType: RouteType;
  format: ClientFormat;
  /** The body's bytes; undefined for a request without one (GET, HEAD). */
  bytes: Buffer | undefined;
  llm: LlmRecord;
}

/**
 * Reads `body.bytes` as an LLM request of its route type (checks, the Gemini call, the stream
 * flag, the record's model). Answers the client itself (and returns undefined) when it cannot
 * be. Used for the client's body, and again for a body a provider's transformation changed.
 */
function interpretLlmRequest(routed: RoutedRequest, input: LlmBody, routedBy: string): LlmRequest | undefined {
  const { req, res } = routed;
  const { routeType, format, bytes, llm } = input;
  const path = routed.forward.path;
  const clientFormat = ROUTE_CLIENT_FORMAT[routeType];
  const mustParse = clientFormat !== undefined && clientFormat !== 'models';
  let parsed: JsonObject | undefined;
  if (bytes !== undefined) {
    if (mustParse || (routeType === 'Detect' && isJsonContentType(req.headers['content-type']))) {
      const read = jsonObjectOf(bytes);
      if (read.problem === undefined) parsed = read.body;
      else if (mustParse || read.ambiguous) {
        // A Detect body gw cannot read is forwarded unread; one that parsers would read
        // differently is refused, as on every route type.
        const problem =
          read.problem === NOT_AN_OBJECT ? routeTypeMismatch(routeType, path, routedBy, read.problem) : read.problem;
        sendClientError(res, format, 400, problem);
        return undefined;
      }
    }
  }
  let body = parsed;
  if (body !== undefined && mustParse) {
    const problem = formatProblem(routeType, body);
    if (problem !== undefined) {
      sendClientError(res, format, 400, routeTypeMismatch(routeType, path, routedBy, problem));
      return undefined;
    }
  }
  let stream = body !== undefined && format !== 'rerank' && isStreaming(format as ApiFormat, body);
  if (body !== undefined && (format === 'gemini' || format === 'gemini_count_tokens')) {
    const read = readGeminiCall(routed, body);
    body = read.body;
    stream = read.stream;
  }
  llm.streaming = stream;
  llm.requestModel = typeof body?.model === 'string' ? body.model : '';
  llm.operation = format === 'embeddings' ? 'embeddings' : format === 'rerank' ? 'rerank' : 'chat';
  return { routeType, format, parsed: body !== undefined, bytes, body, stream, llm };
}

/**
 * The request of one attempt of a provider with request policies of its own (decision 0045):
 * those policies run on a copy of the request as the backend received it, and the LLM request is
 * read again when they changed the body. Undefined when the client has been answered.
 */
async function providerRequest(
  routed: RoutedRequest,
  request: LlmRequest,
  steps: readonly NamedStep[],
): Promise<(ProviderSubrequest & { request: LlmRequest }) | undefined> {
  const bytes = request.bytes ?? Buffer.alloc(0);
  const own = await providerSubrequest(routed, steps, bytes, request.format);
  if (own === undefined) return undefined;
  const changed = own.subrequest.body;
  if (changed === bytes || changed === undefined) return { ...own, request };
  const body = { routeType: request.routeType, format: request.format, bytes: changed, llm: request.llm };
  const read = interpretLlmRequest(own.routed, body, BACKEND_ROUTES);
  return read === undefined ? undefined : { ...own, request: read };
}

/**
 * A Gemini request's model and method, which its URL holds, go into the body gw works on as
 * `model` and `stream: true` (:streamGenerateContent), where every format has them: routing,
 * GwModel matching, model aliases, the log and the translations read them there, and the planner
 * takes them out again for a Gemini provider. The client's `alt` query (the stream's framing) is
 * gw's to set for the provider, and its `key` query (the Gemini API's other place for a key) is a
 * client credential, which gw does not forward (as it does not forward x-goog-api-key).
 */
function readGeminiCall(routed: RoutedRequest, body: JsonObject): { body: JsonObject; stream: boolean } {
  const call = geminiCall(routed.forward.path);
  const query = routed.forward.query;
  if (query.includes('alt=') || query.includes('key=')) {
    const params = new URLSearchParams(query);
    params.delete('alt');
    params.delete('key');
    routed.forward.query = params.toString();
  }
  const stream = call.method === 'streamGenerateContent';
  if (call.model === undefined && !stream) return { body, stream };
  const read: JsonObject = { ...body };
  if (call.model !== undefined) read.model = call.model;
  if (stream) read.stream = true;
  return { body: read, stream };
}

/**
 * Tries candidates (from `next`, at most `total`) until one answers the client. The last
 * candidate always answers, with the provider's own error when it failed.
 */
export async function runAttempts(
  routed: RoutedRequest,
  request: LlmRequest,
  total: number,
  next: () => Candidate | undefined,
): Promise<void> {
  const { req, res, record } = routed;
  const { format, routeType, llm } = request;
  const gone = new AbortController();
  const onClose = () => {
    if (!responseCompleted(res)) gone.abort();
  };
  res.once('close', onClose);
  const clientHeaders = clientHeadersForUpstream(routed);
  /** The current attempt's InferencePool picker stream, open for its response phase. */
  let pickerPhase: PickerResponsePhase | undefined;
  try {
    let candidate = next();
    for (let attemptNumber = 1; candidate; attemptNumber++) {
      pickerPhase?.close();
      pickerPhase = undefined;
      const { endpoint } = candidate;
      if (candidate.rejection)
        return sendGatewayError(res, record, format, candidate.rejection.status, candidate.rejection.message);
      const canRetry = attemptNumber < total;
      // A provider's own extAuth and transformation check and change its attempt's copy of the
      // request (decision 0045); without them the attempt sends the request as it is.
      let outgoing = { routed, request, clientHeaders };
      let subrequest: Subrequest | undefined;
      if (endpoint.requestPolicies) {
        const own = await providerRequest(routed, request, endpoint.requestPolicies);
        if (own === undefined) return;
        subrequest = own.subrequest;
        outgoing = { routed: own.routed, request: own.request, clientHeaders: clientHeadersForUpstream(own.routed) };
      }
      const variables = celContext(record);
      let body = outgoing.request.body;
      if (body !== undefined && candidate.model !== undefined) body = { ...body, model: candidate.model };
      if (body !== undefined) {
        const applied = endpoint.policy.applyToRequest(body, format as ApiFormat, routeType, variables);
        if (applied.rejected)
          return sendGatewayError(res, record, format, applied.rejected.status, applied.rejected.message);
        body = applied.body;
      }
      const moderation = endpoint.moderation;
      const unmoderatable = moderation?.refusal(routeType, outgoing.request.stream);
      if (unmoderatable !== undefined) return sendClientError(res, format, 400, unmoderatable);
      // What guard services are told of the request (its headers, its CEL variables), and when to stop.
      const guardContext = endpoint.guards && { headers: req.headers, variables, signal: gone.signal };
      if (endpoint.guards) {
        // The provider whose guards these are: the telemetry of a request they refuse names it.
        llm.providerFamily = endpoint.provider.family;
        llm.genAiProvider = endpoint.genAiProviderName;
        llm.providerName = endpoint.name;
        let guarded = guardRequest(endpoint.guards, routeType, format, body, guardContext!, res, llm);
        if (guarded instanceof Promise) guarded = await guarded;
        if (guarded === false || gone.signal.aborted) return;
        body = guarded;
      }
      const plan = endpoint.provider.plan({
        clientFormat: format,
        routeType,
        body,
        stream: outgoing.request.stream,
        headers: req.headers,
        method: subrequest?.method ?? req.method,
        path: outgoing.routed.forward.path,
      });
      if (plan instanceof PlanError) return sendGatewayError(res, record, format, plan.status, plan.message);
      let sendBody = plan.body;
      // promptCaching marks chat requests only (planned in a format, not forwarded as they are).
      if (sendBody !== undefined && (plan.response.kind === 'same' || plan.response.kind === 'translate'))
        sendBody = endpoint.policy.markPromptCache(sendBody, plan.providerFormat, plan.upstreamModel);
      if (sendBody !== undefined && outgoing.request.body !== undefined)
        sendBody = endpoint.policy.applyFinal(sendBody, variables).body;
      // An alpha provider's inline moderation: its parameter on every chat request, last (decision 0029).
      const moderated =
        moderation !== undefined &&
        sendBody !== undefined &&
        InlineModeration.moderates(plan.providerFormat, plan.response.kind);
      if (moderated) sendBody = moderation.mark(sendBody!);
      // An unchanged body goes upstream as the client's own bytes: no second serialisation.
      let payload =
        sendBody === undefined || (sendBody === outgoing.request.body && outgoing.request.bytes !== undefined)
          ? outgoing.request.bytes
          : Buffer.from(JSON.stringify(sendBody));
      // An attempt that another may follow changes a copy of the client's headers; the last one
      // (it always answers the client) takes them as they are.
      const headers = canRetry ? { ...outgoing.clientHeaders } : outgoing.clientHeaders;
      let client = upstreamClient(endpoint, plan.origin);
      let upstreamHost = hostAndPort(plan.origin);
      // An InferencePool's member: its endpoint picker sees the request before gw's credentials join it.
      if (endpoint.pool) {
        const query = outgoing.routed.forward.query;
        const picked = await pickPoolMember(
          endpoint.pool,
          {
            method: plan.method,
            scheme: record.scheme === 'https' ? 'https' : 'http',
            authority: String(req.headers.host ?? record.host),
            path: query ? `${plan.path}?${query}` : plan.path,
            headers,
            body: payload,
          },
          MAX_PICKER_BODY_BYTES,
        );
        // Closed with the next attempt or the request's end, whichever comes first.
        if (picked.kind === 'member') pickerPhase = picked.response;
        if (gone.signal.aborted) return;
        if (picked.kind === 'answer') {
          const answer = picked.response;
          const text = answer.body === undefined ? '' : answer.body.toString().trim();
          return sendClientError(res, format, answer.status, text || 'The endpoint picker refused the request.');
        }
        if (picked.kind === 'refused') {
          record.error = picked.detail;
          if (canRetry) {
            candidate = next();
            continue;
          }
          return sendGatewayError(res, record, format, 503, picked.detail);
        }
        if (picked.failedOpen) record.error = picked.failedOpen;
        if (picked.body !== undefined) payload = picked.body;
        client = picked.member.client;
        upstreamHost = picked.member.address;
      }
      let prepared = prepareUpstreamRequest(outgoing.routed, endpoint, plan, headers, payload, variables);
      if (prepared instanceof Promise) prepared = await prepared;
      const failure = typeof prepared === 'string' ? undefined : prepared;
      const path = typeof prepared === 'string' ? prepared : '';
      if (failure !== undefined) {
        record.error = failure.logText;
        // gw could not get this provider's credential: the next provider may serve. A 4xx is about
        // the client's own request (its token refused, a value computed from it invalid): no other
        // provider would take it either.
        if (canRetry && failure.status >= 500) {
          subrequest?.abandon();
          candidate = next();
          continue;
        }
        // A 5xx is gw's own: the client gets a request id and the log keeps the detail (which
        // sendGatewayError records); a 4xx tells the client what was wrong with its request.
        return sendGatewayError(
          res,
          record,
          format,
          failure.status,
          failure.status < 500 ? failure.message : failure.logText,
        );
      }
      llm.providerFamily = endpoint.provider.family;
      llm.genAiProvider = endpoint.genAiProviderName;
      if (candidate.backend !== undefined) record.backend = candidate.backend;
      llm.providerName = endpoint.name;
      record.upstreamHost = upstreamHost;
      record.upstreamStartTime = process.hrtime.bigint();
      const result = await attempt({
        res,
        record,
        client,
        plan,
        clientFormat: format,
        body: payload,
        headers,
        path,
        timeoutMs: attemptDeadline(routed, endpoint),
        unhealthy: endpoint.unhealthy,
        ...(endpoint.guards?.hasResponseGuards
          ? { guards: { compiled: endpoint.guards, request: guardContext! } }
          : {}),
        ...(moderated ? { moderation } : {}),
        canRetry,
        ...responseHooks(endpoint, pickerPhase, upstreamHost, record),
        clientGone: gone.signal,
      });
      record.upstreamEndTime = process.hrtime.bigint();
      candidate.report({ ...result.observed, unhealthy: result.unhealthy });
      if (result.answered) {
        if (result.usage) llm.usage = result.usage;
        if (result.responseModel) llm.responseModel = result.responseModel;
        // A token count costs nothing: its usage is what a request would use, not what this one did.
        if (format !== 'count_tokens' && format !== 'gemini_count_tokens') priceLlmRequest(record);
        if (result.firstTokenMs !== undefined)
          llm.firstTokenTime = record.upstreamStartTime + BigInt(Math.round(result.firstTokenMs * 1e6));
        if (result.error) record.error = result.error;
        return;
      }
      record.error = result.error ?? '';
      // What this provider's policies set for the response does not apply to the next one's.
      subrequest?.abandon();
      candidate = next();
    }
    // The candidates ran out before `total` (a router offered fewer): answer for them.
    sendClientError(res, format, 502, 'No provider could serve the request.');
  } finally {
    pickerPhase?.close();
    res.off('close', onClose);
  }
}

/**
 * What an attempt does with its response head: a GwModel's response header changes, and an
 * InferencePool picker's response phase — told the head and the endpoint that served it, its
 * header changes applied after the model's. A picker that fails here leaves the response as it
 * is; the log says why.
 */
function responseHooks(
  endpoint: ProviderEndpoint,
  picker: PickerResponsePhase | undefined,
  servedBy: string,
  record: RequestRecord,
): Pick<AttemptInput, 'onResponseHeaders' | 'onUpstreamHead'> {
  const modifier = endpoint.headers?.response;
  if (picker === undefined)
    return { onResponseHeaders: modifier ? (headers) => applyHeaderModifier(modifier, headers) : undefined };
  let changes: HeaderMutation | undefined;
  return {
    onUpstreamHead: async (status, headers) => {
      const told = await picker.served(servedBy, status, headers);
      if ('failure' in told) record.error = `the endpoint picker's response phase failed: ${told.failure}`;
      else changes = told.mutation;
    },
    onResponseHeaders: (headers) => {
      if (modifier) applyHeaderModifier(modifier, headers);
      if (changes) applyPickerResponseChanges(headers, changes);
    },
  };
}

/**
 * Completes the headers and target of one upstream request for a plan: the plan's headers over
 * the client's (a translated request without other vendors' headers), the body's length, a
 * GwModel's header changes, the plan's query over the client's, and the backend auth (which may
 * fetch a credential, write the query, or sign the final request). `headers` is changed in place;
 * `clientQuery` is the client's query as it goes on (the routed request's unless given).
 * Returns the path and query to send, or why the provider's credential could not be had.
 */
export function prepareUpstreamRequest(
  routed: RoutedRequest,
  endpoint: ProviderEndpoint,
  plan: UpstreamPlan,
  headers: Record<string, string | string[]>,
  payload: Buffer | undefined,
  variables: CelVariables,
  clientQuery: string = routed.forward.query,
): PreparedRequest | Promise<PreparedRequest> {
  // A translated request carries no other vendor's headers (anthropic-version to OpenAI...).
  if (plan.response.kind === 'translate' || plan.response.kind === 'convert')
    dropForeignVendorHeaders(headers, plan.providerFormat, endpoint.provider.family);
  const planned = plan.headers;
  for (const name in planned) headers[name] = planned[name]!;
  // The plan's headers carry the content type of a body gw read; forwarded bytes keep the client's.
  if (payload !== undefined) headers['content-length'] = String(payload.length);
  if (endpoint.headers)
    for (const step of endpoint.headers.request)
      if (step.kind === 'headers') applyHeaderModifier(step.modifier, headers as HeaderBag);
  const auth = endpoint.auth;
  const incoming: AuthIncoming = { headers: routed.req.headers, variables: () => variables };
  // The path with its query, and the signing of the final request when the auth has a signer.
  const finish = (pending: void | Promise<void>, search: string): PreparedRequest | Promise<PreparedRequest> => {
    const path = search ? `${plan.path}?${search}` : plan.path;
    const finishing = finishBackendAuth(
      pending,
      auth,
      () => ({ method: plan.method, origin: originText(plan.origin), path, headers, body: payload }),
      incoming,
    );
    return finishing === undefined ? path : finishing.then((failure) => failure ?? path);
  };
  if (clientQuery !== '' || plan.query.length > 0 || auth?.writesQuery) {
    const query = new URLSearchParams(clientQuery);
    for (const [name, value] of plan.query) query.set(name, value);
    const pending = auth?.apply({ headers, query }, incoming);
    // A credential being fetched writes the query when it comes.
    if (pending !== undefined) return settled(pending).then(() => finish(pending, query.toString()));
    return finish(pending, query.toString());
  }
  // Most requests: no query, and a credential at hand — no promise at all.
  return finish(auth?.apply({ headers, query: NO_QUERY }, incoming), clientQuery);
}

/** The path and query to send, or why the provider's credential could not be had. */
type PreparedRequest = string | BackendCredentialError;

/**
 * The deadline of one attempt: what is left of the request's own deadline (HTTPRoute
 * timeouts.request, traffic.timeouts.request: the whole request from its arrival, every attempt
 * of a failover included), and each attempt's (HTTPRoute timeouts.backendRequest, the provider's
 * BackendHTTP.requestTimeout).
 */
export function attemptDeadline(routed: RoutedRequest, endpoint: ProviderEndpoint): number | undefined {
  const { route, record } = routed;
  const perAttempt = shorterTimeout(route.backendRequestTimeoutMs, endpoint.requestTimeoutMs);
  if (route.requestTimeoutMs === undefined) return perAttempt;
  return shorterTimeout(remainingMs(route.requestTimeoutMs, record.startTime, process.hrtime.bigint()), perAttempt);
}

/** Framing headers gw sets itself for the body it sends. */
const FRAMING: ReadonlySet<string> = new Set(['content-length', 'accept-encoding']);

/**
 * The client's credentials (for the gateway) and its Host (gw sends the provider's): a provider
 * gets them only when a traffic policy set them (a header modifier, a transformation), that is,
 * when they are no longer the client's own.
 */
const CLIENT_OWN: ReadonlySet<string> = new Set(['authorization', 'x-api-key', 'host']);

/**
 * The client's headers as every attempt starts from them: without its credentials (passthrough
 * auth adds them back on purpose) and framing, with X-Forwarded-For and -Proto. A new object
 * rather than deletes on `routed.forward.headers`, which would make that a slow dictionary.
 */
export function clientHeadersForUpstream(routed: RoutedRequest): Record<string, string | string[]> {
  const forwarded = routed.forward.headers as Record<string, string | string[]>;
  const incoming = routed.req.headers;
  const headers: Record<string, string | string[]> = {};
  for (const name in forwarded) {
    if (FRAMING.has(name) || (CLIENT_OWN.has(name) && forwarded[name] === incoming[name])) continue;
    headers[name] = forwarded[name]!;
  }
  addForwardedFor(headers, routed.record.clientAddress, routed.scheme);
  return headers;
}

/** `host:port` of a provider origin, made once per origin (the access log's upstream). */
const originLabels = new WeakMap<Origin, string>();

/** scheme://host:port of a provider's origin. */
function originText(origin: Origin): string {
  const host = origin.host.includes(':') ? `[${origin.host}]` : origin.host;
  return `${origin.protocol}//${host}:${origin.port}`;
}

/** `host:port` of a provider's origin (the access log's upstream). */
export function hostAndPort(origin: Origin): string {
  let label = originLabels.get(origin);
  if (label === undefined) {
    label = `${origin.host}:${origin.port}`;
    originLabels.set(origin, label);
  }
  return label;
}
