import type { KeyObject } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import { isDependencyUnavailable, type Logger, type ServiceMetrics } from '@worklane/observability';
import { verifyCall } from './call-signature';
import { RpcError } from './errors';

export interface GrpcServerOptions {
  logger: Logger;
  metrics: ServiceMetrics;
  /** Public keys of the principals that may call this server at all, by name. */
  callers: Readonly<Record<string, KeyObject>>;
}

/** For each method name of a service definition, the principals allowed to call it. */
export type MethodCallers = Readonly<Record<string, readonly string[]>>;

/** A unary handler: gets the request and the caller's name, resolves to the response. */
export type UnaryHandler<Request, Response> = (request: Request, context: { caller: string }) => Promise<Response>;

export interface GrpcServer {
  server: grpc.Server;
  /**
   * Registers a service whose every method requires a signed caller (else UNAUTHENTICATED) that
   * `allowed` lists for that method (else PERMISSION_DENIED).
   */
  // Each handler has its own request and response types; a record of them can only say `any`.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  addService(definition: grpc.ServiceDefinition, handlers: Record<string, UnaryHandler<any, any>>, allowed: MethodCallers): void;
  /** Binds and starts serving; resolves to the bound port. */
  listen(host: string, port: number): Promise<number>;
  /** Reports NOT_SERVING, lets in-flight calls finish, then closes. */
  shutdown(): Promise<void>;
}

const codeName = (code: grpc.status) => grpc.status[code] ?? String(code);

/**
 * A grpc-js server with the standard health service, signed-caller checks, metrics per method
 * and one error mapping: RpcError keeps its code and message; a dependency that is unavailable
 * (its database, a service it calls) is UNAVAILABLE, which its callers answer with their own 503;
 * anything else is INTERNAL with no detail.
 */
export function createGrpcServer(options: GrpcServerOptions): GrpcServer {
  const server = new grpc.Server({ 'grpc.keepalive_permit_without_calls': 1 });
  const health = new HealthImplementation({ '': 'NOT_SERVING' });
  health.addToServer(server);
  const serviceNames: string[] = [];

  function wrap(method: string, handler: UnaryHandler<unknown, unknown>, allowed: readonly string[]): grpc.handleUnaryCall<unknown, unknown> {
    return (call, callback) => {
      const stop = options.metrics.grpcDuration.startTimer();
      const finish = (code: grpc.status) => {
        const labels = { method, code: codeName(code) };
        options.metrics.grpcRequests.inc(labels);
        stop(labels);
      };
      const caller = verifyCall(call.metadata, options.callers, call.getPath());
      if (!caller) {
        finish(grpc.status.UNAUTHENTICATED);
        callback({ code: grpc.status.UNAUTHENTICATED, details: 'caller is not signed' });
        return;
      }
      if (!allowed.includes(caller)) {
        finish(grpc.status.PERMISSION_DENIED);
        callback({ code: grpc.status.PERMISSION_DENIED, details: `${caller} may not call ${method}` });
        return;
      }
      handler(call.request, { caller }).then(
        (response) => {
          finish(grpc.status.OK);
          callback(null, response);
        },
        (error: unknown) => {
          if (error instanceof RpcError) {
            finish(error.code);
            callback({ code: error.code, details: error.message });
            return;
          }
          if (isDependencyUnavailable(error)) {
            options.logger.warn({ err: error, method }, 'a dependency is unavailable; answering UNAVAILABLE');
            finish(grpc.status.UNAVAILABLE);
            callback({ code: grpc.status.UNAVAILABLE, details: 'a dependency is unavailable' });
            return;
          }
          options.logger.error({ err: error, method }, 'gRPC handler failed');
          finish(grpc.status.INTERNAL);
          callback({ code: grpc.status.INTERNAL, details: 'internal error' });
        },
      );
    };
  }

  return {
    server,
    addService(definition, handlers, allowed) {
      const implementation: grpc.UntypedServiceImplementation = {};
      for (const [name, method] of Object.entries(definition)) {
        const handler = handlers[name];
        if (!handler) throw new Error(`no handler for ${method.path}`);
        implementation[name] = wrap(method.path, handler, allowed[name] ?? []);
        serviceNames.push(method.path.split('/')[1] ?? name);
      }
      server.addService(definition, implementation);
    },
    listen(host, port) {
      return new Promise((resolve, reject) => {
        server.bindAsync(`${host}:${port}`, grpc.ServerCredentials.createInsecure(), (error, boundPort) => {
          if (error) return reject(error);
          health.setStatus('', 'SERVING');
          for (const name of new Set(serviceNames)) health.setStatus(name, 'SERVING');
          resolve(boundPort);
        });
      });
    },
    shutdown() {
      health.setStatus('', 'NOT_SERVING');
      for (const name of new Set(serviceNames)) health.setStatus(name, 'NOT_SERVING');
      return new Promise((resolve) => server.tryShutdown(() => resolve()));
    },
  };
}
