import { join } from 'node:path';
import { ServiceThread, type Logger } from '@worklane/observability';
import { PIPELINE_MESSAGES } from './pipeline-messages';

/**
 * Starts the delivery pipeline (event consumer, fan-out backlog, sender, recovery, endpoint health,
 * retention) on a thread of its own (pipeline-thread/) and resolves once it runs. Its event loop
 * and heap serve only the pipeline: the delivery log API's work (pages, request bodies, signature
 * checks, their garbage collection) cannot delay any team's deliveries. The API tells it of the
 * deliveries and recovery jobs it creates, as messages.
 */
export async function startPipelineThread(logger: Logger): Promise<{ thread: ServiceThread; wakeSender: () => void; wakeRecovery: () => void }> {
  const thread = new ServiceThread({ file: join(__dirname, 'pipeline-thread', 'main.js'), name: 'delivery pipeline', logger });
  await thread.start();
  return {
    thread,
    wakeSender: () => thread.post({ kind: PIPELINE_MESSAGES.deliveryCreated }),
    wakeRecovery: () => thread.post({ kind: PIPELINE_MESSAGES.recoveryCreated }),
  };
}
