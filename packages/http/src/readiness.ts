import type { Logger } from '@worklane/observability';

/**
 * A check of something the process itself needs to serve a request: it passes when it resolves
 * to anything but `false` and fails when it throws or resolves to `false`.
 */
export type ReadinessCheck = () => unknown;

export interface ReadinessOptions {
  /** False from the moment shutdown begins (the service's Lifecycle). */
  lifecycle: { readonly ready: boolean };
  /**
   * What the process needs for every request, by name: its own database, never a service it
   * calls (a dependency that is down makes only the requests that need it answer 503).
   */
  checks?: Readonly<Record<string, ReadinessCheck>>;
  /** Told when readiness changes, with the check that failed. */
  logger?: Pick<Logger, 'warn' | 'info'>;
}

async function passes(check: ReadinessCheck): Promise<{ ok: boolean; error?: unknown }> {
  try {
    return { ok: (await check()) !== false };
  } catch (error) {
    return { ok: false, error };
  }
}

/**
 * The `isReady` of createServiceApp (`/readyz`): ready while not shutting down and every check
 * passes. One log line when it stops being ready (naming the failed checks) and one when it is
 * ready again, not one per probe.
 */
export function readiness(options: ReadinessOptions): () => Promise<boolean> {
  const checks = Object.entries(options.checks ?? {});
  let wasReady = true;
  return async () => {
    if (!options.lifecycle.ready) return false;
    const results = await Promise.all(checks.map(async ([name, check]) => ({ name, ...(await passes(check)) })));
    const failed = results.filter((result) => !result.ok);
    const ready = failed.length === 0;
    if (ready !== wasReady) {
      wasReady = ready;
      if (ready) options.logger?.info({}, 'ready again');
      else options.logger?.warn({ failed: failed.map((result) => result.name), err: failed.find((result) => result.error)?.error }, 'not ready');
    }
    return ready;
  };
}
