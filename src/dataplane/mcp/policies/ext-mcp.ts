// The gRPC client of a guardrail processor: agentgateway's ExtMcp service
// (agentgateway.dev.ext_mcp.ExtMcp, protos/agentgateway/ext_mcp.proto), CheckRequest for the
// request phase and CheckResponse for the response phase, unary, with a deadline. The messages as
// @grpc/proto-loader hands them over: field names as in the .proto, bytes as Buffers, `result`
// naming the member of the oneof that is set.
import type * as grpc from '@grpc/grpc-js';
import type { ResolvedEndpoint } from '../../policies/endpoint.ts';
import { grpcClient, serviceConstructor } from '../../policies/grpc/client.ts';
import { grpcJs } from '../../policies/grpc/grpc-js.ts';
import type { ProtoStruct } from '../../policies/grpc/struct.ts';
import type { PolicyRuntime } from '../../policies/runtime.ts';
import type { WireHeader } from './processor-headers.ts';

export const EXT_MCP_PROTO = 'agentgateway/ext_mcp.proto';
export const EXT_MCP_SERVICE = 'agentgateway.dev.ext_mcp.ExtMcp';

export interface McpRequestMessage {
  service_names: string[];
  method: string;
  metadata_context?: ProtoStruct;
  mcp_request?: Buffer;
  headers: WireHeader[];
}

export interface McpResponseMessage {
  service_names: string[];
  method: string;
  metadata_context?: ProtoStruct;
  mcp_response: Buffer;
}

export interface AuthorizationErrorMessage {
  code?: string | number;
  reason?: string;
  mcp_error?: Buffer;
}

export interface McpRequestResultMessage {
  result?: 'pass' | 'mutated' | 'error';
  mutated?: Buffer;
  error?: AuthorizationErrorMessage | null;
  header_mutation?: { set?: { key?: string; value?: Buffer }[]; remove?: string[] } | null;
  metadata?: ProtoStruct | null;
}

export interface McpResponseResultMessage {
  result?: 'pass' | 'mutated' | 'error';
  mutated?: Buffer;
  error?: AuthorizationErrorMessage | null;
}

type Unary<Q, A> = (
  request: Q,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (error: grpc.ServiceError | null, answer?: A) => void,
) => grpc.ClientUnaryCall;

interface ExtMcpGrpcClient extends grpc.Client {
  CheckRequest: Unary<McpRequestMessage, McpRequestResultMessage>;
  CheckResponse: Unary<McpResponseMessage, McpResponseResultMessage>;
}

/** The processor could not be asked: the gRPC status code's name (`UNAVAILABLE`, `DEADLINE_EXCEEDED`...). */
export class ProcessorFailure extends Error {}

export interface ExtMcpClient {
  checkRequest(request: McpRequestMessage): Promise<McpRequestResultMessage>;
  checkResponse(request: McpResponseMessage): Promise<McpResponseResultMessage>;
}

/** The ExtMcp client of `endpoint` (one connection per endpoint, kept across reloads), each call bounded by `deadlineMs`. */
export function extMcpClient(runtime: PolicyRuntime, endpoint: ResolvedEndpoint, deadlineMs: number): ExtMcpClient {
  const client = grpcClient<ExtMcpGrpcClient>(runtime, serviceConstructor(EXT_MCP_PROTO, EXT_MCP_SERVICE), endpoint);
  return {
    checkRequest: (request) => unary(client.CheckRequest.bind(client), request, deadlineMs),
    checkResponse: (request) => unary(client.CheckResponse.bind(client), request, deadlineMs),
  };
}

function unary<Q, A>(method: Unary<Q, A>, request: Q, deadlineMs: number): Promise<A> {
  return new Promise((resolve, reject) => {
    const { Metadata, status } = grpcJs();
    method(request, new Metadata(), { deadline: Date.now() + deadlineMs }, (error, answer) => {
      if (error) reject(new ProcessorFailure(status[error.code] ?? `gRPC status ${error.code}`));
      else resolve(answer ?? ({} as A));
    });
  });
}
