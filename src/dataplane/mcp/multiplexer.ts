// What gw does with each client message in a session (docs/mcp.md "Multiplexing"): initialize fans
// out to every target and merges their answers; lists fan out and merge (names prefixed or
// checked unique, per-target cursors folded into one); calls, gets and reads go to the target that
// owns the name or URI; the client's answers to targets' requests go back to the asking target.
// The policy hooks run here: request guards before dispatch (for routed methods once routing found
// the target, before checkItem), response guards on every answer, filterListItem on every listed
// item.
import { randomBytes } from 'node:crypto';
import type { ClientScope } from './client-scope.ts';
import type { McpCall, McpItemKind, McpRequestInfo } from './context.ts';
import { runGuards, scopeWithHeaders } from './hooks.ts';
import {
  ErrorCode,
  errorMessage,
  idKey,
  isPlainObject,
  type JsonObject,
  type JsonRpcErrorObject,
  type JsonRpcId,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  resultMessage,
  withJsonText,
  withProgressToken,
} from './jsonrpc.ts';
import {
  decodeCursor,
  encodeCursor,
  prefixedName,
  prefixedUri,
  splitPrefixedName,
  splitPrefixedUri,
  untagId,
} from './naming.ts';
import { lowestVersion, offeredVersion } from './protocol-version.ts';
import type { McpBackend } from './session.ts';
import { GATEWAY_CLIENT_INFO, type McpSession, type TargetLink, targetFailure } from './session.ts';
import type { PostOutcome } from './upstream-streamable.ts';

/** Builds the hooks' view of a request (CEL variables included) from what routing learnt. */
export type CallFactory = (info: McpRequestInfo) => McpCall;

/**
 * Methods routed to the target owning a name or URI: their request guards run once routing found
 * the target (the request as the target will get it), the others' before dispatch.
 */
const ROUTED_METHODS = new Set([
  'tools/call',
  'prompts/get',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'completion/complete',
]);

/** Most pages of one target read to find who serves a name (prefixMode Never without a list first). */
const MAX_RESOLVE_PAGES = 20;

interface ListKind {
  kind: McpItemKind;
  /** Result field holding the items. */
  field: string;
  /** Item field that names it. */
  key: 'name' | 'uri' | 'uriTemplate';
  /** Target feature letter that says the target has such items. */
  feature: string;
}

const LISTS: Record<string, ListKind> = {
  'tools/list': { kind: 'tool', field: 'tools', key: 'name', feature: 't' },
  'prompts/list': { kind: 'prompt', field: 'prompts', key: 'name', feature: 'p' },
  'resources/list': { kind: 'resource', field: 'resources', key: 'uri', feature: 'r' },
  'resources/templates/list': {
    kind: 'resourceTemplate',
    field: 'resourceTemplates',
    key: 'uriTemplate',
    feature: 'r',
  },
};

const NOT_FOUND_CODE: Record<'tool' | 'prompt' | 'resource', number> = {
  tool: ErrorCode.InvalidParams,
  prompt: ErrorCode.InvalidParams,
  resource: ErrorCode.ResourceNotFound,
};

function notFound(id: JsonRpcId, kind: 'tool' | 'prompt' | 'resource', name: string): JsonRpcResponse {
  const noun = kind === 'tool' ? 'Tool' : kind === 'prompt' ? 'Prompt' : 'Resource';
  return errorMessage(id, NOT_FOUND_CODE[kind], `${noun} ${name} not found`);
}

function invalidParams(id: JsonRpcId, message: string): JsonRpcResponse {
  return errorMessage(id, ErrorCode.InvalidParams, message);
}

/**
 * What initialize comes to: the session (none when it failed), the answer, and the HTTP status
 * the client's transport answers with when it is not 200 (every target refused with a 4xx).
 */
export interface Initialized {
  session: McpSession | undefined;
  response: JsonRpcResponse;
  status?: number;
}

/**
 * initialize: a new session whose targets are all initialized concurrently with the client's
 * parameters. FailClosed: any failure fails the initialize; FailOpen: failed targets are left out.
 * The client gets the lowest version agreed, and capabilities merged (or the only target's own).
 */
