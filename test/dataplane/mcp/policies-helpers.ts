// What the MCP policy tests share: a guardrail processor speaking agentgateway's ExtMcp over gRPC
// (a real @grpc/grpc-js server on 127.0.0.1:0 that records what it was asked and answers as the
// test says), the YAML of an `mcp` GwBackend with a backend `mcp` policy, and an SDK client that
// sends headers (a bearer token).
import * as grpc from '@grpc/grpc-js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { EXT_MCP_PROTO, EXT_MCP_SERVICE } from '../../../src/dataplane/mcp/policies/ext-mcp.ts';
import { serviceConstructor } from '../../../src/dataplane/policies/grpc/client.ts';
import { type ProtoStruct, structToJson } from '../../../src/dataplane/policies/grpc/struct.ts';
import { freePort, gatewayYaml, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { type BackendYamlOptions, mcpYaml, type TargetYaml } from './helpers.ts';

/** One question a processor got, decoded. */
export interface SeenCheck {
  phase: 'request' | 'response';
  method: string;
  serviceNames: string[];
  /** mcp_request (request phase), parsed; undefined when not sent. */
  params?: unknown;
  /** mcp_response (response phase), parsed. */
  result?: unknown;
  /** metadata_context as JSON; undefined when not sent. */
  metadata?: Record<string, unknown>;
  /** headers as [key, value] pairs, in order. */
  headers: [string, string][];
}

/** An McpRequestResult / McpResponseResult as @grpc/grpc-js takes it. */
export type CheckAnswer = Record<string, unknown>;

export const PASS: CheckAnswer = { pass: {} };

/** A new params or result (any JSON; the processor's bytes are its text). */
export function mutated(json: unknown): CheckAnswer {
  return { mutated: Buffer.from(typeof json === 'string' ? json : JSON.stringify(json)) };
}

/** An AuthorizationError: code is PERMISSION_DENIED, RESOURCE_EXHAUSTED, INVALID or UNKNOWN. */
export function refused(code: string, reason: string, data?: unknown): CheckAnswer {
  const error: Record<string, unknown> = { code, reason };
  if (data !== undefined) error.mcp_error = Buffer.from(JSON.stringify(data));
  return { error };
}

export interface ProcessorHandlers {
  request?: (seen: SeenCheck) => CheckAnswer | Promise<CheckAnswer>;
  response?: (seen: SeenCheck) => CheckAnswer | Promise<CheckAnswer>;
}

export interface TestProcessor {
  port: number;
  /** http://127.0.0.1:port, for MCPGuardrailsRemote.url. */
  url: string;
  seen: SeenCheck[];
  /** The answers from now on (default: pass). */
  handlers: ProcessorHandlers;
  close(): Promise<void>;
}

interface WireRequest {
  service_names: string[];
  method: string;
  metadata_context?: ProtoStruct | null;
  mcp_request?: Buffer;
  mcp_response?: Buffer;
  headers?: { key: string; value: Buffer }[];
}

function decode(phase: 'request' | 'response', request: WireRequest): SeenCheck {
  const seen: SeenCheck = {
    phase,
    method: request.method,
    serviceNames: [...request.service_names],
    headers: (request.headers ?? []).map((header) => [header.key, header.value.toString('latin1')]),
  };
  if (request.mcp_request !== undefined) seen.params = JSON.parse(request.mcp_request.toString('utf8'));
  if (request.mcp_response !== undefined) seen.result = JSON.parse(request.mcp_response.toString('utf8'));
  if (request.metadata_context) seen.metadata = structToJson(request.metadata_context);
  return seen;
}

/** An ExtMcp processor on 127.0.0.1:0. */
export async function startProcessor(handlers: ProcessorHandlers = {}): Promise<TestProcessor> {
  const server = new grpc.Server();
  const processor: TestProcessor = { port: 0, url: '', seen: [], handlers, close: async () => undefined };
  const serve =
    (phase: 'request' | 'response') =>
    (call: grpc.ServerUnaryCall<WireRequest, CheckAnswer>, callback: grpc.sendUnaryData<CheckAnswer>) => {
      const seen = decode(phase, call.request);
      processor.seen.push(seen);
      const handler = phase === 'request' ? processor.handlers.request : processor.handlers.response;
      Promise.resolve(handler ? handler(seen) : PASS).then(
        (answer) => callback(null, answer),
        (error: Error) => callback({ code: grpc.status.INTERNAL, details: error.message }),
      );
    };
  server.addService(serviceConstructor(EXT_MCP_PROTO, EXT_MCP_SERVICE).service, {
    CheckRequest: serve('request'),
    CheckResponse: serve('response'),
  });
  processor.port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, port) =>
      error ? reject(error) : resolve(port),
    ),
  );
  processor.url = `http://127.0.0.1:${processor.port}`;
  processor.close = () => new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  return processor;
}

/** mcpYaml with `policies` (JSON, which YAML reads as flow style) as the GwBackend's spec.policies. */
export function mcpPolicyYaml(
  targets: readonly TargetYaml[],
  policies: Record<string, unknown>,
  options: BackendYamlOptions = {},
): string {
  const yaml = mcpYaml(targets, options);
  const end = yaml.indexOf('---\n');
  return `${yaml.slice(0, end)}  policies: ${JSON.stringify(policies)}\n${yaml.slice(end)}`;
}

export interface PolicyGateway {
  gw: TestGateway;
  url: URL;
  stop(): Promise<void>;
}

/** gw serving the MCP backend of `targets` with backend policy `policies`, and `more` YAML. */
export async function startPolicyGateway(
  targets: readonly TargetYaml[],
  policies: Record<string, unknown>,
  more = '',
  options: BackendYamlOptions = {},
): Promise<PolicyGateway> {
  const port = await freePort();
  const yaml = `${gatewayYaml(port)}${mcpPolicyYaml(targets, policies, options)}---\n${more}`;
  const gw = await startTestGateway({ 'gw.yaml': yaml });
  return { gw, url: new URL(`http://127.0.0.1:${port}/mcp`), stop: () => gw.stop() };
}

/** An SDK client over Streamable HTTP that sends `headers` with every request. */
export async function clientWith(url: URL, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'policy-test', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  return client;
}

/** The JSON-RPC error a client call failed with (code and message), or a failure when it did not fail. */
export async function rpcError(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    const { code, message } = error as { code: number; message: string };
    return { code, message };
  }
  throw new Error('the call succeeded');
}
