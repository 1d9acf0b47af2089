import { context, trace, type Span, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';

export interface DemoTracing {
  /** The tracer of the service that places the orders (upstream of the demo's pipeline). */
  readonly tracer: Tracer;
  /** Every span that ended so far: ferry's and the upstream service's. */
  spans(): ReadableSpan[];
  /** Flushes and unregisters the SDK, so another run in this process starts clean. */
  shutdown(): Promise<void>;
}

/**
 * OpenTelemetry's SDK for the demo process: a tracer provider whose spans stay in memory (a real
 * service would export them to a collector instead) and an AsyncLocalStorage context manager,
 * so the events a handler emits nest under its `process` span. ferry finds the SDK through
 * `@opentelemetry/api` once it is registered globally; nothing is passed to ferry itself.
 */
export function startTracing(): DemoTracing {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  return {
    tracer: trace.getTracer('ferry-demo-checkout'),
    spans: () => exporter.getFinishedSpans(),
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
}

/** The W3C `traceparent` header of a span, as ferry reads it off a delivery. */
export function traceparentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`;
}
