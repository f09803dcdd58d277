// Trace context kept with stored work, and spans. No NATS client here (`@worklane/messaging/trace-context`
// is imported by API threads); message-trace.ts puts the context on messages.
import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';

export { SpanKind };

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
