import type { Attributes, Context, Span } from '@opentelemetry/api';
import { redactLine } from '../redact/redact';
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
  /**
   * Ends the span, ERROR with `error` when given. An Error is recorded as an exception, its
   * message redacted by the built-in rules (its stack's frames kept, the message line replaced);
   * a string is used as it is (callers pass text they redacted, or ferry's own).
   */
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

const MAX_STATUS_CHARS = 1_000;

/**
 * What a span records of an Error: its name, `message` (redacted), and the frames of its stack
 * under that message (the stack's own first lines repeat the unredacted message).
 */
function redactedException(error: Error, message: string): { name: string; message: string; stack?: string } {
  const name = String(error.name);
  const lines = typeof error.stack === 'string' ? error.stack.split('\n') : [];
  const firstFrame = lines.findIndex((line) => /^\s+at /.test(line));
  if (firstFrame < 0) return { name, message };
  return { name, message, stack: [`${name}: ${message}`, ...lines.slice(firstFrame)].join('\n') };
}

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
        const message =
          error instanceof Error ? redactLine(String(error.message), MAX_STATUS_CHARS) : String(error);
        if (error instanceof Error) span.recordException(redactedException(error, message));
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: message.slice(0, MAX_STATUS_CHARS) });
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