export async function initializeSession(
  backend: McpBackend,
  request: JsonRpcRequest,
  scope: ClientScope,
  makeSession: (version: string, capabilities: JsonObject, clientInfo: JsonObject) => McpSession,
  makeCall?: CallFactory,
): Promise<Initialized> {
  const guards = backend.hooks.guards;
  if (!makeCall) return initializeTargets(backend, request, scope, makeSession);
  const call = makeCall({ method: request.method, targets: [...backend.targets.keys()] });
  if (guards.length === 0) {
    const initialized = await initializeTargets(backend, request, scope, makeSession);
    return { ...initialized, response: recorded(call, initialized.response) };
  }
  // Guards see initialize as a fan-out to every target: before (the client's request) and after (the merged answer).
  const before = await runGuards(guards, request, 'request', call);
  if ('error' in before) return { session: undefined, response: rejected(call, request.id, before.error) };
  const initialized = await initializeTargets(backend, request, scopeWithHeaders(scope, before.headers), makeSession);
  const after = await runGuards(guards, initialized.response, 'response', call);
  if ('error' in after) {
    initialized.session?.close(true);
    return { session: undefined, response: rejected(call, request.id, after.error) };
  }
  return { ...initialized, response: recorded(call, after.message) };
}

/**
 * The HTTP status of a failed initialize when every target refused it with an HTTP 4xx: the
 * client's request is what they refused (its Origin, its credentials...), so its transport says
 * so, as agentgateway passes a target's error status on. The first target's status when they
 * differ. Not 401 and 407, which must carry a challenge of the server's own: a target's would send
 * the client to that target's authorization server. Otherwise none (HTTP 200 with the error).
 */
function refusedStatus(links: readonly TargetLink[]): number | undefined {
  for (const link of links) {
    const status = link.initRefusal;
    if (status === undefined || status < 400 || status > 499 || status === 401 || status === 407) return undefined;
  }
  return links[0]?.initRefusal;
}

async function initializeTargets(
  backend: McpBackend,
  request: JsonRpcRequest,
  scope: ClientScope,
  makeSession: (version: string, capabilities: JsonObject, clientInfo: JsonObject) => McpSession,
): Promise<Initialized> {
  const params = request.params ?? {};
  if (params.capabilities !== undefined && !isPlainObject(params.capabilities))
    return { session: undefined, response: invalidParams(request.id, 'capabilities must be an object') };
  if (typeof params.protocolVersion !== 'string')
    return { session: undefined, response: invalidParams(request.id, 'protocolVersion must be a string') };
  const version = offeredVersion(params.protocolVersion);
  const capabilities = isPlainObject(params.capabilities) ? params.capabilities : {};
  const clientInfo = isPlainObject(params.clientInfo) ? params.clientInfo : GATEWAY_CLIENT_INFO;
  const session = makeSession(version, capabilities, clientInfo);
  session.addMissingLinks();
  const links = [...session.links.values()];
  const problems = await Promise.all(links.map((link) => link.ensureInitialized(session, scope)));
  const failed = links.filter((_, index) => problems[index] !== undefined);
  if (failed.length > 0 && (backend.failureMode === 'FailClosed' || failed.length === links.length)) {
    session.close(true);
    const first = links.indexOf(failed[0]!);
    const response = targetFailure(request.id, failed[0]!.target.name, problems[first]!);
    const status = failed.length === links.length ? refusedStatus(links) : undefined;
    return status === undefined ? { session: undefined, response } : { session: undefined, response, status };
  }
  for (const link of failed) {
    link.close();
    session.links.delete(link.target.name);
    session.excluded.add(link.target.name);
  }
  session.clientVersion = lowestVersion(
    [...session.links.values()].map((link) => link.version),
    version,
  );
  return { session, response: resultMessage(request.id, mergedInitializeResult(session)) };
}

