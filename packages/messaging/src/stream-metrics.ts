import type { JetStreamManager, StreamInfo } from '@nats-io/jetstream';
import { promClient, type Registry } from '@worklane/observability';
import { ISSUE_EVENTS_STREAM } from './issue-events';

/** One stream info read serves every gauge of a scrape. */
const READ_REUSE_MS = 1_000;

/**
 * Gauges of the ISSUE_EVENTS stream's usage and limits, read from the server at each scrape:
 * `worklane_stream_bytes`/`worklane_stream_max_bytes`, `worklane_stream_messages`/
 * `worklane_stream_max_messages`, `worklane_stream_oldest_age_seconds`/`worklane_stream_max_age_seconds`
 * and `worklane_stream_replicas`, labelled with the stream. An unlimited limit reads 0. During a
 * NATS outage the gauges keep their last values rather than failing /metrics.
 */
export function registerStreamMetrics(registry: Registry, jsm: JetStreamManager, stream = ISSUE_EVENTS_STREAM): void {
  let last: { at: number; read: Promise<StreamInfo | undefined> } | undefined;
  const read = () => {
    if (!last || Date.now() - last.at > READ_REUSE_MS) last = { at: Date.now(), read: jsm.streams.info(stream).catch(() => undefined) };
    return last.read;
  };
  const gauge = (name: string, help: string, value: (info: StreamInfo) => number) =>
    new promClient.Gauge({
      name,
      help,
      labelNames: ['stream'],
      registers: [registry],
      async collect() {
        const info = await read();
        if (info) this.set({ stream }, value(info));
      },
    });
  const limit = (value: number | undefined) => (value === undefined || value < 0 ? 0 : value);
  gauge('worklane_stream_bytes', 'Bytes held by the JetStream stream (events not yet taken by every consumer)', (info) => info.state.bytes);
  gauge('worklane_stream_max_bytes', 'Byte limit of the JetStream stream (0: unlimited)', (info) => limit(info.config.max_bytes));
  gauge('worklane_stream_messages', 'Messages held by the JetStream stream', (info) => info.state.messages);
  gauge('worklane_stream_max_messages', 'Message limit of the JetStream stream (0: unlimited)', (info) => limit(info.config.max_msgs));
  gauge('worklane_stream_oldest_age_seconds', 'Age of the oldest message the JetStream stream holds', (info) =>
    info.state.messages > 0 && info.state.first_ts ? Math.max(0, (Date.now() - Date.parse(info.state.first_ts)) / 1000) : 0,
  );
  gauge('worklane_stream_max_age_seconds', 'Age limit of the JetStream stream (0: unlimited)', (info) => limit(info.config.max_age) / 1e9);
  gauge('worklane_stream_replicas', 'Replicas of the JetStream stream', (info) => info.config.num_replicas);
}
