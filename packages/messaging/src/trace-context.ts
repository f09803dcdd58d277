import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';
import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';

export { SpanKind };

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

/**
 * The active trace context as plain strings (`traceparent`, `tracestate`), for work that is
 * stored in PostgreSQL and resumed later by another process: an outbox row, a delivery.
 */
export function captureTraceContext(active: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(active, carrier);
  return carrier;
}

/** The trace context stored by `captureTraceContext`; the active one when nothing was stored. */
export function restoreTraceContext(carrier: Record<string, string> | null | undefined): Context {
  if (!carrier) return context.active();
  return propagation.extract(context.active(), carrier);
}

const tracer = () => trace.getTracer('worklane');

export interface SpanOptions {
  kind?: SpanKind;
  /** The context to continue; the active one by default. */
  parent?: Context;
  attributes?: Attributes;
}

/**
 * Runs `work` inside a new span, which ends when it settles and records a thrown error. With
 * tracing off, the span is a no-op and this costs nothing worth measuring.
 */
export function inSpan<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T>): Promise<T> {
  const parent = options.parent ?? context.active();
  return tracer().startActiveSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes }, parent, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}