function mergedInitializeResult(session: McpSession): JsonObject {
  const links = [...session.links.values()];
  if (!session.backend.naming.multiplexed && links.length === 1) {
    return { ...links[0]!.initializeResult, protocolVersion: session.clientVersion };
  }
  const capabilitiesOf = (link: TargetLink) =>
    (isPlainObject(link.initializeResult?.capabilities) ? link.initializeResult.capabilities : {}) as JsonObject;
  const any = (feature: string) => links.some((link) => link.features.includes(feature));
  const listChanged = (field: string) =>
    links.some((link) => (capabilitiesOf(link)[field] as JsonObject | undefined)?.listChanged === true);
  const capabilities: JsonObject = {};
  if (any('t')) capabilities.tools = { listChanged: listChanged('tools') };
  if (any('p')) capabilities.prompts = { listChanged: listChanged('prompts') };
  if (any('r')) capabilities.resources = { subscribe: any('s'), listChanged: listChanged('resources') };
  if (any('l')) capabilities.logging = {};
  if (any('c')) capabilities.completions = {};
  const instructions = links
    .filter((link) => typeof link.initializeResult?.instructions === 'string' && link.initializeResult.instructions)
    .map((link) => `[${link.target.name}]\n${link.initializeResult!.instructions as string}`);
  const result: JsonObject = {
    protocolVersion: session.clientVersion,
    capabilities,
    serverInfo: { name: 'gw', version: '1.0.0' },
  };
  if (instructions.length > 0)
    result.instructions = `This server is a gateway to several MCP servers; names carry the server they belong to.\n\n${instructions.join('\n\n')}`;
  return result;
}

/** Answers one client request (never throws: failures are JSON-RPC errors). */
export async function handleRequest(
  session: McpSession,
  request: JsonRpcRequest,
  scope: ClientScope,
  makeCall: CallFactory,
): Promise<JsonRpcResponse> {
  const info: McpRequestInfo = { method: request.method };
  if (session.id !== undefined) info.sessionId = session.id;
  const hooks = session.backend.hooks;
  if (hooks.guards.length > 0) info.targets = [...session.links.keys()];
  const call = makeCall(info);
  let message = request;
  let callScope = scope;
  if (hooks.guards.length > 0 && !ROUTED_METHODS.has(request.method)) {
    const guarded = await runGuards(hooks.guards, request, 'request', call);
    if ('error' in guarded) return rejected(call, request.id, guarded.error);
    message = guarded.message;
    callScope = scopeWithHeaders(scope, guarded.headers);
  }
  const key = idKey(message.id);
  let response: JsonRpcResponse;
  try {
    response = await dispatch(session, message, callScope, call, info);
  } finally {
    session.inflight.delete(key);
  }
  if (hooks.guards.length > 0) {
    const guarded = await runGuards(hooks.guards, response, 'response', call);
    if ('error' in guarded) return rejected(call, request.id, guarded.error);
    response = guarded.message;
  }
  return recorded(call, response);
}

/** A guard's rejection as the client's answer. */
function rejected(call: McpCall, id: JsonRpcId, error: JsonRpcErrorObject): JsonRpcResponse {
  return recorded(call, { jsonrpc: '2.0', id, error });
}

/** The answer, its error noted for the access log. */
function recorded(call: McpCall, response: JsonRpcResponse): JsonRpcResponse {
  if ('error' in response) call.info.error = { code: response.error.code, message: response.error.message };
  return response;
}

/**
 * The request guards of a routed call, on the request as its target will get it (call.info names
 * the item and target): the request as they leave it and the scope with their header changes, or
 * the rejection. They run before checkItem, as agentgateway runs them before its authorization,
 * so that what they add to CEL (`mcpGuardrails`) is there for it.
 */
async function guardRouted(
  session: McpSession,
  sent: JsonRpcRequest,
  scope: ClientScope,
  call: McpCall,
): Promise<{ message: JsonRpcRequest; scope: ClientScope } | Unroutable> {
  const guards = session.backend.hooks.guards;
  if (guards.length === 0) return { message: sent, scope };
  const guarded = await runGuards(guards, sent, 'request', call);
  if ('error' in guarded) return { answer: { jsonrpc: '2.0', id: sent.id, error: guarded.error } };
  // Authorization sees the arguments the target will get.
  const args = guarded.message.params?.arguments;
  if (call.info.tool && isPlainObject(args)) call.info.tool.arguments = args;
  return { message: guarded.message, scope: scopeWithHeaders(scope, guarded.headers) };
}

