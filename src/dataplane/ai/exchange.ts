// One attempt of an LLM request against one provider: send the planned request, judge the answer
// (healthy or not), and — unless the caller may still fail over — answer the client in its own
// format, translating the body or the stream event by event (a Detect route's answer is passed
// on as it is, read only for its usage; a Passthrough route's is passed on unread). Nothing is sent to the client before the attempt is
// known to be final, so a failed attempt can move to the next provider.
import type { ObservedResponse } from '../balancing/endpoint-health.ts';
import { BodyTooLargeError } from '../proxy/body.ts';
import { type ClientResponse, writableOf } from '../proxy/client-response.ts';
import { forwardedResponseHeaders } from '../proxy/headers.ts';
import { type ForwardOutcome, failureDetail, failureOf, statusForFailure } from '../proxy/http-forward.ts';
import { pipeUpstreamBody } from '../proxy/pipe-body.ts';
import type { HeaderBag } from '../routing/filters.ts';
import type { LlmRecord, RequestRecord } from '../telemetry/request-record.ts';
import type { UpstreamBody, UpstreamClient, UpstreamResponse } from '../upstream/client.ts';
import { InvalidUpstreamRequestError } from '../upstream/http1/request-head.ts';
import { geminiTokenCount } from './formats/gemini/count-tokens.ts';
import {
  createStreamObserver,
  createStreamTranslator,
  detectedResponseFormat,
  googleRetryDelaySeconds,
  type JsonObject,
  type ObservingProcessor,
  providerErrorMessage,
  type StreamProcessor,
  streamErrorEvent,
  type TranslatedAnswer,
  TranslationError,
  translateErrorBody,
  translateResponse,
  type Usage,
  usageFromResponse,
} from './formats/index.ts';
import { isPlainObject, stringOr } from './formats/json.ts';
import { rerankErrorBody, rerankUsage } from './formats/rerank.ts';
import { TRUNCATED_MESSAGE } from './formats/stream.ts';
import { guardAnswer, recordGuardOutcomes } from './guards/apply.ts';
import type { CompiledPromptGuards, GuardRequestContext } from './guards/prompt-guard.ts';
import type { StreamStep } from './guards/stream-guard.ts';
import type { InlineModeration } from './inline-moderation.ts';
import { sendClientError, sendGatewayError } from './llm-answers.ts';
import { type ClientFormat, errorFormat, type UpstreamPlan } from './providers/index.ts';

/** Framing headers of a provider response that gw sets itself for the body it sends. */
const REBUILT_RESPONSE_HEADERS: ReadonlySet<string> = new Set(['content-length', 'content-encoding']);

/** The client's error message for an attempt that got no response (its status: statusForFailure). */
const FAILURE_MESSAGES: Record<NonNullable<ForwardOutcome['failure']>, string> = {
  connect: 'The provider could not be reached.',
  timeout: 'The provider did not answer in time.',
  reset: 'The provider closed the connection or answered with something that is not HTTP.',
  aborted: 'The provider request was aborted.',
};

/** Most bytes of a non-streamed provider response gw holds to translate or meter it. */
const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/** The content type of a ConverseStream answer (AWS event-stream frames). */
const EVENT_STREAM_TYPE = 'application/vnd.amazon.eventstream';

