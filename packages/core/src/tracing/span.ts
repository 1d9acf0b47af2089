import type { Attributes, Context, Span } from '@opentelemetry/api';
import { otel, type Otel } from './otel';
import { formatTraceparent, parseTraceparent } from './w3c';

/** The instrumentation scope ferry's spans are created under. */
export const FERRY_TRACER_NAME = '@ferry/core';

/** A W3C trace context as ferry writes it onto a row or headers. */
export interface TraceContext {
  readonly traceparent: string;
  readonly tracestate: string | null;
}

export interface SpanStart {
  readonly name: string;
  readonly kind: 'internal' | 'producer' | 'consumer';
  /**
   * A traceparent to continue (remote parent) when it is valid, else `fallback`: the active
   * context, or a new trace (`root`).
   */
  readonly parent?: { readonly traceparent: string | null; readonly tracestate: string | null };
  readonly fallback: 'active' | 'root';
  readonly attributes?: Attributes;
}

/** One of ferry's spans; every method is a no-op when OpenTelemetry is absent. */
export interface FerrySpan {
  /** The span's own W3C context, or null when it has none worth propagating. */
  traceContext(): TraceContext | null;
  setAttributes(attributes: Attributes): void;
  /** Runs `fn` with this span as the active context. */
  run<T>(fn: () => T): T;
  /** Ends the span, ERROR with `error` (an Error is recorded as an exception) when given. */
  end(error?: unknown): void;
}

const NOOP_SPAN: FerrySpan = {
  traceContext: () => null,
  setAttributes: () => undefined,
  run: (fn) => fn(),
  end: () => undefined,
};

function parentContext(api: Otel, start: SpanStart): Context {
  const remote = parseTraceparent(start.parent?.traceparent);
  if (remote === null) return start.fallback === 'active' ? api.context.active() : api.ROOT_CONTEXT;
  const tracestate = start.parent?.tracestate;
  return api.trace.setSpanContext(api.ROOT_CONTEXT, {
    ...remote,
    isRemote: true,
    ...(tracestate && api.createTraceState ? { traceState: api.createTraceState(tracestate) } : {}),
  });
}

const KINDS = { internal: 'INTERNAL', producer: 'PRODUCER', consumer: 'CONSUMER' } as const;

/** Starts a span (not yet active; see `run`). Never throws: a tracing failure is a no-op span. */
export function startSpan(start: SpanStart): FerrySpan {
  const api = otel();
  if (api === null) return NOOP_SPAN;
  let span: Span;
  let active: Context;
  try {
    const parent = parentContext(api, start);
    span = api.trace
      .getTracer(FERRY_TRACER_NAME)
      .startSpan(
        start.name,
        { kind: api.SpanKind[KINDS[start.kind]], attributes: start.attributes ?? {} },
        parent,
      );
    active = api.trace.setSpan(parent, span);
  } catch {
    return NOOP_SPAN;
  }
  return {
    traceContext() {
      const context = span.spanContext();
      if (!api.trace.isSpanContextValid(context)) return null;
      return {
        traceparent: formatTraceparent(context),
        tracestate: context.traceState?.serialize() || null,
      };
    },
    setAttributes(attributes) {
      span.setAttributes(attributes);
    },
    run(fn) {
      return api.context.with(active, fn);
    },
    end(error) {
      if (error !== undefined) {
        if (error instanceof Error) span.recordException(error);
        const message = error instanceof Error ? error.message : String(error);
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: message.slice(0, 1_000) });
      }
      span.end();
    },
  };
}

/** Runs `fn` inside `span` (active) and ends it with fn's outcome. */
export async function inSpan<T>(span: FerrySpan, fn: () => Promise<T>): Promise<T> {
  try {
    const result = await span.run(fn);
    span.end();
    return result;
  } catch (error) {
    span.end(error);
    throw error;
  }
}
