// What an authorization server decided about one request, in a form both protocols produce and
// the cache keeps: allow (with the changes to make to the request and response) or deny (with
// the answer for the client). Applying a decision never changes it, so one cached decision
// serves many requests.
import { INVALID_FIELD_VALUE, TOKEN } from '../../../util/http-field-syntax.ts';
import type { ResponseHead } from '../../proxy/client-response.ts';
import type { HeaderBag } from '../../routing/filters.ts';
import type { PolicyExchange } from '../exchange.ts';
import type { LocalResponse, StepResult } from '../types.ts';

/** How a header value is applied (Envoy's HeaderValueOption.HeaderAppendAction). */
export type HeaderAction = 'append' | 'addIfAbsent' | 'overwrite' | 'overwriteIfExists';

export interface HeaderChange {
  /** Lower-case name. */
  readonly name: string;
  readonly value: string;
  readonly action: HeaderAction;
}

export interface AllowDecision {
  readonly allow: true;
  /** Headers set on the upstream request, in order. */
  readonly headers: readonly HeaderChange[];
  /** Lower-case names removed from the upstream request (before `headers` apply). */
  readonly removeHeaders: readonly string[];
  readonly setQuery: readonly (readonly [string, string])[];
  readonly removeQuery: readonly string[];
  /** Headers set on the client's response. */
  readonly responseHeaders: readonly HeaderChange[];
  /** The CEL `extauthz` variable (already CEL values). */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** Whether the cache may keep it. */
  readonly cacheable: boolean;
}

export interface DenyDecision {
  readonly allow: false;
  readonly response: LocalResponse;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly cacheable: boolean;
}

export type Decision = AllowDecision | DenyDecision;

/** The server could not be used (unreachable, an error, a timeout, a malformed answer): failureMode decides. */
export class CheckFailure extends Error {}

export const NO_METADATA: Readonly<Record<string, unknown>> = Object.freeze({});

export const FORBIDDEN_TEXT = 'external authorization denied the request';

/** A deny with gw's own 403, never cached (a failing expression, not the server's answer). */
export function forbidden(): DenyDecision {
  return {
    allow: false,
    response: { status: 403, body: FORBIDDEN_TEXT, own: 'refusal' },
    metadata: NO_METADATA,
    cacheable: false,
  };
}

// RFC 9110 field-name token and field-value characters: anything else would make Node throw
// when the header is written, failing the request for a server's typo.

export function validHeader(name: string, value: string): boolean {
  return TOKEN.test(name) && !INVALID_FIELD_VALUE.test(value);
}

/** Applies a decision: an allow changes the request and answers nothing; a deny is the answer. */
export function applyDecision(exchange: PolicyExchange, decision: Decision): StepResult {
  exchange.setVariable('extauthz', decision.metadata);
  if (!decision.allow) return decision.response;
  const headers = exchange.forward.headers;
  for (const name of decision.removeHeaders) {
    // Envoy never lets the service remove Host: the request would be malformed.
    if (name !== 'host') delete headers[name];
  }
  for (const change of decision.headers) applyToBag(headers, change);
  if (decision.setQuery.length > 0 || decision.removeQuery.length > 0) {
    const params = new URLSearchParams(exchange.forward.query);
    for (const name of decision.removeQuery) params.delete(name);
    for (const [name, value] of decision.setQuery) params.set(name, value);
    exchange.forward.query = params.toString();
  }
  if (decision.responseHeaders.length > 0) {
    const changes = decision.responseHeaders;
    exchange.onResponse((res) => {
      for (const change of changes) applyToResponse(res, change);
    });
  }
  return undefined;
}

/** Applies one change to a header map (lower-case names). */
export function applyToBag(headers: HeaderBag, change: HeaderChange): void {
  const existing = headers[change.name];
  const present = existing !== undefined;
  switch (change.action) {
    case 'append':
      headers[change.name] = present ? [...toList(existing), change.value] : change.value;
      return;
    case 'addIfAbsent':
      if (!present) headers[change.name] = change.value;
      return;
    case 'overwrite':
      headers[change.name] = change.value;
      return;
    case 'overwriteIfExists':
      if (present) headers[change.name] = change.value;
      return;
  }
}

function applyToResponse(res: ResponseHead, change: HeaderChange): void {
  const existing = res.getHeader(change.name);
  const present = existing !== undefined;
  switch (change.action) {
    case 'append':
      res.setHeader(change.name, present ? [...toList(existing), change.value] : change.value);
      return;
    case 'addIfAbsent':
      if (!present) res.setHeader(change.name, change.value);
      return;
    case 'overwrite':
      res.setHeader(change.name, change.value);
      return;
    case 'overwriteIfExists':
      if (present) res.setHeader(change.name, change.value);
      return;
  }
}

function toList(value: string | string[] | number): string[] {
  return Array.isArray(value) ? value : [String(value)];
}
