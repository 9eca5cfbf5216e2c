// A gRPC server for tests (@grpc/grpc-js, plaintext) on 127.0.0.1 at a port the OS picks: the
// external services gw calls (ext_authz, ext_proc, rate limit) written by the tests on gw's protos.
import * as grpc from '@grpc/grpc-js';

export interface GrpcTestServer {
  server: grpc.Server;
  port: number;
  /** Stops the server: calls in progress get half a second to finish, then are cancelled. */
  close(): Promise<void>;
}

/** Serves `implementation` of `service` until closed. */
export async function startGrpcServer(
  service: grpc.ServiceDefinition,
  implementation: grpc.UntypedServiceImplementation,
): Promise<GrpcTestServer> {
  const server = new grpc.Server();
  server.addService(service, implementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return {
    server,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 500);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}
