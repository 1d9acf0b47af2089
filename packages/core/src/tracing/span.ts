import type { Attributes, Context, Span, SpanContext } from '@opentelemetry/api';
import { describeError, errorName, redactLine, type Redactor } from '../redact/redact';
import { otel, type Otel } from './otel';
import { formatTraceparent, MAX_TRACESTATE, parseTraceparent, validTracestate } from './w3c';

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
  /**
   * The active context comes first when a span is active in it, `parent` only when none is (an
   * emit inside a handler: the handler's span, or the handled message's context when no context
   * manager carries that span to the emit).
   */
  readonly activeFirst?: boolean;
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
   * message redacted by `redact` (the built-in rules by default; its stack's frames kept, the
   * message line replaced) and its name kept only when it looks like an identifier; a string is
   * used as it is (callers pass text they redacted, or ferry's own: inSpan redacts a thrown one).
   * Never throws: an error that cannot be read ends the span with describeError's line.
   */
  end(error?: unknown, redact?: Redactor): void;
}

const NOOP_SPAN: FerrySpan = {
  traceContext: () => null,
  setAttributes: () => undefined,
  run: (fn) => fn(),
  end: () => undefined,
};

function parentContext(api: Otel, start: SpanStart): Context {
  if (start.activeFirst) {
    const active = api.context.active();
    const span = api.trace.getSpan(active);
    if (span !== undefined && api.trace.isSpanContextValid(span.spanContext())) return active;
  }
  const remote = parseTraceparent(start.parent?.traceparent);
  if (remote === null) return start.fallback === 'active' ? api.context.active() : api.ROOT_CONTEXT;
  // One over W3C's limits is truncated as W3C says (validTracestate), not dropped.
  const given = start.parent?.tracestate;
  const tracestate = given && given.length > MAX_TRACESTATE ? validTracestate(given) : given;
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
function redactedException(
  error: Error,
  message: string,
  redact: Redactor | undefined,
): { name: string; message: string; stack?: string } {
  const name = errorName(error, redact);
  const stack: unknown = error.stack;
  const lines = typeof stack === 'string' ? stack.split('\n') : [];
  const firstFrame = lines.findIndex((line) => /^\s+at /.test(line));
  if (firstFrame < 0) return { name, message };
  return { name, message, stack: [`${name}: ${message}`, ...lines.slice(firstFrame)].join('\n') };
}

/** Sets the span's ERROR status (and exception) for `error`; what cannot be read is described. */
function endInError(api: Otel, span: Span, error: unknown, redact: Redactor | undefined): void {
  let message: string;
  try {
    if (error instanceof Error) {
      message = redactLine(String(error.message), MAX_STATUS_CHARS, redact);
      span.recordException(redactedException(error, message, redact));
    } else message = typeof error === 'string' ? error : describeError(error, MAX_STATUS_CHARS, redact);
  } catch {
    message = describeError(error, MAX_STATUS_CHARS, redact);
  }
  span.setStatus({ code: api.SpanStatusCode.ERROR, message: message.slice(0, MAX_STATUS_CHARS) });
}

/**
 * Whether every span started now would record nothing: @opentelemetry/api is absent, or no
 * tracer provider was registered (the global provider is still the API's proxy with nothing
 * behind it, whose tracers make only non-recording spans). A provider registered later is seen
 * at the next call. For spans whose context is never read (acceptance's): a non-recording span
 * still carries its remote parent's context, which emit propagates.
 */
export function recordsNoSpans(): boolean {
  const api = otel();
  if (api === null) return true;
  try {
    const provider = api.trace.getTracerProvider() as { getDelegateTracer?: unknown };
    const delegate = provider.getDelegateTracer;
    return (
      typeof delegate === 'function' &&
      (delegate as (name: string) => unknown).call(provider, FERRY_TRACER_NAME) === undefined
    );
  } catch {
    return false;
  }
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
    // What goes on a row and a header: W3C's shape or nothing, never a throw. A span is the
    // application's tracer's: OpenTelemetry takes upper-case hex ids (isSpanContextValid), which
    // emit refused as the event's inherited traceparent (review 104), and a span whose
    // spanContext() throws failed emit and the relay's claimed batch. A tracestate that cannot
    // be read is left out alone: the traceparent still carries the trace (review 105).
    traceContext() {
      let context: SpanContext;
      let traceparent: string;
      try {
        context = span.spanContext();
        if (!api.trace.isSpanContextValid(context)) return null;
        traceparent = formatTraceparent({
          traceId: context.traceId.toLowerCase(),
          spanId: context.spanId.toLowerCase(),
          traceFlags: context.traceFlags,
        });
        if (parseTraceparent(traceparent) === null) return null;
      } catch {
        return null;
      }
      try {
        return { traceparent, tracestate: validTracestate(context.traceState?.serialize()) };
      } catch {
        return { traceparent, tracestate: null };
      }
    },
    setAttributes(attributes) {
      try {
        span.setAttributes(attributes);
      } catch {
        // As startSpan: a tracing failure changes nothing of the traced work.
      }
    },
    run(fn) {
      return api.context.with(active, fn);
    },
    // Never throws: the SDK calls the application's span processors' onEnd inside span.end(),
    // unguarded, and one that threw failed an emit whose transaction had committed, an
    // acceptance whose receipt was stored, a relay cycle after the broker's confirm (review 37).
    end(error, redact) {
      try {
        if (error !== undefined) endInError(api, span, error, redact);
      } catch {
        // The status is lost; the span still ends below.
      }
      try {
        span.end();
      } catch {
        // A span processor's onEnd threw: tracing never breaks the traced work.
      }
    },
  };
}

/**
 * Runs `fn` inside `span` (active) and ends it with fn's outcome; what fn throws is redacted by
 * `redact` (the component's, e.g. the inbox's `redact` option), a thrown string too.
 */
export async function inSpan<T>(span: FerrySpan, fn: () => Promise<T>, redact?: Redactor): Promise<T> {
  try {
    const result = await span.run(fn);
    span.end();
    return result;
  } catch (error) {
    endSpan(span, { error }, redact);
    throw error;
  }
}

/**
 * Ends `span`, ERROR with `failure.error` when there is one (a thrown string redacted by
 * `redact` too). Never throws: tracing never replaces the error being reported.
 */
export function endSpan(
  span: FerrySpan,
  failure: { readonly error: unknown } | undefined,
  redact?: Redactor,
): void {
  try {
    if (failure === undefined) span.end();
    else {
      const { error } = failure;
      span.end(typeof error === 'string' ? redactLine(error, MAX_STATUS_CHARS, redact) : error, redact);
    }
  } catch {
    // Tracing never replaces the error being reported.
  }
}
