// Where the LLM exchange meets its endpoint's prompt guards: the request guards before the
// upstream request is planned (llm-request.ts), the response guards on a whole answer before it
// is written (exchange.ts). A rejection is answered here, in the client's API format, with the
// guard's CustomResponse; every guard's outcome goes on the request's LLM record (the access
// log's gw.ai.guards).
import type { RouteType } from '../../../api/types/ai.ts';
import type { ClientResponse } from '../../proxy/client-response.ts';
import type { LlmRecord } from '../../telemetry/request-record.ts';
import type { JsonObject } from '../formats/types.ts';
import { sendClientError } from '../llm-answers.ts';
import type { ClientFormat } from '../providers/index.ts';
import type { GuardOutcome } from './outcome.ts';
import type { CompiledPromptGuards, GuardRequestContext, GuardResult } from './prompt-guard.ts';

/** Why a request of a route type whose body gw does not read is refused when guards are set. */
export function unguardableRequest(routeType: RouteType): string {
  return (
    `This provider has prompt guards (ai.promptGuard), which cannot read a ${routeType} request (gw forwards ` +
    `it without reading its API format), so it is refused rather than sent unchecked. Give the path the route ` +
    `type of its API in ai.routes, or remove promptGuard.`
  );
}

/** Route types whose requests guards cannot read: forwarded unread, or a WebSocket session. */
const UNGUARDABLE: ReadonlySet<RouteType> = new Set(['Passthrough', 'Detect', 'Realtime']);

/**
 * Runs the request guards on the body about to be planned. Returns the body to plan (masked, or
 * the same: undefined for a request without one), or false after answering the client (a
 * rejection, or a request the guards cannot read); a promise of it when a guard calls a service.
 */
export function guardRequest(
  guards: CompiledPromptGuards,
  routeType: RouteType,
  format: ClientFormat,
  body: JsonObject | undefined,
  request: GuardRequestContext,
  res: ClientResponse,
  llm: LlmRecord,
): JsonObject | undefined | false | Promise<JsonObject | false> {
  if (UNGUARDABLE.has(routeType)) {
    sendClientError(res, format, 400, unguardableRequest(routeType));
    return false;
  }
  if (body === undefined || !guards.hasRequestGuards) return body;
  const result = guards.guardRequest(body, format, request);
  if (result instanceof Promise) return result.then((settled) => settle(settled, format, res, llm));
  return settle(result, format, res, llm);
}

/**
 * Runs the response guards on a whole answer in the client's format. Returns the answer to
 * write (masked or the same), or undefined after answering the rejection; a promise of it when
 * a guard calls a service.
 */
export function guardAnswer(
  guards: CompiledPromptGuards,
  format: ClientFormat,
  answer: JsonObject,
  request: GuardRequestContext,
  res: ClientResponse,
  llm: LlmRecord,
): JsonObject | undefined | Promise<JsonObject | undefined> {
  const result = guards.guardResponse(answer, format, request);
  if (result instanceof Promise)
    return result.then((settled) => {
      const body = settle(settled, format, res, llm);
      return body === false ? undefined : body;
    });
  const settled = settle(result, format, res, llm);
  return settled === false ? undefined : settled;
}

function settle(result: GuardResult, format: ClientFormat, res: ClientResponse, llm: LlmRecord): JsonObject | false {
  recordGuardOutcomes(llm, result.outcomes);
  if (result.rejected === undefined) return result.body;
  // The guard's own status and message (a CustomResponse may choose a 5xx: it is still its message).
  sendClientError(res, format, result.rejected.status, result.rejected.message);
  return false;
}

/** Adds guard outcomes to the request's LLM record (the access log's gw.ai.guards). */
export function recordGuardOutcomes(llm: LlmRecord, outcomes: GuardOutcome[]): void {
  if (outcomes.length === 0) return;
  if (llm.guards === undefined) llm.guards = outcomes;
  else llm.guards.push(...outcomes);
}
