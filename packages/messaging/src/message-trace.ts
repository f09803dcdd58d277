// Trace context on NATS messages: the publisher puts the active context in the message's headers,
// the consumer continues it.
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';
import { context, propagation, type Context } from '@opentelemetry/api';

/** Message headers carrying the active trace context (W3C `traceparent`), for a publish. */
export function injectTraceContext(headers: MsgHdrs = natsHeaders(), active: Context = context.active()): MsgHdrs {
  propagation.inject(active, headers, {
    set: (carrier, key, value) => carrier.set(key, value),
  });
  return headers;
}

/** The trace context a consumed message carries, to continue its trace. */
export function extractTraceContext(headers: MsgHdrs | undefined): Context {
  if (!headers) return context.active();
  return propagation.extract(context.active(), headers, {
    get: (carrier, key) => (carrier.has(key) ? carrier.get(key) : undefined),
    keys: (carrier) => carrier.keys(),
  });
}