async function dispatch(
  session: McpSession,
  request: JsonRpcRequest,
  scope: ClientScope,
  call: McpCall,
  info: McpRequestInfo,
): Promise<JsonRpcResponse> {
  const list = LISTS[request.method];
  if (list) return listMerged(session, request, list, scope, call);
  switch (request.method) {
    case 'ping':
      return resultMessage(request.id, {});
    case 'tools/call':
      return routeByName(session, request, 'tool', scope, call, info);
    case 'prompts/get':
      return routeByName(session, request, 'prompt', scope, call, info);
    case 'resources/read':
    case 'resources/subscribe':
    case 'resources/unsubscribe':
      return routeByUri(session, request, scope, call, info);
    case 'completion/complete':
      return routeCompletion(session, request, scope, call, info);
    case 'logging/setLevel':
      return fanOutEmpty(session, request, scope, 'l');
  }
  if (!session.backend.naming.multiplexed) {
    const link = soleLink(session);
    if (link) return forward(session, link, request, scope, (result) => result);
  }
  return errorMessage(request.id, ErrorCode.MethodNotFound, `Method not found: ${request.method}`);
}

function soleLink(session: McpSession): TargetLink | undefined {
  return session.links.values().next().value;
}

/** Sends the request to one target and maps its answer (failures become errors naming the target). */
async function forward(
  session: McpSession,
  link: TargetLink,
  request: JsonRpcRequest,
  scope: ClientScope,
  mapResult: (result: JsonObject) => JsonObject,
): Promise<JsonRpcResponse> {
  const target = link.target.name;
  const sent = session.forTarget(target, request, scope.sink);
  session.inflight.set(idKey(request.id), target);
  try {
    const outcome = await session.request(link, sent, scope);
    if (outcome.kind !== 'response') return targetFailure(request.id, target, outcomeReason(outcome));
    const answer = outcome.message;
    if ('error' in answer) return { jsonrpc: '2.0', id: request.id, error: answer.error };
    return resultMessage(request.id, mapResult(answer.result));
  } finally {
    session.doneWith(target, sent);
  }
}

function outcomeReason(outcome: { kind: string; reason?: string }): string {
  return outcome.reason ?? (outcome.kind === 'expired' ? 'the session ended' : 'no answer');
}

/** The target serving `name` and the name it knows it by, or undefined when none does. */
async function resolveName(
  session: McpSession,
  kind: 'tool' | 'prompt',
  name: string,
  scope: ClientScope,
): Promise<{ link: TargetLink; name: string } | { error: string } | undefined> {
  const naming = session.backend.naming;
  if (!naming.multiplexed) {
    const link = soleLink(session);
    return link && { link, name };
  }
  if (naming.prefixNames) {
    const split = splitPrefixedName(name, new Set(session.links.keys()));
    const link = split && session.links.get(split.target);
    return link && { link, name: split.name };
  }
  const known = session.owners.get(`${kind}:${name}`);
  const knownLink = known === undefined ? undefined : session.links.get(known);
  if (knownLink) return { link: knownLink, name };
  return resolveByListing(session, kind, name, scope);
}

/** prefixMode Never, name not seen in a list yet: every target is asked whether it serves it. */
async function resolveByListing(
  session: McpSession,
  kind: 'tool' | 'prompt',
  name: string,
  scope: ClientScope,
): Promise<{ link: TargetLink; name: string } | { error: string } | undefined> {
  const method = kind === 'tool' ? 'tools/list' : 'prompts/list';
  const field = kind === 'tool' ? 'tools' : 'prompts';
  const feature = kind === 'tool' ? 't' : 'p';
  const links = [...session.links.values()];
  await Promise.all(links.map((link) => link.ensureInitialized(session, scope)));
  const candidates = links.filter((link) => !link.needsInit && link.features.includes(feature));
  const serving = await Promise.all(
    candidates.map(async (link) => {
      let cursor: string | undefined;
      for (let page = 0; page < MAX_RESOLVE_PAGES; page++) {
        const request: JsonRpcRequest = {
          jsonrpc: '2.0',
          id: `gw-resolve-${randomBytes(6).toString('hex')}`,
          method,
          params: cursor === undefined ? {} : { cursor },
        };
        const outcome = await session.request(link, request, scope);
        if (outcome.kind !== 'response' || 'error' in outcome.message) return false;
        const items = outcome.message.result[field];
        if (Array.isArray(items) && items.some((item) => isPlainObject(item) && item.name === name)) return true;
        const next = outcome.message.result.nextCursor;
        if (typeof next !== 'string') return false;
        cursor = next;
      }
      return false;
    }),
  );
  const owners = candidates.filter((_, index) => serving[index] === true);
  if (owners.length > 1) return { error: `${kind} ${name} is served by several targets` };
  if (owners.length === 0) return undefined;
  session.owners.set(`${kind}:${name}`, owners[0]!.target.name);
  return { link: owners[0]!, name };
}