export interface AttemptInput {
  res: ClientResponse;
  /** The request's record: what a failure of gw's own is written to. */
  record: RequestRecord;
  client: UpstreamClient;
  plan: UpstreamPlan;
  clientFormat: ClientFormat;
  /** The request body bytes to send (the plan's body serialised, or the client's bytes). */
  body: Buffer | undefined;
  headers: Record<string, string | string[]>;
  /** Path and query as sent. */
  path: string;
  timeoutMs: number | undefined;
  /** Judges a response (or a connection failure) unhealthy; true makes the attempt fail over when it can. */
  unhealthy: (response: ObservedResponse) => boolean;
  /** The provider's response guards: on a whole answer before the client gets it; on a stream as it passes when streaming is Enabled. */
  guards?: { compiled: CompiledPromptGuards; request: GuardRequestContext };
  /** The provider's inline moderation, when the request carries its parameter: its results are read from the answer. */
  moderation?: InlineModeration | undefined;
  /** Whether another provider may still be tried after this one. */
  canRetry: boolean;
  /** Aborted when the client goes away. */
  clientGone: AbortSignal;
  /** Changes the response headers before they are sent (a model's header policy). */
  onResponseHeaders?: ((headers: HeaderBag) => void) | undefined;
  /**
   * Awaited once the upstream's response head has arrived, before anything is made of it: an
   * InferencePool picker's response phase, which hears of every response its endpoint gives.
   */
  onUpstreamHead?: ((status: number, headers: UpstreamResponse['headers']) => Promise<void>) | undefined;
}

export interface AttemptResult {
  /** The client has been answered; otherwise the caller tries the next provider. */
  answered: boolean;
  observed: ObservedResponse;
  unhealthy: boolean;
  latencyMs: number;
  usage?: Usage;
  responseModel?: string;
  /** Milliseconds from the start of the attempt to the first generated token (streams). */
  firstTokenMs?: number;
  /** Short reason for the log when the exchange failed. */
  error?: string;
}

export async function attempt(input: AttemptInput): Promise<AttemptResult> {
  const started = performance.now();
  // The deadline, when there is one, and the client going away both abort the upstream request.
  const timeout = input.timeoutMs === undefined ? undefined : AbortSignal.timeout(input.timeoutMs);
  const signal = timeout ? AbortSignal.any([input.clientGone, timeout]) : input.clientGone;
  let response: UpstreamResponse;
  try {
    response = await input.client.request({
      path: input.path,
      method: input.plan.method,
      headers: input.headers,
      body: input.body,
      signal,
    });
  } catch (error) {
    const latencyMs = performance.now() - started;
    if (input.clientGone.aborted)
      return { answered: true, observed: {}, unhealthy: false, latencyMs, error: 'client went away' };
    if (error instanceof InvalidUpstreamRequestError) {
      // Nothing was sent: a header gw's configuration set (a modifier, a transformation) cannot be written.
      const detail = `The provider request could not be built: ${error.message}.`;
      sendGatewayError(input.res, input.record, input.clientFormat, 500, detail);
      return { answered: true, observed: {}, unhealthy: false, latencyMs, error: detail };
    }
    const failure = timeout?.aborted ? 'timeout' : failureOf(error);
    const observed: ObservedResponse = { connectionFailed: true, latencyMs };
    const unhealthy = input.unhealthy(observed);
    const detail = failureDetail(error);
    const logged = `upstream ${failure}${detail !== undefined ? ` (${detail})` : ''}`;
    if (unhealthy && input.canRetry) return { answered: false, observed, unhealthy, latencyMs, error: logged };
    sendClientError(input.res, input.clientFormat, statusForFailure(failure), FAILURE_MESSAGES[failure ?? 'reset']);
    return { answered: true, observed, unhealthy, latencyMs, error: logged };
  }
  const status = response.statusCode;
  const observed: ObservedResponse = { status, latencyMs: performance.now() - started };
  if (input.onUpstreamHead !== undefined) await input.onUpstreamHead(status, response.headers);
  const unhealthy = input.unhealthy(observed);
  if (unhealthy && input.canRetry) {
    response.body.discard();
    return { answered: false, observed, unhealthy, latencyMs: observed.latencyMs!, error: `upstream status ${status}` };
  }
  if (input.plan.response.kind === 'passthrough') return passResponse(input, response, observed, unhealthy);
  const contentType = String(response.headers['content-type'] ?? '');
  // ConverseStream (zeta) answers in AWS event-stream frames, every other provider in SSE.
  const streamType = input.plan.providerFormat === 'converse' ? EVENT_STREAM_TYPE : 'text/event-stream';
  // A converted answer (embeddings, token counts) is never a stream: it is read whole.
  if (status < 300 && input.plan.response.kind !== 'convert' && contentType.startsWith(streamType)) {
    return streamResponse(input, response, observed, unhealthy, started);
  }
  let bytes: Buffer;
  try {
    bytes = await response.body.readAll(MAX_RESPONSE_BYTES);
  } catch (error) {
    const message =
      error instanceof BodyTooLargeError ? 'The provider response is too large.' : 'The provider response was cut off.';
    sendClientError(input.res, input.clientFormat, 502, message);
    return { answered: true, observed, unhealthy, latencyMs: observed.latencyMs!, error: message };
  }
  return respondWhole(input, status, response.headers, bytes, observed, unhealthy);
}

