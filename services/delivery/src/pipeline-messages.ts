/** Messages from the API's thread to the delivery pipeline's (pipeline-host.ts, pipeline-thread/). */
export const PIPELINE_MESSAGES = {
  /** A delivery was created by the API (ping, redelivery): the sender looks now rather than at its next poll. */
  deliveryCreated: 'pipeline:delivery-created',
  /** A recovery job was created by the API: the recovery worker looks now. */
  recoveryCreated: 'pipeline:recovery-created',
} as const;
