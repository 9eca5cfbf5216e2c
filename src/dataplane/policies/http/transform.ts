// One direction of a transformation (a Transform): compiled once, then applied to a request as
// it goes upstream or to a response as it starts. The steps run in agentgateway's order —
// metadata, add, set, remove, body — and every expression of one Transform sees the request (or
// response) as it was when the Transform started, plus `metadata` as computed so far.
// Failures never stop the traffic: a metadata entry that fails is left out; a header whose value
// fails (or is not a string, bytes, number or bool, or holds CR/LF) is removed, so that a failed
// expression never lets a client's own value of that header through; a body that fails becomes
// empty. Pseudo-headers address what is not a header: on requests `:path` (path and query),
// `:authority` (the Host sent upstream) and `:method`; on responses `:status`.
import type { Transform } from '../../../api/types/traffic.ts';
import { TOKEN } from '../../../util/http-field-syntax.ts';
import type { Expression } from '../../cel/expression.ts';
import type { HeaderBag } from '../../routing/filters.ts';
import { type CelVariables, celHeaders } from '../../telemetry/cel-context.ts';
import type { HeaderMap } from '../../telemetry/request-record.ts';
import { compileField } from '../cel-field.ts';
import type { PolicyExchange } from '../exchange.ts';
import { isProblem, type LocalResponse, type PolicyProblem } from '../types.ts';
import { bodyBytes, evaluateHeaderValue, readsBody, withVariables } from './cel-values.ts';
import { replaceRequestBody, requestBody } from './request-body.ts';

export type Direction = 'request' | 'response';

interface HeaderChange {
  /** Lower-case header name, or a pseudo-header such as `:path`. */
  name: string;
  value: Expression;
}

export interface CompiledTransform {
  readonly metadata: readonly (readonly [string, Expression])[];
  readonly add: readonly HeaderChange[];
  readonly set: readonly HeaderChange[];
  readonly remove: readonly string[];
  readonly body: Expression | undefined;
  /** Whether an expression reads `request.body` / `response.body` (the body is then read first). */
  readonly readsBody: boolean;
}

const PSEUDO_HEADERS: Record<Direction, ReadonlySet<string>> = {
  request: new Set([':path', ':authority', ':method']),
  response: new Set([':status']),
};

/** Framing is gw's: it follows from the body actually sent. */
const FRAMING_HEADERS = new Set(['content-length', 'transfer-encoding']);

export function compileTransform(
  spec: Transform,
  direction: Direction,
  field: string,
): CompiledTransform | PolicyProblem {
  const sources: string[] = [];
  const metadata: [string, Expression][] = [];
  for (const [name, source] of Object.entries(spec.metadata ?? {})) {
    const compiled = compileField(source, `${field}.metadata.${name}`);
    if (isProblem(compiled)) return compiled;
    metadata.push([name, compiled]);
    sources.push(source);
  }
  const changes = (list: Transform['set'], key: 'add' | 'set'): HeaderChange[] | PolicyProblem => {
    const out: HeaderChange[] = [];
    for (const [index, entry] of (list ?? []).entries()) {
      const name = entry.name.toLowerCase();
      const problem = headerProblem(name, direction);
      if (problem) return { field: `${field}.${key}[${index}].name`, message: problem };
      const value = compileField(entry.value, `${field}.${key}[${index}].value`);
      if (isProblem(value)) return value;
      out.push({ name, value });
      sources.push(entry.value);
    }
    return out;
  };
  const add = changes(spec.add, 'add');
  if (isProblem(add)) return add;
  const set = changes(spec.set, 'set');
  if (isProblem(set)) return set;
  const remove: string[] = [];
  for (const [index, name] of (spec.remove ?? []).entries()) {
    const lower = name.toLowerCase();
    if (lower.startsWith(':'))
      return { field: `${field}.remove[${index}]`, message: `the pseudo-header ${name} cannot be removed` };
    remove.push(lower);
  }
  let body: Expression | undefined;
  if (spec.body !== undefined) {
    const compiled = compileField(spec.body, `${field}.body`);
    if (isProblem(compiled)) return compiled;
    body = compiled;
    sources.push(spec.body);
  }
  return { metadata, add, set, remove, body, readsBody: sources.some((source) => readsBody(source, direction)) };
}

function headerProblem(name: string, direction: Direction): string | undefined {
  if (FRAMING_HEADERS.has(name)) return `${name} is set by gw from the body it sends`;
  if (!name.startsWith(':') || PSEUDO_HEADERS[direction].has(name)) return undefined;
  return `${name} cannot be changed on a ${direction}; the pseudo-headers here are ${[...PSEUDO_HEADERS[direction]].join(', ')}`;
}

// ---------------------------------------------------------------------------------------------
// Requests.

