// Entry module of the outbox relay's thread (events/relay-host.ts starts it).
import { config, logger, tracing } from './instrumentation';
import { exitOnStartupFailure, ThreadChannel } from '@worklane/observability';
import { runRelayService } from '../events/relay-service';

runRelayService({ config, logger, tracing, channel: new ThreadChannel('issue', 'outbox relay') }).catch((error: unknown) => exitOnStartupFailure(logger, error));
