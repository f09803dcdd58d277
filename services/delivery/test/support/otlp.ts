import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CollectedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
}

/**
 * An OTLP/HTTP trace receiver (JSON encoding, as @opentelemetry/exporter-trace-otlp-http sends)
 * that keeps every span it is sent. Services export to it through OTEL_EXPORTER_OTLP_ENDPOINT.
 */
export class OtlpSink {
  readonly spans: CollectedSpan[] = [];

  private constructor(private readonly server: Server) {}

  static async start(): Promise<OtlpSink> {
    // eslint-disable-next-line prefer-const -- assigned below, after the server that refers to it
    let sink: OtlpSink | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        try {
          sink?.collect(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch {
          // not JSON: ignored
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    sink = new OtlpSink(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return sink;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  inTrace(traceId: string): CollectedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private collect(body: any): void {
    for (const resourceSpans of body.resourceSpans ?? []) {
      const service = (resourceSpans.resource?.attributes ?? []).find((attribute: any) => attribute.key === 'service.name')?.value?.stringValue ?? '';
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          this.spans.push({ service, traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId ?? '', name: span.name });
        }
      }
    }
  }
}
