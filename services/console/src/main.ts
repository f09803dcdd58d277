import { config, runtime } from './instrumentation';
import { closeHttpServer, listen, readiness } from '@worklane/http';
import { exitOnStartupFailure, closeMetricsServer, serveMetrics } from '@worklane/observability';
import { createApp } from './app';
import { createAccounts } from './clients/accounts';
import { ServiceApi } from './clients/services';

async function main(): Promise<void> {
  const { logger, metrics, lifecycle, tracing } = runtime;
  const accounts = createAccounts(config.TOKEN_SERVICE_ADDR, config.SIGNING_PRIVATE_KEY);
  const services = new ServiceApi({
    identitySigner: { name: 'console', key: config.SIGNING_PRIVATE_KEY },
    urls: {
      project: config.PROJECT_SERVICE_URL,
      webhook: config.WEBHOOK_SERVICE_URL,
      issue: config.ISSUE_SERVICE_URL,
      delivery: config.DELIVERY_SERVICE_URL,
    },
  });

  const app = createApp({
    accounts,
    services,
    logger,
    metrics,
    // The console keeps no state: it is ready while it runs, and explains on each page when a
    // service behind it is not answering rather than dropping out of rotation.
    isReady: readiness({ lifecycle }),
    signupEnabled: config.CONSOLE_SIGNUP_ENABLED,
    secureCookies: config.CONSOLE_SECURE_COOKIES,
    trustProxy: config.CONSOLE_TRUST_PROXY,
    login: {
      windowMs: config.CONSOLE_LOGIN_WINDOW_SECONDS * 1000,
      maxPerEmail: config.CONSOLE_LOGIN_MAX_PER_EMAIL,
      maxPerIp: config.CONSOLE_LOGIN_MAX_PER_IP,
    },
    retryAfterSeconds: config.UNAVAILABLE_RETRY_AFTER_SECONDS,
  });
  const server = await listen(app, config.HTTP_PORT, config.HOST);
  const metricsServer = await serveMetrics(metrics, config.METRICS_PORT, config.HOST);

  lifecycle
    .onShutdown('http', () => closeHttpServer(server, config.SHUTDOWN_DRAIN_MS))
    .onShutdown('token client', () => accounts.close())
    .onShutdown('metrics', () => closeMetricsServer(metricsServer))
    .onShutdown('tracing', () => tracing.shutdown());
  lifecycle.handleSignals();
  logger.info({ metricsPort: config.METRICS_PORT, httpPort: config.HTTP_PORT, signupEnabled: config.CONSOLE_SIGNUP_ENABLED }, 'console service started');
}

main().catch((error) => exitOnStartupFailure(runtime.logger, error));