function respondWhole(
  input: AttemptInput,
  status: number,
  upstreamHeaders: UpstreamResponse['headers'],
  bytes: Buffer,
  observed: ObservedResponse,
  unhealthy: boolean,
): AttemptResult | Promise<AttemptResult> {
  const handling = input.plan.response;
  const result: AttemptResult = { answered: true, observed, unhealthy, latencyMs: observed.latencyMs! };
  const headers = forwardedResponseHeaders(upstreamHeaders, REBUILT_RESPONSE_HEADERS);
  let out: Buffer | string = bytes;
  if (status >= 400) {
    if (
      handling.kind === 'translate' ||
      handling.kind === 'token-count' ||
      handling.kind === 'convert' ||
      (handling.kind === 'same' && handling.rewriteErrors)
    ) {
      // An error of the client's own shape passes as it is; another (Google's from Vertex,
      // Anthropic's to a Gemini countTokens client, Google's or Bedrock's to a converted request)
      // is rewritten.
      const client = errorFormat(input.clientFormat);
      const from =
        handling.kind === 'translate'
          ? handling.from
          : handling.kind === 'token-count'
            ? 'count_tokens'
            : handling.kind === 'convert'
              ? handling.errorsFrom
              : client;
      // A rerank client reads Cohere's {"message"}: the provider's message goes in it.
      const translated =
        input.clientFormat === 'rerank'
          ? rerankErrorBody(providerErrorMessage(status, bytes.toString('utf8')))
          : translateErrorBody(from, client, status, bytes.toString('utf8'));
      out = translated.body;
      headers['content-type'] = translated.contentType;
    }
    // Google says when to retry in the body; every client reads Retry-After.
    if (headers['retry-after'] === undefined) {
      const seconds = googleRetryDelaySeconds(bytes.toString('utf8'));
      if (seconds !== undefined) headers['retry-after'] = String(seconds);
    }
    result.error = `upstream status ${status}`;
  } else if (handling.kind === 'detect') {
    // Passed on as it is; metered when it is JSON in a format gw knows.
    const parsed = parseJson(bytes);
    if (isPlainObject(parsed)) {
      const format = detectedResponseFormat(parsed);
      if (format !== undefined) result.usage = usageFromResponse(format, parsed);
      result.responseModel = stringOr(parsed.model);
    }
  } else if (handling.kind === 'convert') {
    const parsed = parseJson(bytes);
    let answer: TranslatedAnswer;
    try {
      if (!isPlainObject(parsed)) throw new TranslationError('the body is not a JSON object');
      answer = handling.readAnswer(parsed, (name) => headerText(upstreamHeaders[name]));
    } catch (error) {
      const reason = error instanceof TranslationError ? error.message : 'the body is not of its API';
      sendClientError(input.res, input.clientFormat, 502, `The provider response could not be translated: ${reason}`);
      return { ...result, error: 'untranslatable upstream response' };
    }
    if (answer.usage !== undefined) result.usage = answer.usage;
    if (input.plan.upstreamModel !== undefined) result.responseModel = input.plan.upstreamModel;
    out = JSON.stringify(answer.body);
    headers['content-type'] = 'application/json';
  } else if (input.plan.providerFormat !== 'models') {
    const parsed = parseJson(bytes) as JsonObject | undefined;
    if (parsed === undefined || typeof parsed !== 'object' || parsed === null) {
      sendClientError(input.res, input.clientFormat, 502, 'The provider answered with a body that is not JSON.');
      return { ...result, error: 'upstream body is not JSON' };
    }
    const format = input.plan.providerFormat;
    if (format === 'realtime') throw new Error('a Realtime session is not an HTTP exchange (realtime/session.ts)');
    // Vertex AI predict and Bedrock InvokeModel answers are only ever converted (above).
    if (format === 'rerank') result.usage = rerankUsage(parsed);
    else if (format !== 'vertex-predict' && format !== 'bedrock-invoke')
      result.usage = usageFromResponse(format, parsed);
    // Gemini names the model that answered modelVersion; Converse names none, so the model is
    // the one gw put in the path (as its streams report it).
    result.responseModel =
      format === 'converse'
        ? input.plan.upstreamModel
        : stringOr(format === 'gemini' ? parsed.modelVersion : parsed.model);
    if (input.moderation !== undefined) {
      const judged = input.moderation.judge(parsed);
      if (input.record.llm) input.record.llm.moderation = judged.record;
      if (judged.rejection !== undefined) {
        sendClientError(input.res, input.clientFormat, judged.rejection.status, judged.rejection.message);
        return { ...result, error: `rejected by inline moderation: ${judged.rejection.reason}` };
      }
    }
    if (handling.kind === 'token-count') {
      const count = geminiTokenCount(parsed);
      if (count === undefined) {
        sendClientError(
          input.res,
          input.clientFormat,
          502,
          'The provider answered with a body that is not a token count.',
        );
        return { ...result, error: 'untranslatable upstream response' };
      }
      out = JSON.stringify(count);
      headers['content-type'] = 'application/json';
    } else if (handling.kind === 'translate') {
      try {
        // Converse names no model: the client is shown the one gw put in the path.
        const model = handling.from === 'converse' ? input.plan.upstreamModel : undefined;
        const translated = translateResponse(handling.from, handling.to, parsed, model === undefined ? {} : { model });
        out = JSON.stringify(translated);
        headers['content-type'] = 'application/json';
      } catch (error) {
        sendClientError(
          input.res,
          input.clientFormat,
          502,
          `The provider response could not be translated: ${(error as Error).message}`,
        );
        return { ...result, error: 'untranslatable upstream response' };
      }
    }
  }
  if (input.guards && status < 300 && input.record.llm) {
    const guarded = guardWholeAnswer(input, input.guards, out, input.record.llm);
    if (guarded instanceof Promise)
      return guarded.then((settled) => writeGuarded(input, status, headers, out, settled, result));
    return writeGuarded(input, status, headers, out, guarded, result);
  }
  return writeWhole(input, status, headers, out, result);
}

