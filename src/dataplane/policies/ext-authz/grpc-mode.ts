// ExtAuth over gRPC: Envoy's ext_authz v3 protocol (envoy.service.auth.v3.Authorization/Check).
// The request is described in a CheckRequest as Envoy describes it — peers, the HTTP request
// with its headers (pseudo-headers included), context extensions and metadata — and the
// CheckResponse becomes a Decision: status OK allows (with header, query and response-header
// changes), any other status denies (with the service's status, headers and body, 403 by default).
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import type * as grpc from '@grpc/grpc-js';
import type { AgentExtAuthGRPC } from '../../../api/types/inbound-auth.ts';
import { fromCelValue, toCelValue } from '../../cel/expression.ts';
import type { HeaderBag } from '../../routing/filters.ts';
import { compileFields, type NamedExpressions } from '../cel-field.ts';
import type { ResolvedEndpoint } from '../endpoint.ts';
import type { PolicyExchange } from '../exchange.ts';
import { grpcClient, loadProto, serviceConstructor } from '../grpc/client.ts';
import { grpcJs } from '../grpc/grpc-js.ts';
import { jsonToStruct, type ProtoStruct, structToJson } from '../grpc/struct.ts';
import { isProblem, type PolicyCompileContext, type PolicyProblem } from '../types.ts';
import {
  type AllowDecision,
  CheckFailure,
  type Decision,
  FORBIDDEN_TEXT,
  type HeaderAction,
  type HeaderChange,
  NO_METADATA,
  validHeader,
} from './decision.ts';

export const EXT_AUTHZ_PROTO = 'envoy/service/auth/v3/external_auth.proto';
export const AUTHORIZATION_SERVICE = 'envoy.service.auth.v3.Authorization';
/**
 * The metadata namespace the verified JWT's claims go under (as `jwt_payload`) when
 * requestMetadata is unset: Envoy's jwt_authn filter name, which agentgateway sends too, so
 * services written for Envoy find the claims where they look.
 */
export const JWT_METADATA_NAMESPACE = 'envoy.filters.http.jwt_authn';

// ---------------------------------------------------------------------------------------------
// The messages as @grpc/proto-loader gives them (snake_case; enums as names).

interface HeaderValueOption {
  header?: { key?: string; value?: string; raw_value?: Buffer } | null;
  append?: { value?: boolean } | null;
  append_action?: string | number;
}

interface DeniedHttpResponse {
  status?: { code?: string | number } | null;
  headers?: HeaderValueOption[];
  body?: string;
}

interface OkHttpResponse {
  headers?: HeaderValueOption[];
  headers_to_remove?: string[];
  response_headers_to_add?: HeaderValueOption[];
  query_parameters_to_set?: { key?: string; value?: string }[];
  query_parameters_to_remove?: string[];
  dynamic_metadata?: ProtoStruct | null;
}

export interface CheckResponse {
  status?: { code?: number; message?: string } | null;
  http_response?: 'denied_response' | 'ok_response' | 'error_response';
  denied_response?: DeniedHttpResponse | null;
  ok_response?: OkHttpResponse | null;
  error_response?: DeniedHttpResponse | null;
  dynamic_metadata?: ProtoStruct | null;
}

interface AuthorizationClient extends grpc.Client {
  Check(
    request: object,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: (error: grpc.ServiceError | null, response?: CheckResponse) => void,
  ): grpc.ClientUnaryCall;
}

export type GrpcCheck = (exchange: PolicyExchange, body: Buffer | undefined) => Promise<Decision>;

/** Compiles the gRPC settings into the check of one request. */
export function compileGrpcMode(
  settings: AgentExtAuthGRPC | undefined,
  endpoint: ResolvedEndpoint,
  deadlineMs: number,
  context: PolicyCompileContext,
  field: string,
): GrpcCheck | PolicyProblem {
  let metadata: NamedExpressions | undefined;
  if (settings?.requestMetadata) {
    const compiled = compileFields(settings.requestMetadata, `${field}.grpc.requestMetadata`);
    if (isProblem(compiled)) return compiled;
    metadata = compiled;
  }
  const contextExtensions = settings?.contextExtensions ?? {};
  const client = grpcClient<AuthorizationClient>(
    context.runtime,
    serviceConstructor(EXT_AUTHZ_PROTO, AUTHORIZATION_SERVICE),
    endpoint,
  );
  return async (exchange, body) => {
    const request = {
      attributes: {
        source: peer(exchange.record.clientAddress, exchange.record.clientPort),
        destination: peer(exchange.req.socket.localAddress ?? '', exchange.req.socket.localPort ?? 0),
        request: {
          time: timestamp(exchange.record.startedAt),
          http: httpRequest(exchange, body),
        },
        context_extensions: contextExtensions,
        metadata_context: { filter_metadata: metadataContext(exchange, metadata) },
        tls_session: tlsSession(exchange),
      },
    };
    const response = await call(client, request, deadlineMs);
    return decisionOf(response);
  };
}

