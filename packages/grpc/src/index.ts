export * as grpc from '@grpc/grpc-js';
export { RpcError } from './errors';
export { createGrpcServer, type GrpcServer, type GrpcServerOptions, type MethodCallers, type UnaryHandler } from './server';
export { createGrpcClient, unaryCall, type GrpcClientOptions } from './client';
export { signCall, verifyCall } from './call-signature';
