import { JetStreamApiCodes, JetStreamApiError, RetentionPolicy, StorageType, type JetStreamManager, type StreamConfig, type StreamInfo } from '@nats-io/jetstream';
import { z } from '@worklane/config';
import type { Logger } from '@worklane/observability';
import { limitsDiffer, strongerLimits, type StreamLimits } from './stream-limits';

/**
 * The JetStream stream on which the webhook service states, after every committed change of a
 * webhook, which team's webhooks changed. The delivery service keeps the webhook directory in
 * memory and drops a team's part of it on each notice (docs/webhook-directory-cache.md). A notice
 * names the team and the webhook, never a URL or a secret.
 */
export const WEBHOOK_CHANGES_STREAM = 'WEBHOOK_CHANGES';
export const WEBHOOK_CHANGES_SUBJECT = 'webhooks.changed';

export const WEBHOOK_CHANGE_KINDS = ['created', 'updated', 'rotated', 'deleted', 'disabled'] as const;
export type WebhookChangeKind = (typeof WEBHOOK_CHANGE_KINDS)[number];

export interface WebhookChange {
  team_id: number;
  webhook_id: number;
  change: WebhookChangeKind;
}

const webhookChange = z.object({
  team_id: z.number().int().positive(),
  webhook_id: z.number().int().positive(),
  change: z.enum(WEBHOOK_CHANGE_KINDS),
});

export const encodeWebhookChange = (change: WebhookChange): Uint8Array =>
  Buffer.from(JSON.stringify({ team_id: change.team_id, webhook_id: change.webhook_id, change: change.change }));

/** The notice, or undefined when the bytes are not one (the reader then forgets every team). */
export function readWebhookChange(data: Uint8Array): WebhookChange | undefined {
  try {
    const parsed = webhookChange.safeParse(JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Limits retention, one subject; `discard: old` so a full stream never refuses a notice. */
const WEBHOOK_CHANGES_STREAM_CONFIG: Partial<StreamConfig> & { name: string } = {
  name: WEBHOOK_CHANGES_STREAM,
  subjects: [WEBHOOK_CHANGES_SUBJECT],
  retention: RetentionPolicy.Limits,
  storage: StorageType.File,
};

/**
 * Creates the WEBHOOK_CHANGES stream or brings an existing one to these limits without weakening
 * any (as ensureIssueEventsStream does). Safe to race.
 */
export async function ensureWebhookChangesStream(jsm: JetStreamManager, limits: StreamLimits, logger?: Pick<Logger, 'warn' | 'info' | 'error'>): Promise<StreamInfo> {
  const name = WEBHOOK_CHANGES_STREAM;
  let info: StreamInfo;
  try {
    info = await jsm.streams.info(name);
  } catch (error) {
    if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)) throw error;
    try {
      return await jsm.streams.add({ ...WEBHOOK_CHANGES_STREAM_CONFIG, ...limits });
    } catch (addError) {
      if (!(addError instanceof JetStreamApiError)) throw addError;
      info = await jsm.streams.info(name);
    }
  }
  const { limits: wanted, kept } = strongerLimits(info.config, limits);
  if (kept.length > 0) logger?.warn({ stream: name, kept }, 'WEBHOOK_CHANGES keeps limits stronger than configured');
  if (limitsDiffer(info.config, wanted)) {
    const { name: _name, ...update } = { ...info.config, ...wanted };
    try {
      info = await jsm.streams.update(name, update);
    } catch (error) {
      if (!(error instanceof JetStreamApiError)) throw error;
      logger?.error({ err: error, stream: name, wanted }, 'WEBHOOK_CHANGES could not be updated; it keeps its current configuration');
    }
  }
  return info;
}