const PATH = /^\/[^\s#]*$/;
const AUTHORITY = /^[^\s/?#@]+$/;

/**
 * Applies a request Transform to the request as it goes upstream. Returns a promise only when
 * the body must be read (an expression reads request.body), and an answer only when that body
 * is too large (413).
 */
export function transformRequest(
  transform: CompiledTransform,
  exchange: PolicyExchange,
  metadata: Record<string, unknown>,
): undefined | Promise<LocalResponse | undefined> {
  if (!transform.readsBody) {
    applyToRequest(transform, exchange, metadata, undefined);
    return undefined;
  }
  return requestBody(exchange).then((body) => {
    if (!Buffer.isBuffer(body)) return body;
    applyToRequest(transform, exchange, metadata, body);
    return undefined;
  });
}

function applyToRequest(
  transform: CompiledTransform,
  exchange: PolicyExchange,
  metadata: Record<string, unknown>,
  body: Buffer | undefined,
): void {
  const base = exchange.cel();
  const overrides: Record<string, unknown> = { metadata };
  if (body !== undefined) overrides.request = { ...(base.request as object), body };
  const variables = withVariables(base, overrides);
  evaluateMetadata(transform, variables, metadata);
  if (transform.metadata.length > 0) exchange.setVariable('metadata', metadata);
  const headers = exchange.forward.headers;
  const change = (entry: HeaderChange, append: boolean) => {
    const value = evaluateHeaderValue(entry.value, variables);
    if (entry.name.startsWith(':')) {
      if (value !== undefined) setRequestPseudoHeader(exchange, entry.name, value);
      return;
    }
    if (value === undefined) delete headers[entry.name];
    else headers[entry.name] = append ? appended(headers[entry.name], value) : value;
  };
  for (const entry of transform.add) change(entry, true);
  for (const entry of transform.set) change(entry, false);
  for (const name of transform.remove) delete headers[name];
  if (transform.body) replaceRequestBody(exchange, evaluateBody(transform.body, variables));
}

/** A value that does not fit the pseudo-header (a path without `/`, a bad method) changes nothing. */
function setRequestPseudoHeader(exchange: PolicyExchange, name: string, value: string): void {
  const forward = exchange.forward;
  if (name === ':path') {
    if (!PATH.test(value)) return;
    const query = value.indexOf('?');
    forward.path = query === -1 ? value : value.slice(0, query);
    forward.query = query === -1 ? '' : value.slice(query + 1);
  } else if (name === ':authority') {
    if (AUTHORITY.test(value)) forward.headers.host = value;
  } else if (name === ':method') {
    // The forwarder sends it upstream; the record (logs, CEL) keeps the client's.
    if (TOKEN.test(value)) exchange.method = value.toUpperCase();
  }
}

// ---------------------------------------------------------------------------------------------
// Responses.

/** A response about to start: its status and headers (lower-case names), changed in place. */
export interface ResponseTarget {
  status: number;
  readonly headers: HeaderMap;
  get(name: string): string | string[] | number | undefined;
  set(name: string, value: string | string[]): void;
  remove(name: string): void;
}

/** A response's headers as a plain object (the response path's, before it writes them). */
export function bagTarget(status: number, headers: HeaderBag): ResponseTarget {
  return {
    status,
    headers,
    get: (name) => headers[name],
    set: (name, value) => {
      headers[name] = value;
    },
    remove: (name) => {
      delete headers[name];
    },
  };
}

/**
 * Applies a response Transform. `body` is the whole response body when the caller buffered it;
 * the transformed body is returned then (undefined otherwise: without the body, `body` and
 * `response.body` cannot apply and the body is sent as it is).
 */
export function transformResponse(
  transform: CompiledTransform,
  exchange: PolicyExchange,
  metadata: Record<string, unknown>,
  target: ResponseTarget,
  body: Buffer | undefined,
): Buffer | undefined {
  // The request's context has no response yet while the response is starting: give the one
  // being sent (the telemetry's context sees the final one when the request is done).
  const response: Record<string, unknown> = { code: BigInt(target.status), headers: celHeaders(target.headers) };
  if (body !== undefined) response.body = body;
  const variables = withVariables(exchange.cel(), { response, metadata });
  evaluateMetadata(transform, variables, metadata);
  const change = (entry: HeaderChange, append: boolean) => {
    const value = evaluateHeaderValue(entry.value, variables);
    if (entry.name === ':status') {
      const status = value === undefined ? Number.NaN : Number(value);
      if (Number.isInteger(status) && status >= 200 && status <= 599) target.status = status;
      return;
    }
    if (value === undefined) target.remove(entry.name);
    else target.set(entry.name, append ? appended(target.get(entry.name), value) : value);
  };
  for (const entry of transform.add) change(entry, true);
  for (const entry of transform.set) change(entry, false);
  for (const name of transform.remove) target.remove(name);
  if (!transform.body || body === undefined) return undefined;
  return evaluateBody(transform.body, variables);
}

// ---------------------------------------------------------------------------------------------

function evaluateMetadata(
  transform: CompiledTransform,
  variables: CelVariables,
  metadata: Record<string, unknown>,
): void {
  for (const [name, expression] of transform.metadata) {
    try {
      metadata[name] = expression.evaluate(variables);
    } catch {
      // left out: `has(metadata.<name>)` tells
    }
  }
}

function evaluateBody(expression: Expression, variables: CelVariables): Buffer {
  try {
    return bodyBytes(expression.evaluate(variables));
  } catch {
    return Buffer.alloc(0);
  }
}

/** `value` added after the header's existing values (a repeated header, not a comma join). */
function appended(existing: string | string[] | number | undefined, value: string): string | string[] {
  if (existing === undefined) return value;
  return Array.isArray(existing) ? [...existing, value] : [String(existing), value];
}
