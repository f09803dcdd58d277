import type { HealthChecker } from '@worklane/grpc';

const CHECK_TIMEOUT_MS = 2_000;

async function answersReady(baseUrl: string): Promise<boolean> {
  try {
    const response = await fetch(new URL('/readyz', baseUrl), { signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * The gateway is ready when it can serve the whole API: the token service's gRPC health is
 * SERVING and every configured service answers its own /readyz.
 */
export function upstreamReadiness(tokenHealth: HealthChecker, upstreamUrls: string[]): () => Promise<boolean> {
  return async () => {
    const checks = await Promise.all([tokenHealth.isServing('', CHECK_TIMEOUT_MS), ...upstreamUrls.map(answersReady)]);
    return checks.every(Boolean);
  };
}
