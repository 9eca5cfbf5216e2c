// One remote guardrail processor (MCPGuardrailsProcessor with `remote`) as a guard of the MCP
// hooks: for the methods and phases its `methods` map gives, it asks the processor over
// agentgateway's ExtMcp protocol (docs/mcp.md "Guardrails processor protocol") and turns the
// answer into a verdict — pass, a new params or result, or a JSON-RPC error for the client.
// Request-phase answers may also change the targets' request headers and give values to CEL
// `mcpGuardrails` for the policies after it (authorization). A processor that cannot be asked, or
// answers what gw cannot use, is skipped (FailOpen) or refuses the request (FailClosed, default).
import type { MCPGuardrailsProcessor } from '../../../api/types/mcp.ts';
import { durationMs } from '../../../util/units.ts';
import { fromCelValue } from '../../cel/expression.ts';
import { compileFields, type NamedExpressions } from '../../policies/cel-field.ts';
import { resolveEndpoint } from '../../policies/endpoint.ts';
import { jsonToStruct, type ProtoStruct, structToJson } from '../../policies/grpc/struct.ts';
import { isProblem, type PolicyCompileContext, type PolicyProblem } from '../../policies/types.ts';
import type { McpCall } from '../context.ts';
import type { McpGuard, McpGuardVerdict } from '../hooks.ts';
import {
  ErrorCode,
  isPlainObject,
  type JsonObject,
  type JsonRpcErrorObject,
  type JsonRpcRequest,
  type JsonRpcResult,
} from '../jsonrpc.ts';
import {
  type AuthorizationErrorMessage,
  type ExtMcpClient,
  extMcpClient,
  type McpRequestResultMessage,
  ProcessorFailure,
} from './ext-mcp.ts';
import { compileMethodPhases, runsRequest, runsResponse } from './method-phases.ts';
import { compileHeaderFilter, type HeaderFilter, headerMutation, processorHeaders } from './processor-headers.ts';

/** agentgateway's deadline for a processor call, unless the endpoint's GwBackend sets http.requestTimeout. */
export const DEFAULT_PROCESSOR_DEADLINE_MS = 10_000;

/** The CEL variable processors' request-phase metadata is merged into (agentgateway's name). */
export const GUARDRAILS_VARIABLE = 'mcpGuardrails';

/**
 * Methods whose request has no params to send or change: gw fans them out to every target or
 * answers them itself (agentgateway sends no `mcp_request` for its fan-outs and drops mutations).
 */
const WITHOUT_PARAMS = new Set([
  'initialize',
  'ping',
  'logging/setLevel',
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
]);

/** What a changed request of a routed method must still have, for gw to send it to its target. */
const ROUTING_FIELD: Record<string, (params: JsonObject) => boolean> = {
  'tools/call': (params) => typeof params.name === 'string',
  'prompts/get': (params) => typeof params.name === 'string',
  'resources/read': (params) => typeof params.uri === 'string',
  'resources/subscribe': (params) => typeof params.uri === 'string',
  'resources/unsubscribe': (params) => typeof params.uri === 'string',
  'completion/complete': (params) => isPlainObject(params.ref),
};

/** AuthorizationError codes as JSON-RPC codes (agentgateway's: -32001 and -32003 in the server range). */
const REJECTION_CODE: Record<string, number> = {
  PERMISSION_DENIED: -32001,
  RESOURCE_EXHAUSTED: -32003,
  INVALID: ErrorCode.InvalidRequest,
  UNKNOWN: ErrorCode.InternalError,
};

const CONTINUE: McpGuardVerdict = Object.freeze({ action: 'continue' });

type Context = Pick<PolicyCompileContext, 'backends' | 'namespace' | 'runtime'>;

