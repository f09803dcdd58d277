import type { KeyObject } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { signCall } from './call-signature';

export interface GrpcClientOptions {
  /** This service's name, sent (signed) with every call. */
  caller: string;
  /** This service's own Ed25519 private key (SIGNING_PRIVATE_KEY). */
  signingKey: KeyObject;
}

type ClientConstructor<Client> = new (address: string, credentials: grpc.ChannelCredentials, options?: grpc.ClientOptions) => Client;

/** A client of an internal gRPC service whose every call is signed as coming from `caller`. */
export function createGrpcClient<Client extends grpc.Client>(Constructor: ClientConstructor<Client>, address: string, options: GrpcClientOptions): Client {
  const signing: grpc.Interceptor = (callOptions, nextCall) =>
    new grpc.InterceptingCall(nextCall(callOptions), {
      start(metadata, listener, next) {
        signCall(metadata, options.signingKey, options.caller, callOptions.method_definition.path);
        next(metadata, listener);
      },
    });
  return new Constructor(address, grpc.credentials.createInsecure(), {
    interceptors: [signing],
    'grpc.keepalive_time_ms': 30_000,
    'grpc.keepalive_timeout_ms': 5_000,
    'grpc.keepalive_permit_without_calls': 1,
    // Reconnect quickly after the server returns, so a brief outage stays brief.
    'grpc.initial_reconnect_backoff_ms': 200,
    'grpc.max_reconnect_backoff_ms': 2_000,
  });
}

type Callback<Response> = (error: grpc.ServiceError | null, response?: Response) => void;

/**
 * Promisifies one unary call with a deadline:
 * `await unaryCall((metadata, options, done) => client.Authenticate({ token }, metadata, options, done))`.
 */
export function unaryCall<Response>(invoke: (metadata: grpc.Metadata, options: grpc.CallOptions, callback: Callback<Response>) => unknown, deadlineMs = 5_000): Promise<Response> {
  return new Promise((resolve, reject) => {
    invoke(new grpc.Metadata(), { deadline: Date.now() + deadlineMs }, (error, response) => {
      if (error) return reject(error);
      resolve(response as Response);
    });
  });
}
