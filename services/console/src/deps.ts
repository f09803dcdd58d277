import type { Logger, ServiceMetrics, promClient } from '@worklane/observability';
import type { Accounts } from './clients/accounts';
import type { ServiceApi } from './clients/services';
import type { AttemptLimiter, SignInLimits } from './rate-limit';
import type { Assets } from './views/layout';

/** What the console is built from (main.ts gives the real clients, tests their own). */
export interface ConsoleOptions {
  accounts: Accounts;
  services: ServiceApi;
  logger: Logger;
  metrics: ServiceMetrics;
  isReady: () => boolean | Promise<boolean>;
  signupEnabled: boolean;
  /** Secure cookies even over plain HTTP (a TLS-terminating proxy that does not say so). */
  secureCookies: boolean;
  /**
   * express 'trust proxy': which proxies may name the client address and protocol (false: none,
   * the socket's peer is the client; a number: that many hops; addresses or subnets).
   */
  trustProxy: boolean | number | string | string[];
  /** Sign-in limits, enforced by the token service for every replica at once. */
  login: SignInLimits;
  /** Retry-After of the 503 page shown when a service behind the console is unavailable (UNAVAILABLE_RETRY_AFTER_SECONDS). */
  retryAfterSeconds?: number;
}

/** What the routes share: the options plus the throttles, counters and asset paths. */
export interface ConsoleDeps extends ConsoleOptions {
  assets: Assets;
  signups: AttemptLimiter;
  loginAttempts: promClient.Counter<'outcome'>;
}
