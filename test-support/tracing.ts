/**
 * OpenTelemetry's SDK for a test file: an in-memory exporter, an AsyncLocalStorage context
 * manager and a tracer provider, registered globally (jest gives each test file its own globals).
 */
import {
  context,
  trace,
  type Span,
  type SpanContext,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import type { InboxAcceptInput, InboxAcceptor, InboxAcceptResult } from '@ferry/core';
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

/** The trace id of the span active where this is called, or null when none is. */
export function activeTraceId(): string | null {
  return trace.getActiveSpan()?.spanContext().traceId ?? null;
}

/**
 * Runs `start` with a new span of the application active (a traced start-up, the request that
 * attached a consumer lazily) and ends the span before it returns it.
 */
export function inApplicationSpan(name: string, start: () => void): Span {
  const span = trace.getTracer('application').startSpan(name);
  try {
    context.with(trace.setSpan(context.active(), span), start);
  } finally {
    span.end();
  }
  return span;
}

/**
 * A tracer provider of the application's whose every span answers `spanContext()` as given (a
 * hand-written provider: odd ids, a throwing wrapper, a tracestate that cannot be read).
 */
export function spanContextProvider(spanContext: () => SpanContext): TracerProvider {
  const tracer: Tracer = {
    startSpan: (): Span =>
      Object.assign(
        trace.wrapSpanContext({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 }),
        {
          spanContext,
        },
      ),
    startActiveSpan: (() => {
      throw new Error('not used');
    }) as Tracer['startActiveSpan'],
  };
  return { getTracer: () => tracer };
}

/** An acceptor that accepts every input and records the trace active at each acceptMany call. */
export interface TraceRecordingAcceptor extends InboxAcceptor {
  /** The active trace id (or null) of each acceptMany call, in order. */
  readonly traces: (string | null)[];
  readonly accepted: InboxAcceptInput[];
}

export function traceRecordingAcceptor(): TraceRecordingAcceptor {
  const traces: (string | null)[] = [];
  const accepted: InboxAcceptInput[] = [];
  return {
    maxPayloadBytes: 256 * 1024,
    traces,
    accepted,
    async acceptMany(inputs): Promise<readonly InboxAcceptResult[]> {
      traces.push(activeTraceId());
      accepted.push(...inputs);
      return inputs.map((input) => ({ kind: 'accepted' as const, id: input.messageId }));
    },
  };
}