/** Why a request cannot be routed: the error answer. */
type Unroutable = { answer: JsonRpcResponse };

/** A routed call ready to go: its target, the request as the target gets it, the scope to send it with. */
type Routed = { link: TargetLink; message: JsonRpcRequest; scope: ClientScope };

/**
 * The target of a tool or prompt name and the request it gets (`toTarget` of the name it knows),
 * through the request guards and authorized by checkItem (a refusal answers as an unknown name
 * would); `info` learns the item.
 */
async function authorizedName(
  session: McpSession,
  id: JsonRpcId,
  kind: 'tool' | 'prompt',
  name: string,
  scope: ClientScope,
  call: McpCall,
  info: McpRequestInfo,
  toTarget: (name: string) => JsonRpcRequest,
  toolArguments?: JsonObject,
): Promise<Routed | Unroutable> {
  const resolved = await resolveName(session, kind, name, scope);
  if (resolved && 'error' in resolved) return { answer: invalidParams(id, resolved.error) };
  if (!resolved) return { answer: notFound(id, kind, name) };
  const target = resolved.link.target.name;
  if (kind === 'prompt') info.prompt = { name: resolved.name, target };
  else {
    info.tool = { name: resolved.name, target };
    if (toolArguments) info.tool.arguments = toolArguments;
  }
  const guarded = await guardRouted(session, toTarget(resolved.name), scope, call);
  if ('answer' in guarded) return guarded;
  if (!session.backend.hooks.checkItem(kind, resolved.name, target, call)) return { answer: notFound(id, kind, name) };
  return { link: resolved.link, ...guarded };
}

/** The target of a resource URI (or template) and the request it gets, guarded and authorized like names. */
async function authorizedUri(
  session: McpSession,
  id: JsonRpcId,
  uri: string,
  scope: ClientScope,
  call: McpCall,
  info: McpRequestInfo,
  toTarget: (uri: string) => JsonRpcRequest,
): Promise<Routed | Unroutable> {
  const resolved = resolveUri(session, uri);
  if (!resolved) return { answer: notFound(id, 'resource', uri) };
  info.resource = { uri: resolved.uri, target: resolved.link.target.name };
  const guarded = await guardRouted(session, toTarget(resolved.uri), scope, call);
  if ('answer' in guarded) return guarded;
  if (!session.backend.hooks.checkItem('resource', resolved.uri, resolved.link.target.name, call))
    return { answer: notFound(id, 'resource', uri) };
  return { link: resolved.link, ...guarded };
}

async function routeByName(
  session: McpSession,
  request: JsonRpcRequest,
  kind: 'tool' | 'prompt',
  scope: ClientScope,
  call: McpCall,
  info: McpRequestInfo,
): Promise<JsonRpcResponse> {
  const params = request.params ?? {};
  if (typeof params.name !== 'string') return invalidParams(request.id, 'params.name must be a string');
  const args = isPlainObject(params.arguments) ? params.arguments : undefined;
  const toTarget = (name: string): JsonRpcRequest => ({ ...request, params: { ...params, name } });
  const routed = await authorizedName(session, request.id, kind, params.name, scope, call, info, toTarget, args);
  if ('answer' in routed) return routed.answer;
  const target = routed.link.target.name;
  return forward(session, routed.link, routed.message, routed.scope, (result) => resultUris(session, target, result));
}

/** The target a resource URI (or URI template) belongs to, and the URI it knows. */
function resolveUri(session: McpSession, uri: string): { link: TargetLink; uri: string } | undefined {
  if (!session.backend.naming.multiplexed) {
    const link = soleLink(session);
    return link && { link, uri };
  }
  const split = splitPrefixedUri(uri, new Set(session.links.keys()));
  const link = split && session.links.get(split.target);
  return link && { link, uri: split.uri };
}