/** Compiles processor `field` (backend.mcp.guardrails.processors[i]) into a guard. */
export function compileProcessor(
  processor: MCPGuardrailsProcessor,
  context: Context,
  field: string,
): McpGuard | PolicyProblem {
  const remote = processor.remote;
  if (!remote) return { field: `${field}.remote`, message: 'set remote: the only kind of processor' };
  // The endpoint GwBackend's request timeout applies (deadlineMs); its other policies do not.
  const endpoint = resolveEndpoint(remote, context, `${field}.remote`, ['http']);
  if (isProblem(endpoint)) return endpoint;
  let metadata: NamedExpressions = [];
  if (remote.metadata) {
    const compiled = compileFields(remote.metadata, `${field}.remote.metadata`);
    if (isProblem(compiled)) return compiled;
    metadata = compiled;
  }
  return processorGuard({
    phaseOf: compileMethodPhases(processor.methods),
    client: extMcpClient(context.runtime, endpoint, deadlineMs(remote.backendRef, context)),
    failOpen: remote.failureMode === 'FailOpen',
    metadata,
    headers: compileHeaderFilter(remote.allowedRequestHeaders, remote.disallowedRequestHeaders),
  });
}

/** The endpoint GwBackend's http.requestTimeout, else agentgateway's 10 s. */
function deadlineMs(ref: { kind?: string; name: string; namespace?: string } | undefined, context: Context): number {
  if (!ref || (ref.kind ?? 'Service') !== 'GwBackend') return DEFAULT_PROCESSOR_DEADLINE_MS;
  const backend = context.backends[`GwBackend ${ref.namespace ?? context.namespace}/${ref.name}`];
  const timeout = backend?.kind === 'GwBackend' ? backend.spec.policies?.http?.requestTimeout : undefined;
  return timeout ? durationMs(timeout) : DEFAULT_PROCESSOR_DEADLINE_MS;
}

export interface ProcessorSettings {
  phaseOf(method: string): ReturnType<ReturnType<typeof compileMethodPhases>>;
  client: ExtMcpClient;
  failOpen: boolean;
  metadata: NamedExpressions;
  headers: HeaderFilter;
}

/** The guard of one processor with its settings compiled. */
export function processorGuard(settings: ProcessorSettings): McpGuard {
  return async (message, phase, call) => {
    const method = call.info.method;
    const runs = settings.phaseOf(method);
    if (phase === 'request') {
      if (!runsRequest(runs)) return CONTINUE;
      return requestPhase(settings, message as JsonRpcRequest, call);
    }
    // A JSON-RPC error skips the response phase: there is no result to look at.
    if (!runsResponse(runs) || 'error' in message) return CONTINUE;
    return responsePhase(settings, message as JsonRpcResult, call);
  };
}

async function requestPhase(
  settings: ProcessorSettings,
  message: JsonRpcRequest,
  call: McpCall,
): Promise<McpGuardVerdict> {
  const method = message.method;
  const sendsParams = !WITHOUT_PARAMS.has(method) && message.params !== undefined;
  let answer: McpRequestResultMessage;
  try {
    answer = await settings.client.checkRequest({
      service_names: serviceNames(call),
      method,
      ...metadataContext(settings, call),
      ...(sendsParams ? { mcp_request: Buffer.from(JSON.stringify(message.params)) } : {}),
      headers: processorHeaders(call, settings.headers),
    });
  } catch (error) {
    return failed(settings, `the guardrail processor could not be asked (${failureReason(error)})`);
  }
  switch (answer.result) {
    case 'pass':
      return passed(answer, call, undefined);
    case 'mutated': {
      // Without params sent there is nothing to replace (a fan-out): the change is dropped.
      if (!sendsParams) return passed(answer, call, undefined);
      const params = parseObject(answer.mutated);
      const routable = ROUTING_FIELD[method];
      if (!params || (routable && !routable(params)))
        return failed(settings, 'the guardrail processor changed the request into one gw cannot send');
      return passed(answer, call, { ...message, params });
    }
    case 'error':
      return { action: 'reject', error: rejection(answer.error) };
    default:
      return failed(settings, 'the guardrail processor answered without a result');
  }
}

