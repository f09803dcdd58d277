import { Lifecycle } from './lifecycle';
import { createLogger, type Logger } from './logger';
import { createMetrics, type ServiceMetrics } from './metrics';
import { startTracing, type Tracing } from './tracing';

export interface RuntimeConfig {
  LOG_LEVEL: string;
  OTEL_SERVICE_NAME: string;
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  SHUTDOWN_TIMEOUT_MS: number;
}

/** What every Worklane process has: logs, metrics, traces and a graceful lifecycle. */
export interface ServiceRuntime {
  logger: Logger;
  metrics: ServiceMetrics;
  tracing: Tracing;
  lifecycle: Lifecycle;
}

/**
 * Starts tracing first (so the instrumentations patch express, pg and grpc-js as they load),
 * then logging, metrics and the lifecycle. Call it from a service's `instrumentation.ts`, the
 * first import of its `main.ts`.
 */
export function startRuntime(service: string, config: RuntimeConfig): ServiceRuntime {
  const tracing = startTracing({ serviceName: config.OTEL_SERVICE_NAME, otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
  const logger = createLogger(service, config.LOG_LEVEL);
  return { logger, metrics: createMetrics(service), tracing, lifecycle: new Lifecycle(logger, config.SHUTDOWN_TIMEOUT_MS) };
}

/** Exits with a readable message when start-up fails (bad configuration, unreachable database...). */
export function exitOnStartupFailure(logger: Logger | undefined, error: unknown): never {
  if (logger) logger.fatal({ err: error }, 'failed to start');
  else console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}

/**
 * Loads a service's configuration and starts its runtime, exiting with a message naming the bad
 * variables when the environment is invalid. The whole of a service's `instrumentation.ts`.
 */
export function bootService<Config extends RuntimeConfig>(service: string, load: () => Config): { config: Config; runtime: ServiceRuntime } {
  let config: Config;
  try {
    config = load();
  } catch (error) {
    return exitOnStartupFailure(undefined, error);
  }
  return { config, runtime: startRuntime(service, config) };
}
