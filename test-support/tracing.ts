/**
 * OpenTelemetry's SDK for a test file: an in-memory exporter, an AsyncLocalStorage context
 * manager and a tracer provider, registered globally (jest gives each test file its own globals).
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';

export interface TestTracing {
  readonly exporter: InMemorySpanExporter;
  /** Finished spans, in the order they ended. */
  spans(): ReadableSpan[];
  /** The finished span with this name (fails unless exactly one). */
  only(name: string): ReadableSpan;
  shutdown(): Promise<void>;
}

export function installTracing(): TestTracing {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(provider);
  return {
    exporter,
    spans: () => exporter.getFinishedSpans(),
    only(name) {
      const found = exporter.getFinishedSpans().filter((s) => s.name === name);
      if (found.length !== 1) throw new Error(`expected one span "${name}", found ${found.length}`);
      return found[0] as ReadableSpan;
    },
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
}

/** The parent span id a finished span names. */
export function parentSpanId(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}