async function responsePhase(
  settings: ProcessorSettings,
  message: JsonRpcResult,
  call: McpCall,
): Promise<McpGuardVerdict> {
  let answer: { result?: string; mutated?: Buffer; error?: AuthorizationErrorMessage | null };
  try {
    answer = await settings.client.checkResponse({
      service_names: serviceNames(call),
      method: call.info.method,
      ...metadataContext(settings, call),
      mcp_response: Buffer.from(JSON.stringify(message.result)),
    });
  } catch (error) {
    return failed(settings, `the guardrail processor could not be asked (${failureReason(error)})`);
  }
  switch (answer.result) {
    case 'pass':
      return CONTINUE;
    case 'mutated': {
      const result = parseObject(answer.mutated);
      if (!result) return failed(settings, 'the guardrail processor changed the result into one that is not an object');
      return { action: 'continue', message: { jsonrpc: '2.0', id: message.id, result } };
    }
    case 'error':
      return { action: 'reject', error: rejection(answer.error) };
    default:
      return failed(settings, 'the guardrail processor answered without a result');
  }
}

/** The targets of the call: the owning one once routed, else those the request goes to. */
function serviceNames(call: McpCall): string[] {
  const info = call.info;
  const item = info.tool ?? info.prompt ?? info.resource;
  return item ? [item.target] : [...(info.targets ?? [])];
}

/** metadata_context: each metadata expression's value; one that fails to evaluate is left out (as agentgateway does). */
function metadataContext(settings: ProcessorSettings, call: McpCall): { metadata_context?: ProtoStruct } {
  if (settings.metadata.length === 0) return {};
  const variables = call.cel();
  const values: Record<string, unknown> = {};
  for (const [name, expression] of settings.metadata) {
    try {
      values[name] = fromCelValue(expression.evaluate(variables));
    } catch {
      // not sent
    }
  }
  return { metadata_context: jsonToStruct(values) };
}

/** A pass (or a change): the header changes and metadata of a request-phase answer take effect. */
function passed(answer: McpRequestResultMessage, call: McpCall, message: JsonRpcRequest | undefined): McpGuardVerdict {
  if (answer.metadata && call.variables) {
    const merged = (call.variables[GUARDRAILS_VARIABLE] as Record<string, unknown> | undefined) ?? {};
    call.variables[GUARDRAILS_VARIABLE] = Object.assign(merged, structToJson(answer.metadata));
  }
  const headers = answer.header_mutation
    ? headerMutation(answer.header_mutation.set, answer.header_mutation.remove)
    : undefined;
  if (!message && !headers) return CONTINUE;
  const verdict: McpGuardVerdict = { action: 'continue' };
  if (message) verdict.message = message;
  if (headers) verdict.headers = headers;
  return verdict;
}

/** The JSON-RPC error of a processor's AuthorizationError: its code mapped, its reason, its mcp_error as data. */
function rejection(error: AuthorizationErrorMessage | null | undefined): JsonRpcErrorObject {
  const code = REJECTION_CODE[String(error?.code ?? 'UNKNOWN')] ?? ErrorCode.InternalError;
  const out: JsonRpcErrorObject = { code, message: error?.reason || 'the request was refused by a guardrail' };
  if (error?.mcp_error && error.mcp_error.length > 0) {
    try {
      out.data = JSON.parse(error.mcp_error.toString('utf8'));
    } catch {
      // data that is not JSON is left out
    }
  }
  return out;
}

/** FailOpen: as if the processor passed; FailClosed: the client gets an internal error saying why. */
function failed(settings: ProcessorSettings, reason: string): McpGuardVerdict {
  if (settings.failOpen) return CONTINUE;
  return { action: 'reject', error: { code: ErrorCode.InternalError, message: reason } };
}

function failureReason(error: unknown): string {
  return error instanceof ProcessorFailure ? error.message : 'INTERNAL';
}

function parseObject(bytes: Buffer | undefined): JsonObject | undefined {
  if (!bytes) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(bytes).toString('utf8'));
    return isPlainObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
