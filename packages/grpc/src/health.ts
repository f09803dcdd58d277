import * as grpc from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';

const HealthClient = grpc.makeGenericClientConstructor(healthService as grpc.ServiceDefinition, 'grpc.health.v1.Health');

export interface HealthChecker {
  /** True when the server reports `service` ('' = the whole server) SERVING within the deadline. */
  isServing(service?: string, deadlineMs?: number): Promise<boolean>;
  close(): void;
}

/**
 * A client of a server's standard gRPC health service (the only unauthenticated method), for
 * readiness checks of gRPC dependencies. One channel, reused for every check.
 */
export function createHealthChecker(address: string): HealthChecker {
  const client = new HealthClient(address, grpc.credentials.createInsecure(), {
    'grpc.initial_reconnect_backoff_ms': 200,
    'grpc.max_reconnect_backoff_ms': 2_000,
  });
  return {
    isServing(service = '', deadlineMs = 2_000) {
      return new Promise((resolve) => {
        client.makeUnaryRequest(
          '/grpc.health.v1.Health/Check',
          (request: { service: string }) => healthService.Check!.requestSerialize(request),
          (buffer: Buffer) => healthService.Check!.responseDeserialize(buffer) as { status: string },
          { service },
          new grpc.Metadata(),
          { deadline: Date.now() + deadlineMs },
          (error, response) => resolve(!error && response?.status === 'SERVING'),
        );
      });
    },
    close: () => client.close(),
  };
}