async function routeByUri(
  session: McpSession,
  request: JsonRpcRequest,
  scope: ClientScope,
  call: McpCall,
  info: McpRequestInfo,
): Promise<JsonRpcResponse> {
  const params = request.params ?? {};
  if (typeof params.uri !== 'string') return invalidParams(request.id, 'params.uri must be a string');
  const toTarget = (uri: string): JsonRpcRequest => ({ ...request, params: { ...params, uri } });
  const routed = await authorizedUri(session, request.id, params.uri, scope, call, info, toTarget);
  if ('answer' in routed) return routed.answer;
  const target = routed.link.target.name;
  return forward(session, routed.link, routed.message, routed.scope, (result) => resultUris(session, target, result));
}

/** completion/complete names a prompt or a resource template: routed like them. */
async function routeCompletion(
  session: McpSession,
  request: JsonRpcRequest,
  scope: ClientScope,
  call: McpCall,
  info: McpRequestInfo,
): Promise<JsonRpcResponse> {
  const params = request.params ?? {};
  const ref = params.ref;
  if (!isPlainObject(ref)) return invalidParams(request.id, 'params.ref must be an object');
  const toTarget =
    (field: 'name' | 'uri') =>
    (value: string): JsonRpcRequest => ({
      ...request,
      params: { ...params, ref: { ...ref, [field]: value } },
    });
  let routed: Routed | Unroutable;
  if (ref.type === 'ref/prompt' && typeof ref.name === 'string') {
    routed = await authorizedName(session, request.id, 'prompt', ref.name, scope, call, info, toTarget('name'));
  } else if (ref.type === 'ref/resource' && typeof ref.uri === 'string') {
    routed = await authorizedUri(session, request.id, ref.uri, scope, call, info, toTarget('uri'));
  } else {
    return invalidParams(request.id, 'params.ref must be a ref/prompt with a name or a ref/resource with a uri');
  }
  if ('answer' in routed) return routed.answer;
  return forward(session, routed.link, routed.message, routed.scope, (r) => r);
}

/** Resource URIs in a result (read contents, tool and prompt content) prefixed with their target. */
function resultUris(session: McpSession, target: string, result: JsonObject): JsonObject {
  if (!session.backend.naming.multiplexed) return result;
  const content = (item: unknown): unknown => {
    if (!isPlainObject(item)) return item;
    if (item.type === 'resource_link' && typeof item.uri === 'string')
      return { ...item, uri: prefixedUri(target, item.uri) };
    if (item.type === 'resource' && isPlainObject(item.resource) && typeof item.resource.uri === 'string')
      return { ...item, resource: { ...item.resource, uri: prefixedUri(target, item.resource.uri) } };
    return item;
  };
  const out = { ...result };
  if (Array.isArray(result.contents))
    out.contents = result.contents.map((entry) =>
      isPlainObject(entry) && typeof entry.uri === 'string' ? { ...entry, uri: prefixedUri(target, entry.uri) } : entry,
    );
  if (Array.isArray(result.content)) out.content = result.content.map(content);
  if (Array.isArray(result.messages))
    out.messages = result.messages.map((message) =>
      isPlainObject(message) ? { ...message, content: content(message.content) } : message,
    );
  return out;
}

/**
 * A list across targets: each target that has such items is asked (with its own cursor when the
 * client sent gw's), and the items merged in target order: filtered by the policy hooks, names
 * prefixed (or, with prefixMode Never, names several targets serve left out), URIs prefixed.
 */
