import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { startTracing } from './tracing';

describe('startTracing', () => {
  const saved = process.env.OTEL_RESOURCE_ATTRIBUTES;
  afterEach(() => {
    if (saved === undefined) delete process.env.OTEL_RESOURCE_ATTRIBUTES;
    else process.env.OTEL_RESOURCE_ATTRIBUTES = saved;
  });

  it('puts the OTEL_RESOURCE_ATTRIBUTES the Helm chart sets on every span, under the service name', async () => {
    process.env.OTEL_RESOURCE_ATTRIBUTES = 'service.namespace=acme,k8s.namespace.name=wl,k8s.pod.name=acme-worklane-issue-5d9c-x2,service.version=1.2.3';
    const exporter = new InMemorySpanExporter();
    const tracing = startTracing({ serviceName: 'issue', exporter });
    try {
      trace.getTracer('test').startSpan('probe').end();
      const [span] = exporter.getFinishedSpans();
      await span!.resource.waitForAsyncAttributes?.();
      expect(span!.resource.attributes).toMatchObject({
        'service.name': 'issue',
        'service.namespace': 'acme',
        'service.version': '1.2.3',
        'k8s.namespace.name': 'wl',
        'k8s.pod.name': 'acme-worklane-issue-5d9c-x2',
      });
    } finally {
      await tracing.shutdown();
    }
  });
});
