import * as api from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, envDetector, hostDetector, osDetector, resourceFromAttributes, serviceInstanceIdDetector } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { TracingSettings } from './tracing.ts';

/**
 * The OpenTelemetry SDK, loaded only when tracing is on (tracing.ts `startTracing` imports this module on demand): a
 * tracer provider whose spans go in batches to the OTLP/HTTP endpoint as JSON, W3C trace context as the propagator,
 * AsyncLocalStorage as the context manager. Traces only: metrics are Prometheus's (`/metrics`), logs pino's.
 *
 * The SDK reads its own standard variables besides ours (the exporter's OTEL_EXPORTER_OTLP_HEADERS and _TIMEOUT, the
 * batch's OTEL_BSP_*, OTEL_TRACES_SAMPLER, OTEL_RESOURCE_ATTRIBUTES, OTEL_LOG_LEVEL): they are OpenTelemetry's
 * contract with operators, read where OpenTelemetry reads them.
 *
 * The resource names the service, its version, the host and the OS, and no process detector: a process's command
 * line would put `slipway agent --enrollment-token …` into every exported batch.
 */
export function startTracingSdk(settings: TracingSettings): { api: typeof api; shutdown(): Promise<void> } {
  const sdk = new NodeSDK({
    resource: defaultResource().merge(resourceFromAttributes({ [ATTR_SERVICE_VERSION]: settings.serviceVersion })),
    resourceDetectors: [serviceInstanceIdDetector, hostDetector, osDetector, envDetector],
    serviceName: settings.serviceName,
    traceExporter: new OTLPTraceExporter({ url: settings.tracesUrl }),
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  return { api, shutdown: () => sdk.shutdown() };
}
