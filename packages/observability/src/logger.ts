import { trace } from '@opentelemetry/api';
import pino from 'pino';

export type Logger = pino.Logger;

/** JSON logs on stdout; every line carries the service name and, inside a span, its trace id. */
export function createLogger(service: string, level = 'info'): Logger {
  return pino({
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: {
      paths: ['password', 'secret', 'token', '*.password', '*.secret', '*.token', 'req.headers.authorization', 'req.headers.cookie'],
      censor: '[redacted]',
    },
    mixin() {
      const spanContext = trace.getActiveSpan()?.spanContext();
      return spanContext ? { trace_id: spanContext.traceId, span_id: spanContext.spanId } : {};
    },
  });
}