function call(client: AuthorizationClient, request: object, deadlineMs: number): Promise<CheckResponse> {
  return new Promise((resolve, reject) => {
    client.Check(request, new (grpcJs().Metadata)(), { deadline: Date.now() + deadlineMs }, (error, response) => {
      if (error) reject(new CheckFailure(`ext_authz Check failed: ${error.details || error.message}`));
      else resolve(response ?? {});
    });
  });
}

function peer(address: string, port: number): object {
  return { address: { socket_address: { address, port_value: port } } };
}

function timestamp(ms: number): object {
  return { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 };
}

function tlsSession(exchange: PolicyExchange): object | undefined {
  const socket = exchange.req.socket as Partial<TLSSocket>;
  if (!socket.encrypted) return undefined;
  return { sni: typeof socket.servername === 'string' ? socket.servername : '' };
}

/** The HTTP request as it will go upstream, described the way Envoy describes it. */
function httpRequest(exchange: PolicyExchange, body: Buffer | undefined): object {
  const { forward, record } = exchange;
  const path = forward.query === '' ? forward.path : `${forward.path}?${forward.query}`;
  const host = headerText('host', forward.headers.host) ?? record.host;
  const method = exchange.method;
  const headers = checkHeaders(forward.headers);
  // Envoy sends the pseudo-headers with the others; services match on them.
  headers[':authority'] = host;
  headers[':method'] = method;
  headers[':path'] = path;
  headers[':scheme'] = record.scheme;
  const requestId = headerText('x-request-id', forward.headers['x-request-id']);
  const declared = Number(forward.headers['content-length']);
  return {
    id: requestId ?? randomUUID(),
    method,
    headers,
    path,
    host,
    scheme: record.scheme,
    size: body ? body.length : Number.isFinite(declared) && declared >= 0 ? declared : -1,
    protocol: `HTTP/${record.httpVersion === '2.0' ? '2' : record.httpVersion}`,
    body: body ? body.toString('utf8') : '',
    // `body` is a proto string: bytes that are not UTF-8 arrive replaced there, so the server gets
    // them as they are in raw_body too (what the upstream gets, not a decoding of it).
    ...(body && !isUtf8(body) ? { raw_body: body } : {}),
  };
}

/** Request headers as one string each: repeated values joined with ", " (cookies with "; "). */
function checkHeaders(bag: HeaderBag): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(bag)) {
    const text = headerText(name, bag[name]);
    if (text !== undefined) out[name.toLowerCase()] = text;
  }
  return out;
}

function headerText(name: string, value: string | string[] | number | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return value.join(name === 'cookie' ? '; ' : ', ');
  return String(value);
}

/**
 * metadata_context.filter_metadata: each requestMetadata entry's value (a map; anything else, or
 * a failing expression, leaves the entry out), or — when requestMetadata is unset — the JWT
 * claims under Envoy's jwt_authn namespace.
 */
