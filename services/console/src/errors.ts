/** Which part of the system a person is told is not answering. */
export type ServiceName = 'token' | 'project' | 'webhook' | 'issue' | 'delivery';

/** A service the console depends on is unreachable, timed out or failed: the page is a 503. */
export class ServiceUnavailableError extends Error {
  constructor(
    readonly service: ServiceName,
    readonly reason?: unknown,
  ) {
    super(`the ${service} service is not answering`);
    this.name = 'ServiceUnavailableError';
  }
}
