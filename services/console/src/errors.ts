import { DependencyUnavailableError } from '@worklane/observability';

/** Which part of the system a person is told is not answering. */
export type ServiceName = 'token' | 'project' | 'webhook' | 'issue' | 'delivery';

/**
 * A service the console depends on is unreachable, timed out or failed: the page is a 503 with
 * Retry-After, the console's form of the answer every service gives to an unavailable dependency.
 */
export class ServiceUnavailableError extends DependencyUnavailableError {
  constructor(
    readonly service: ServiceName,
    readonly reason?: unknown,
  ) {
    super(`${service} service`, reason);
    this.message = `the ${service} service is not answering`;
    this.name = 'ServiceUnavailableError';
  }
}
