import { config, runtime } from './instrumentation';
import { createGrpcClient } from '@worklane/grpc';
import { closeHttpServer, listen, readiness } from '@worklane/http';
import { exitOnStartupFailure, closeMetricsServer, serveMetrics } from '@worklane/observability';
import { loadProto, type TokenProto } from '@worklane/proto';
import { loadApiDescription } from './api-description';
import { createApp, type Upstream } from './app';
import { TokenAuthenticator } from './authenticate';
import { createAgents } from './proxy';
import { RateLimiter, RefusalPacing } from './rate-limit';
import { RateLimitSync } from './rate-limit-sync';
import { TokenChangeFeed } from './token-changes';

async function main(): Promise<void> {
  const { logger, metrics, lifecycle, tracing } = runtime;
  const { TokenService } = loadProto<TokenProto>('token').worklane.token.v1;
  // One channel for every request: HTTP/2 multiplexes the calls.
  const tokenClient = createGrpcClient(TokenService, config.TOKEN_SERVICE_ADDR, { caller: 'gateway', signingKey: config.SIGNING_PRIVATE_KEY });
  const rateLimiter = new RateLimiter(config.RATE_LIMIT_PER_SECOND, config.RATE_LIMIT_BURST);
  const teamRateLimiter = new RateLimiter(config.RATE_LIMIT_TEAM_PER_SECOND, config.RATE_LIMIT_TEAM_BURST);
  // Shared by every replica through the token service, unless RATE_LIMIT_SYNC_INTERVAL_MS is 0.
  const rateLimitSync =
    config.RATE_LIMIT_SYNC_INTERVAL_MS > 0
      ? new RateLimitSync({
          client: tokenClient,
          limiters: { token: rateLimiter, team: teamRateLimiter },
          intervalMs: config.RATE_LIMIT_SYNC_INTERVAL_MS,
          timeoutMs: config.RATE_LIMIT_SYNC_TIMEOUT_MS,
          logger,
          registry: metrics.registry,
        })
      : undefined;
  const sweeper = setInterval(() => {
    rateLimiter.sweep();
    teamRateLimiter.sweep();
  }, 60_000).unref();
  const agents = createAgents(config.UPSTREAM_IDLE_TIMEOUT_MS);
  const followsChanges = config.GATEWAY_TOKEN_CHANGES_INTERVAL_MS > 0 && config.GATEWAY_AUTH_CACHE_TTL_MS > 0;
  const authenticator = new TokenAuthenticator(tokenClient, config.AUTHENTICATE_TIMEOUT_MS, logger, { ttlMs: config.GATEWAY_AUTH_CACHE_TTL_MS, followsChanges });
  authenticator.registerMetrics(metrics.registry);
  // Revocations and moves reach the cache within an interval; a revocation waits for the feed's lease.
  const tokenChanges = followsChanges
    ? new TokenChangeFeed({
        client: tokenClient,
        authenticator,
        intervalMs: config.GATEWAY_TOKEN_CHANGES_INTERVAL_MS,
        timeoutMs: config.AUTHENTICATE_TIMEOUT_MS,
        logger,
        registry: metrics.registry,
      })
    : undefined;

  const upstreams: Partial<Record<Upstream, string>> = {
    project: config.PROJECT_SERVICE_URL,
    webhook: config.WEBHOOK_SERVICE_URL,
    issue: config.ISSUE_SERVICE_URL,
    delivery: config.DELIVERY_SERVICE_URL,
    console: config.CONSOLE_SERVICE_URL,
  };

  const app = createApp({
    logger,
    metrics,
    identitySigner: { name: 'gateway', key: config.SIGNING_PRIVATE_KEY },
    authenticator,
    rateLimiter,
    teamRateLimiter,
    responseUnitBytes: config.RATE_LIMIT_RESPONSE_UNIT_BYTES,
    refusalPacing: new RefusalPacing(config.RATE_LIMIT_REFUSAL_DELAY_MAX_MS, config.RATE_LIMIT_REFUSALS_HELD_MAX),
    upstreams,
    agents,
    upstreamTimeoutMs: config.UPSTREAM_TIMEOUT_MS,
    retryAfterSeconds: config.UNAVAILABLE_RETRY_AFTER_SECONDS,
    bodyLimitBytes: config.REQUEST_BODY_MAX_BYTES,
    // Ready while it runs: it needs no database, and a service behind it that is down (the token
    // service included) makes only the requests that need it answer 503, with Retry-After.
    isReady: readiness({ lifecycle }),
    apiDescription: loadApiDescription(),
  });
  const server = await listen(app, config.HTTP_PORT, config.HOST);
  rateLimitSync?.start();
  tokenChanges?.start();
  const metricsServer = await serveMetrics(metrics, config.METRICS_PORT, config.HOST);

  lifecycle
    .onShutdown('http', () => closeHttpServer(server, config.SHUTDOWN_DRAIN_MS))
    .onShutdown('rate limit sync', async () => void (await rateLimitSync?.stop(config.RATE_LIMIT_SYNC_TIMEOUT_MS)))
    .onShutdown('token changes', async () => void (await tokenChanges?.stop(config.AUTHENTICATE_TIMEOUT_MS)))
    .onShutdown('clients', () => {
      clearInterval(sweeper);
      tokenClient.close();
      agents.destroy();
    })
    .onShutdown('metrics', () => closeMetricsServer(metricsServer))
    .onShutdown('tracing', () => tracing.shutdown());
  lifecycle.handleSignals();
  logger.info({ metricsPort: config.METRICS_PORT, httpPort: config.HTTP_PORT, upstreams: Object.keys(upstreams).filter((name) => upstreams[name as Upstream]) }, 'gateway started');
}

main().catch((error) => exitOnStartupFailure(runtime.logger, error));