/** Writes what the response guards left of `out` (undefined: they rejected it, and answered). */
function writeGuarded(
  input: AttemptInput,
  status: number,
  headers: Record<string, unknown>,
  out: Buffer | string,
  guarded: Buffer | string | undefined,
  result: AttemptResult,
): AttemptResult {
  if (guarded === undefined) return { ...result, error: 'response rejected by a prompt guard' };
  if (guarded !== out) headers['content-type'] = 'application/json';
  return writeWhole(input, status, headers, guarded, result);
}

function writeWhole(
  input: AttemptInput,
  status: number,
  headers: Record<string, unknown>,
  out: Buffer | string,
  result: AttemptResult,
): AttemptResult {
  headers['content-length'] = Buffer.byteLength(out);
  input.onResponseHeaders?.(headers as HeaderBag);
  input.res.writeHead(status, headers as Record<string, string>);
  input.res.end(out);
  return result;
}

/**
 * The response guards over the answer about to be written (`out`, in the client's format).
 * Returns what to write (the same bytes when nothing was masked), or undefined when a guard
 * rejected it and the client has been answered.
 */
function guardWholeAnswer(
  input: AttemptInput,
  guards: NonNullable<AttemptInput['guards']>,
  out: Buffer | string,
  llm: LlmRecord,
): Buffer | string | undefined | Promise<Buffer | string | undefined> {
  const answer = parseJson(typeof out === 'string' ? Buffer.from(out) : out);
  if (!isPlainObject(answer)) return out;
  const written = (guarded: JsonObject | undefined) =>
    guarded === undefined ? undefined : guarded === answer ? out : JSON.stringify(guarded);
  const guarded = guardAnswer(guards.compiled, input.clientFormat, answer, guards.request, input.res, llm);
  return guarded instanceof Promise ? guarded.then(written) : written(guarded);
}

