export { createLogger, type Logger } from './logger';
export { currentRequestContext, runInRequestContext, type RequestContext } from './request-context';
export { createMetrics, type ServiceMetrics, type Registry, promClient } from './metrics';
export { startTracing, type Tracing, type TracingOptions } from './tracing';
export { Lifecycle, type ShutdownStep } from './lifecycle';
export { bootService, startRuntime, exitOnStartupFailure, type ServiceRuntime, type RuntimeConfig } from './runtime';
export { createMetricsServer, serveMetrics, closeMetricsServer } from './metrics-server';
export { BackgroundWorker, backoffMs, type BackgroundWorkerOptions, type PassResult } from './background-worker';
export { DependencyUnavailableError, isDependencyUnavailable } from './dependency-unavailable';