function metadataContext(
  exchange: PolicyExchange,
  metadata: NamedExpressions | undefined,
): Record<string, ProtoStruct> {
  const out: Record<string, ProtoStruct> = {};
  if (!metadata) {
    const claims = exchange.record.jwtClaims;
    if (claims) out[JWT_METADATA_NAMESPACE] = jsonToStruct({ jwt_payload: claims });
    return out;
  }
  const variables = exchange.cel();
  for (const [name, expression] of metadata) {
    let value: unknown;
    try {
      value = fromCelValue(expression.evaluate(variables));
    } catch {
      continue;
    }
    if (value !== null && typeof value === 'object' && !Array.isArray(value))
      out[name] = jsonToStruct(value as Record<string, unknown>);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The answer.

/** A CheckResponse as a Decision. */
export function decisionOf(response: CheckResponse): Decision {
  // The deprecated OkHttpResponse.dynamic_metadata, when set, overrides (as in Envoy).
  const metadataStruct = response.ok_response?.dynamic_metadata ?? response.dynamic_metadata;
  const metadata = metadataStruct ? (toCelValue(structToJson(metadataStruct)) as Record<string, unknown>) : NO_METADATA;
  const code = response.status?.code ?? 0;
  if (code !== 0) {
    const denied =
      response.http_response === 'denied_response'
        ? response.denied_response
        : response.http_response === 'error_response'
          ? response.error_response
          : undefined;
    if (!denied)
      return {
        allow: false,
        response: { status: 403, body: FORBIDDEN_TEXT, own: 'refusal' },
        metadata,
        cacheable: true,
      };
    const headers: Record<string, string | string[]> = {};
    for (const change of headerChanges(denied.headers, 'overwrite')) {
      if (change.name === 'content-length' || change.name === 'transfer-encoding' || change.name === 'connection')
        continue;
      applyToRecord(headers, change);
    }
    return {
      allow: false,
      response: { status: deniedStatus(denied.status?.code), headers, body: Buffer.from(denied.body ?? '', 'utf8') },
      metadata,
      cacheable: true,
    };
  }
  const ok = response.http_response === 'ok_response' ? response.ok_response : undefined;
  const decision: AllowDecision = {
    allow: true,
    headers: headerChanges(ok?.headers, 'overwrite'),
    removeHeaders: (ok?.headers_to_remove ?? [])
      .map((name) => name.toLowerCase())
      .filter((name) => !name.startsWith(':')),
    setQuery: (ok?.query_parameters_to_set ?? [])
      .filter((parameter) => parameter.key)
      .map((parameter) => [parameter.key!, parameter.value ?? ''] as const),
    removeQuery: ok?.query_parameters_to_remove ?? [],
    responseHeaders: headerChanges(ok?.response_headers_to_add, 'overwrite'),
    metadata,
    cacheable: true,
  };
  return decision;
}

function applyToRecord(headers: Record<string, string | string[]>, change: HeaderChange): void {
  const existing = headers[change.name];
  if (change.action === 'append' && existing !== undefined)
    headers[change.name] = [...(Array.isArray(existing) ? existing : [existing]), change.value];
  else if (change.action === 'addIfAbsent' || change.action === 'overwriteIfExists') {
    if ((existing === undefined) === (change.action === 'addIfAbsent')) headers[change.name] = change.value;
  } else headers[change.name] = change.value;
}

const APPEND_ACTIONS: Record<string, HeaderAction> = {
  ADD_IF_ABSENT: 'addIfAbsent',
  OVERWRITE_IF_EXISTS_OR_ADD: 'overwrite',
  OVERWRITE_IF_EXISTS: 'overwriteIfExists',
  1: 'addIfAbsent',
  2: 'overwrite',
  3: 'overwriteIfExists',
};

/**
 * HeaderValueOptions as changes. With the default append_action the deprecated `append` flag
 * decides, and unset means overwrite (Envoy: "append defaults to false" in ext_authz messages).
 * raw_value wins over value. Skipped: an empty value, an invalid name or value, and
 * pseudo-headers (`:path`...), which Envoy does not let the service change by default either.
 */
function headerChanges(options: HeaderValueOption[] | undefined, fallback: HeaderAction): HeaderChange[] {
  const out: HeaderChange[] = [];
  for (const option of options ?? []) {
    const header = option.header;
    if (!header?.key) continue;
    const raw = header.raw_value;
    const value = raw && raw.length > 0 ? raw.toString('latin1') : (header.value ?? '');
    const name = header.key.toLowerCase();
    if (value === '' || !validHeader(name, value)) continue;
    const action =
      APPEND_ACTIONS[String(option.append_action ?? '')] ?? (option.append?.value === true ? 'append' : fallback);
    out.push({ name, value, action });
  }
  return out;
}

let statusNumbers: Map<string, number> | undefined;

/** DeniedHttpResponse.status.code (an enum name, or its number when gw's proto lacks it); 403 when unset. */
function deniedStatus(code: string | number | undefined): number {
  let status: number | undefined;
  if (typeof code === 'number') status = code;
  else if (typeof code === 'string') {
    statusNumbers ??= enumNumbers();
    status = statusNumbers.get(code);
  }
  return status !== undefined && status >= 200 && status <= 599 ? status : 403;
}

/** The StatusCode enum's names and numbers, read from the loaded proto (one list, not two). */
function enumNumbers(): Map<string, number> {
  const definition = loadProto(EXT_AUTHZ_PROTO) as unknown as {
    envoy: { type: { v3: { StatusCode: { type: { value: { name: string; number: number }[] } } } } };
  };
  return new Map(definition.envoy.type.v3.StatusCode.type.value.map((entry) => [entry.name, entry.number]));
}