async function streamResponse(
  input: AttemptInput,
  response: UpstreamResponse,
  observed: ObservedResponse,
  unhealthy: boolean,
  started: number,
): Promise<AttemptResult> {
  const handling = input.plan.response;
  const providerFormat = input.plan.providerFormat;
  const translates = handling.kind === 'translate' && handling.from !== handling.to;
  // A stream passed on (not translated) is observed; its observer writes the error event that
  // ends it early, in the stream's own format (a Detect stream's is known once its events tell it).
  let observer: ObservingProcessor | undefined;
  let processor: StreamProcessor;
  if (handling.kind === 'translate') {
    processor = createStreamTranslator(handling.from, handling.to, {
      includeUsage: handling.includeUsage,
      ...(handling.from === 'converse' && input.plan.upstreamModel !== undefined
        ? { model: input.plan.upstreamModel }
        : {}),
    });
  } else {
    observer = createStreamObserver(
      handling.kind === 'detect'
        ? 'detect'
        : providerFormat === 'messages' || providerFormat === 'responses' || providerFormat === 'gemini'
          ? providerFormat
          : 'completions',
      { dropUsageOnlyChunk: handling.kind === 'same' && handling.dropUsageOnlyChunk },
    );
    processor = observer;
  }
  const res = input.res;
  const headers = forwardedResponseHeaders(response.headers, REBUILT_RESPONSE_HEADERS);
  headers['content-type'] = 'text/event-stream';
  headers['cache-control'] = 'no-cache';
  input.onResponseHeaders?.(headers as HeaderBag);
  res.writeHead(response.statusCode, headers as Record<string, string>);
  res.flushHeaders();
  const result: AttemptResult = { answered: true, observed, unhealthy, latencyMs: observed.latencyMs! };
  const chunks = response.body[Symbol.asyncIterator]();
  let upstreamEnded = false;
  // Inline moderation with Score only (Block refuses streams): its results are read as they pass.
  const moderation = input.moderation?.streamReader();
  // With promptGuard.streaming Enabled, response guards read what the client is about to get:
  // regex Reject guards as it passes, guards that call a service in windows held until they pass.
  const guard = input.guards?.compiled.streamGuard(input.clientFormat, input.guards.request);
  /** What the client gets of a guard's step: text to write, or undefined after ending its stream on the rejection. */
  const delivered = (step: StreamStep): string | undefined => {
    if (step.rejected === undefined) return step.send;
    if (!res.destroyed) res.write(guard!.errorEvent(step.rejected.status, step.rejected.message));
    result.error = 'response rejected by a prompt guard';
    return undefined;
  };
  /** A window's check, waited for; the client may have gone away meanwhile, and then gets nothing more. */
  const checked = async (step: Promise<StreamStep>): Promise<StreamStep> => {
    const settled = await step;
    if (input.clientGone.aborted) throw new Error('client went away');
    return settled;
  };
  /**
   * Writes `text`; a promise to wait for the client to take it (unless its stream is over). The
   * first token is timed as the client gets it: when nothing generated so far is held back.
   */
  const send = (text: string, over: boolean): Promise<void> | undefined => {
    const flowing = text.length === 0 || res.write(text);
    if (result.firstTokenMs === undefined && processor.firstTokenSeen && !guard?.holding)
      result.firstTokenMs = performance.now() - started;
    return flowing || over ? undefined : waitForDrain(res, input.clientGone);
  };
  let next: Promise<IteratorResult<Buffer>> | undefined;
  try {
    for (;;) {
      next ??= chunks.next();
      // Text held for a window is checked once it has waited long enough, without waiting for more of the stream.
      const due = guard?.dueIn();
      const step = due === undefined ? await next : await within(next, due);
      if (step === undefined) {
        const released = guard!.release();
        const out = delivered(released instanceof Promise ? await checked(released) : released);
        if (out === undefined) break;
        await send(out, false);
        continue;
      }
      next = undefined;
      if (step.done) {
        upstreamEnded = true;
        break;
      }
      moderation?.write(step.value);
      const text = processor.write(step.value);
      const over = processor.state !== 'open';
      if (guard === undefined) {
        const draining = send(text, over);
        if (draining) await draining;
      } else {
        // A burst of events is guarded and sent a slice at a time: the first ones do not wait
        // for the guards to read the whole burst. Regex guards answer at once: no promise per
        // slice unless a window is checked.
        let stopped = false;
        for (const [slice, lastSlice] of guardSlices(text)) {
          const passed = guard.pass(slice, over && lastSlice);
          const out = delivered(passed instanceof Promise ? await checked(passed) : passed);
          if (out === undefined) {
            stopped = true;
            break;
          }
          const draining = send(out, over && lastSlice);
          if (draining) await draining;
        }
        if (stopped) break;
      }
      // The client's stream is over (complete, or ended by an error event): nothing more to read for it.
      if (over) break;
    }
    if (upstreamEnded) {
      // The upstream ended mid-window: the last window is checked before the last events go out.
      const last = processor.end();
      const passed = guard?.pass(last, true);
      const out = passed === undefined ? last : delivered(passed instanceof Promise ? await checked(passed) : passed);
      if (out !== undefined) send(out, true);
    }
    res.end();
  } catch (error) {
    if (input.clientGone.aborted) {
      result.error = 'client went away';
    } else {
      // The upstream broke mid-stream: end the client's stream with an error event in its format.
      // A translator writes its own; an observer's unfinished last event is dropped so that the
      // error event starts on an event boundary. Text held for a window is checked before it.
      result.error = `upstream stream ${failureOf(error)}`;
      const clientFormat = errorFormat(input.clientFormat);
      const last = translates
        ? processor.end()
        : observer
          ? observer.errorEvent(clientFormat, 502, TRUNCATED_MESSAGE)
          : streamErrorEvent(clientFormat, 502, TRUNCATED_MESSAGE);
      const passed = guard?.pass(last, true);
      const out = passed === undefined ? last : delivered(passed instanceof Promise ? await passed : passed);
      if (out !== undefined && out.length > 0 && !res.destroyed) res.write(out);
      res.end();
    }
  }
  if (processor.state === 'failed') result.error ??= `upstream stream: ${processor.failure}`;
  if (!upstreamEnded) {
    // Ended on the client's side first: an upstream still sending is abandoned (its connection
    // closed) after a failure at once, after a complete response once it overstays its end. The
    // attempt does not wait for that: the request is done (and metered) when the client's is.
    if (processor.state === 'complete') void awaitUpstreamEnd(chunks, response.body);
    else response.body.discard();
  }
  if (guard && input.record.llm) recordGuardOutcomes(input.record.llm, guard.outcomes());
  if (moderation && input.record.llm) input.record.llm.moderation = moderation.finish();
  result.usage = processor.usage;
  result.responseModel = processor.model;
  return result;
}

