// How gw words the answers it makes itself on a route: plain text on an HTTP route, the client's
// API error format on an LLM route (ai/llm-answers.ts). The backend a rule sends to says which
// (Backend.answersFor), so that the request handler and the policies state what happened (a
// status, a message, whether it is gw's own refusal) and never know a format.
import type { RequestRecord } from '../telemetry/request-record.ts';
import type { ClientResponse } from './client-response.ts';
import { type LocalAnswer, sendLocalResponse } from './direct-response.ts';
import { sendOwnFailure } from './own-failure.ts';

export interface GatewayAnswers {
  /** A policy's answer: gw's own refusal (LocalAnswer.own) in the route's words, any other as it is. */
  local(res: ClientResponse, answer: LocalAnswer): void;
  /** A 5xx of gw's own (./own-failure.ts): a generic message and a request id, in the route's words. */
  ownFailure(res: ClientResponse, record: RequestRecord, detail: string, status?: number): void;
}

/** The answers of an HTTP route: plain text. */
export const PLAIN_ANSWERS: GatewayAnswers = Object.freeze({ local: sendLocalResponse, ownFailure: sendOwnFailure });
