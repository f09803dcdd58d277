import { trace } from '@opentelemetry/api';
import pino from 'pino';
import { currentRequestContext } from './request-context';

export type Logger = pino.Logger;

/**
 * JSON logs on stdout; every line carries the service name, inside a span its trace id, and while
 * a request is served its request id (`request_id`, the X-Request-Id the client sees).
 */
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
      const requestId = currentRequestContext()?.requestId;
      return {
        ...(requestId ? { request_id: requestId } : {}),
        ...(spanContext ? { trace_id: spanContext.traceId, span_id: spanContext.spanId } : {}),
      };
    },
  });
}