async function listMerged(
  session: McpSession,
  request: JsonRpcRequest,
  list: ListKind,
  scope: ClientScope,
  call: McpCall,
): Promise<JsonRpcResponse> {
  const naming = session.backend.naming;
  const params = request.params ?? {};
  if (params.cursor !== undefined && typeof params.cursor !== 'string')
    return invalidParams(request.id, 'params.cursor must be a string');
  if (!naming.multiplexed) {
    const link = soleLink(session);
    if (!link) return resultMessage(request.id, { [list.field]: [] });
    const answer = await forward(session, link, request, scope, (result) => result);
    if ('error' in answer) return answer;
    return resultMessage(request.id, filterItems(session, list, link.target.name, answer.result, call));
  }
  let cursors: Map<string, string> | undefined;
  if (params.cursor !== undefined) {
    cursors = decodeCursor(params.cursor, new Set(session.links.keys()));
    if (!cursors) return invalidParams(request.id, 'invalid cursor');
  }
  const links = [...session.links.values()].filter((link) => !cursors || cursors.has(link.target.name));
  // What every target gets when the client sent no cursor (a target's own cursor otherwise): made
  // and serialized once, not per target.
  const { cursor: _clientCursor, ...sent } = withProgressToken(request.params, undefined);
  const shared: JsonRpcRequest = { ...request, params: sent };
  let sharedBody: string | undefined;
  // With names (or URIs) prefixed and no guard to see the merged answer, each target's items are
  // renamed and serialized as its answer arrives, while the slower targets are still awaited: what
  // is left once the last answer is in is that target's part and joining the texts. Without
  // prefixes (prefixMode Never) a name's fate depends on every target's list: all done at the end.
  const early = (naming.prefixNames || list.key !== 'name') && session.backend.hooks.guards.length === 0;
  const rename = (target: string, item: JsonObject): void => {
    const name = item[list.key] as string;
    if (list.key === 'name') item.name = prefixedName(target, name);
    else item[list.key] = prefixedUri(target, name);
  };
  const listed = (link: TargetLink, result: JsonObject): ListAnswer => {
    const target = link.target.name;
    const items = keptItems(session, list, target, result, call);
    const next = typeof result.nextCursor === 'string' ? result.nextCursor : undefined;
    if (!early) return { link, items, next };
    for (const item of items) rename(target, item);
    return { link, items, next, text: items.length === 0 ? '' : JSON.stringify(items).slice(1, -1) };
  };
  // Each target asked once. An initialized target's request is on its way before ask() returns
  // (nothing awaited before it), so every request leaves before any answer is waited for.
  const ask = async (link: TargetLink): Promise<ListAnswer> => {
    if (link.needsInit) {
      const problem = await link.ensureInitialized(session, scope);
      if (problem) return { link, failure: problem };
    }
    if (!link.features.includes(list.feature)) return { link, items: [], next: undefined, text: '' };
    const cursor = cursors?.get(link.target.name);
    let outcome: PostOutcome;
    if (cursor === undefined) {
      sharedBody ??= JSON.stringify(shared);
      outcome = await session.request(link, shared, scope, sharedBody);
    } else outcome = await session.request(link, { ...request, params: { ...sent, cursor } }, scope);
    if (outcome.kind !== 'response') return { link, failure: outcomeReason(outcome) };
    if ('error' in outcome.message) {
      if (outcome.message.error.code === ErrorCode.MethodNotFound)
        return { link, items: [], next: undefined, text: '' };
      return { link, failure: `error ${outcome.message.error.code}` };
    }
    if (!Array.isArray(outcome.message.result[list.field])) return { link, failure: `no ${list.field} list` };
    return listed(link, outcome.message.result);
  };
  const answers = await Promise.all(links.map(ask));
  const failed = answers.filter((answer) => 'failure' in answer);
  if (failed.length > 0 && (session.backend.failureMode === 'FailClosed' || failed.length === answers.length)) {
    const first = failed[0] as { link: TargetLink; failure: string };
    return targetFailure(request.id, first.link.target.name, first.failure);
  }
  const succeeded = answers.filter((answer) => 'items' in answer);
  // prefixMode Never: names several targets list are left out (no call could be routed to them).
  const ambiguous = naming.prefixNames || list.key !== 'name' ? undefined : duplicateNames(succeeded);
  const merged: JsonObject[] = [];
  for (const { link, items } of succeeded) {
    const target = link.target.name;
    for (const item of items) {
      if (!early) {
        const name = item[list.key] as string;
        if (ambiguous?.has(name)) continue;
        if (naming.prefixNames || list.key !== 'name') rename(target, item);
        else session.owners.set(`${list.kind}:${name}`, target);
      }
      merged.push(item);
    }
  }
  const result: JsonObject = { [list.field]: merged };
  const next = encodeCursor(
    succeeded.filter((answer) => answer.next !== undefined).map((answer) => [answer.link.target.name, answer.next!]),
  );
  if (next !== undefined) result.nextCursor = next;
  const response = resultMessage(request.id, result);
  if (!early) return response;
  // The texts joined: exactly what JSON.stringify(response) gives (the same keys in the same order).
  const parts = succeeded.map((answer) => answer.text).filter((text) => text !== '');
  const cursorText = next === undefined ? '' : `,"nextCursor":${JSON.stringify(next)}`;
  return withJsonText(
    response,
    `{"jsonrpc":"2.0","id":${JSON.stringify(request.id)},"result":{${JSON.stringify(list.field)}:[${parts.join(',')}]${cursorText}}}`,
  );
}

