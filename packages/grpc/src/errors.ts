import { status } from '@grpc/grpc-js';

/** An error a handler throws to answer with a specific gRPC status and a message safe to share. */
export class RpcError extends Error {
  constructor(
    readonly code: status,
    message: string,
  ) {
    super(message);
    this.name = 'RpcError';
  }

  static notFound(message = 'not found') {
    return new RpcError(status.NOT_FOUND, message);
  }

  static invalidArgument(message: string) {
    return new RpcError(status.INVALID_ARGUMENT, message);
  }

  static unauthenticated(message = 'unauthenticated') {
    return new RpcError(status.UNAUTHENTICATED, message);
  }

  static alreadyExists(message: string) {
    return new RpcError(status.ALREADY_EXISTS, message);
  }

  static resourceExhausted(message: string) {
    return new RpcError(status.RESOURCE_EXHAUSTED, message);
  }
}
