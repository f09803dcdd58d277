// Entry module of the delivery pipeline's thread (pipeline-host.ts starts it).
import { config, logger, tracing } from './instrumentation';
import { exitOnStartupFailure, ThreadChannel } from '@worklane/observability';
import { runPipeline } from './pipeline';

runPipeline({ config, logger, tracing, channel: new ThreadChannel('delivery', 'delivery pipeline') }).catch((error: unknown) => exitOnStartupFailure(logger, error));