/** One target's part of a list: the items the client may see (renamed, and their text, when done early), or its failure. */
type ListAnswer =
  | { link: TargetLink; items: JsonObject[]; next: string | undefined; text?: string }
  | { link: TargetLink; failure: string };

/** Items that are objects with a string name or URI, and that the policy hooks let the client see. */
function keptItems(
  session: McpSession,
  list: ListKind,
  target: string,
  result: JsonObject,
  call: McpCall,
): JsonObject[] {
  const items = result[list.field];
  if (!Array.isArray(items)) return [];
  const hooks = session.backend.hooks;
  return items.filter(
    (item): item is JsonObject =>
      isPlainObject(item) && typeof item[list.key] === 'string' && hooks.filterListItem(list.kind, item, target, call),
  );
}

/** The result with only the items keptItems keeps (one target, names unchanged). */
function filterItems(
  session: McpSession,
  list: ListKind,
  target: string,
  result: JsonObject,
  call: McpCall,
): JsonObject {
  if (!Array.isArray(result[list.field])) return result;
  return { ...result, [list.field]: keptItems(session, list, target, result, call) };
}

/** Names more than one target lists (prefixMode Never): they are left out, as no call could route them. */
function duplicateNames(perTarget: readonly { items: readonly JsonObject[] }[]): Set<string> {
  const seen = new Set<string>();
  const duplicates = new Set<string>();
  for (const { items } of perTarget) {
    const own = new Set(items.map((item) => item.name as string));
    for (const name of own) (seen.has(name) ? duplicates : seen).add(name);
  }
  return duplicates;
}

/** A request every target with a feature gets, answered with an empty result (logging/setLevel). */
async function fanOutEmpty(
  session: McpSession,
  request: JsonRpcRequest,
  scope: ClientScope,
  feature: string,
): Promise<JsonRpcResponse> {
  const links = [...session.links.values()];
  await Promise.all(links.map((link) => link.ensureInitialized(session, scope)));
  const chosen = links.filter((link) => !link.needsInit && link.features.includes(feature));
  const outcomes = await Promise.all(chosen.map((link) => session.request(link, request, scope)));
  const failedAt = outcomes.findIndex((outcome) => outcome.kind !== 'response' || 'error' in outcome.message);
  const allFailed =
    chosen.length > 0 && outcomes.every((outcome) => outcome.kind !== 'response' || 'error' in outcome.message);
  if (failedAt !== -1 && (session.backend.failureMode === 'FailClosed' || allFailed)) {
    const outcome = outcomes[failedAt]!;
    if (outcome.kind === 'response' && 'error' in outcome.message)
      return { jsonrpc: '2.0', id: request.id, error: outcome.message.error };
    return targetFailure(request.id, chosen[failedAt]!.target.name, outcomeReason(outcome));
  }
  return resultMessage(request.id, {});
}

/**
 * A client notification: initialized is gw's own business (targets got theirs at initialize);
 * cancelled goes to the targets of that request; anything else to every target.
 */
export async function handleNotification(
  session: McpSession,
  notification: JsonRpcNotification,
  scope: ClientScope,
): Promise<void> {
  if (notification.method === 'notifications/initialized') return;
  let links = [...session.links.values()];
  let message = notification;
  if (notification.method === 'notifications/cancelled') {
    const requestId = notification.params?.requestId;
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
    const target = session.inflight.get(idKey(requestId));
    if (target !== undefined) links = links.filter((link) => link.target.name === target);
  } else if (notification.method === 'notifications/progress') {
    // Progress of the client on a target's request: the token is one gw tagged for that target.
    const token = notification.params?.progressToken;
    const original = typeof token === 'string' || typeof token === 'number' ? untagId(token) : undefined;
    const link = original && session.links.get(original.target);
    if (!original || !link) return;
    links = [link];
    message = { ...notification, params: { ...notification.params, progressToken: original.id } };
  }
  await Promise.all(links.filter((link) => !link.needsInit).map((link) => session.notify(link, message, scope)));
}