/**
 * A Passthrough answer: status, headers and body as the provider sent them, whatever they are (a
 * Bedrock event stream, audio, JSON), piped with backpressure as an HTTP route's body is
 * (pipeUpstreamBody) and read for nothing. A body that breaks midway resets the client's
 * response: there is no format to write an error in.
 */
async function passResponse(
  input: AttemptInput,
  response: UpstreamResponse,
  observed: ObservedResponse,
  unhealthy: boolean,
): Promise<AttemptResult> {
  const res = input.res;
  const result: AttemptResult = { answered: true, observed, unhealthy, latencyMs: observed.latencyMs! };
  if (response.statusCode >= 400) result.error = `upstream status ${response.statusCode}`;
  const headers = forwardedResponseHeaders(response.headers);
  input.onResponseHeaders?.(headers as HeaderBag);
  res.writeHead(response.statusCode, headers as Record<string, string>);
  res.flushHeaders();
  // The client leaving aborts clientGone before the pipe hears of it (runAttempts listens first).
  const error = await new Promise<Error | undefined>((done) => pipeUpstreamBody(response.body, writableOf(res), done));
  if (error !== undefined)
    result.error = input.clientGone.aborted ? 'client went away' : `upstream body ${failureOf(error)}`;
  return result;
}

/**
 * What an upstream may still send after a translated stream was complete (the rest of its last
 * read, its end), read and ignored so that the connection can be reused. Past it, or past
 * LINGER_MS, the request is abandoned: a provider that streams on after its response is done
 * does not keep gw reading.
 */
