// @grpc/grpc-js and @grpc/proto-loader (with protobufjs), loaded on first use: only the policies
// that call an external gRPC service need them, and loaded they take about 20 MiB.
import type * as GrpcJs from '@grpc/grpc-js';
import type * as ProtoLoader from '@grpc/proto-loader';
import { loadOnFirstUse } from '../../../util/load-on-first-use.ts';

export const grpcJs = loadOnFirstUse<typeof GrpcJs>('@grpc/grpc-js');
export const protoLoader = loadOnFirstUse<typeof ProtoLoader>('@grpc/proto-loader');
