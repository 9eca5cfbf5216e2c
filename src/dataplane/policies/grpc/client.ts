// gRPC clients of the external services policies call (Envoy's ext_authz, ext_proc and rate
// limit services), on @grpc/grpc-js with the protos in ./protos loaded at runtime. One client per
// service and endpoint, kept in the PolicyRuntime so configuration swaps reuse the connection.
// The protos are also the mesh CA's (istio/, used by ../../mesh/ca-client.ts).
import { fileURLToPath } from 'node:url';
import type * as grpc from '@grpc/grpc-js';
import type * as ProtoLoader from '@grpc/proto-loader';
import type { ResolvedEndpoint } from '../endpoint.ts';
import type { PolicyRuntime } from '../runtime.ts';
import { grpcJs, protoLoader } from './grpc-js.ts';

const PROTO_ROOT = fileURLToPath(new URL('./protos/', import.meta.url));

/** Loader options: field names as in the .proto (snake_case), enums as names, 64-bit ints as numbers. */
const LOADER_OPTIONS: ProtoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_ROOT],
};

const definitions = new Map<string, grpc.GrpcObject>();

/** The package definition of a proto file under ./protos (loaded once per process). */
export function loadProto(file: string): grpc.GrpcObject {
  let loaded = definitions.get(file);
  if (!loaded) {
    loaded = grpcJs().loadPackageDefinition(protoLoader().loadSync(file, LOADER_OPTIONS));
    definitions.set(file, loaded);
  }
  return loaded;
}

/** A service constructor by its full name ("envoy.service.auth.v3.Authorization"). */
export function serviceConstructor(file: string, fullName: string): grpc.ServiceClientConstructor {
  let node: unknown = loadProto(file);
  for (const part of fullName.split('.')) node = (node as Record<string, unknown>)[part];
  if (typeof node !== 'function') throw new Error(`${fullName} is not a service in ${file}`);
  return node as grpc.ServiceClientConstructor;
}

/** The gRPC target of an endpoint: host:port, or unix: for a socket. */
export function grpcTarget(endpoint: ResolvedEndpoint): string {
  if (endpoint.socketPath) return `unix:${endpoint.socketPath}`;
  return endpoint.host.includes(':') ? `[${endpoint.host}]:${endpoint.port}` : `${endpoint.host}:${endpoint.port}`;
}

/** The shared client of `service` at `endpoint` (TLS when the endpoint's url is https). */
export function grpcClient<T extends grpc.Client>(
  runtime: PolicyRuntime,
  service: grpc.ServiceClientConstructor,
  endpoint: ResolvedEndpoint,
): T {
  const key = `grpc ${service.serviceName} ${endpoint.tls ? 'tls' : 'plain'} ${grpcTarget(endpoint)}`;
  return runtime.use(key, () => {
    const { credentials: channelCredentials } = grpcJs();
    const credentials = endpoint.tls ? channelCredentials.createSsl() : channelCredentials.createInsecure();
    return new service(grpcTarget(endpoint), credentials, {
      // Bounded messages both ways: a misbehaving service cannot make the proxy buffer without limit.
      'grpc.max_receive_message_length': 4 * 1024 * 1024,
      'grpc.max_send_message_length': 16 * 1024 * 1024,
      // A service back after an outage is used again within seconds, not after grpc-js's default
      // backoff of up to two minutes (requests fail fast meanwhile, by their failureMode).
      'grpc.initial_reconnect_backoff_ms': 250,
      'grpc.max_reconnect_backoff_ms': 5_000,
    }) as unknown as T;
  });
}