const LINGER_BYTES = 64 * 1024;
const LINGER_MS = 1000;

async function awaitUpstreamEnd(chunks: AsyncIterator<Buffer>, body: UpstreamBody): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, LINGER_MS, undefined);
  });
  let bytes = 0;
  try {
    while (bytes <= LINGER_BYTES) {
      const next = chunks.next();
      const step = await Promise.race([next, late]);
      if (step === undefined) {
        next.catch(ignore);
        break;
      }
      if (step.done) return;
      bytes += step.value.length;
    }
  } catch {
    return; // it broke after the response was complete: nothing is lost
  } finally {
    clearTimeout(timer);
  }
  body.discard();
}

function ignore(): void {}

/** What `next` settles with, or undefined when `ms` pass first (`next` is then still pending). */
/** The most text of a burst the stream guards read before what they passed is sent (whole events, so a little more). */
export const GUARD_SLICE_CHARS = 8 * 1024;

/**
 * `text` in slices of about GUARD_SLICE_CHARS that end on an event boundary (the last takes the
 * rest, a partial event included), each with whether it is the last.
 */
export function* guardSlices(text: string): Generator<[string, boolean]> {
  let from = 0;
  const boundary = /\r?\n\r?\n/g;
  while (text.length - from > GUARD_SLICE_CHARS) {
    boundary.lastIndex = from + GUARD_SLICE_CHARS;
    const found = boundary.exec(text);
    if (found === null) break;
    const end = found.index + found[0].length;
    if (end >= text.length) break;
    yield [text.slice(from, end), false];
    from = end;
  }
  yield [from === 0 ? text : text.slice(from), true];
}

function within<T>(next: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, ms, undefined);
  });
  return Promise.race([next, late]).finally(() => clearTimeout(timer));
}

/** A response header's value as text (the first, when repeated). */
function headerText(value: string | string[] | number | undefined): string | undefined {
  if (Array.isArray(value)) return value[0];
  return value === undefined ? undefined : String(value);
}

/** The JSON value of a provider's body; undefined when it is not JSON. */
function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

function waitForDrain(res: ClientResponse, gone: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      res.off('drain', onDrain);
      reject(new Error('client went away'));
    };
    const onDrain = () => {
      gone.removeEventListener('abort', onAbort);
      resolve();
    };
    res.once('drain', onDrain);
    gone.addEventListener('abort', onAbort, { once: true });
  });
}
