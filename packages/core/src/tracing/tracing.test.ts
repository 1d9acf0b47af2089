import { FERRY_HEADERS } from '../contracts';
import { inheritScope, messageScopeOf, runInMessageScope, currentMessageScope } from './messageScope';
import { setOtelLoaderForTests } from './otel';
import { startSpan } from './span';
import { formatTraceparent, parseTraceparent } from './w3c';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE}-${SPAN}-01`;

describe('W3C traceparent', () => {
  it('parses a valid one and formats it back', () => {
    const parsed = parseTraceparent(TRACEPARENT);
    expect(parsed).toEqual({ traceId: TRACE, spanId: SPAN, traceFlags: 1 });
    expect(formatTraceparent(parsed!)).toBe(TRACEPARENT);
  });

  it.each([
    ['absent', undefined],
    ['upper-case', TRACEPARENT.toUpperCase()],
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['all-zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['truncated', TRACEPARENT.slice(0, 40)],
    ['version 00 with more fields', `${TRACEPARENT}-extra`],
    ['newer version followed by no dash', `cc-${TRACE}-${SPAN}-01x`],
    ['newer version of a bad shape', `cc-${TRACE}-${SPAN}-1`],
  ])('refuses a %s value as a parent', (_what, value) => {
    expect(parseTraceparent(value)).toBeNull();
  });

  it.each([
    ['with more fields', `cc-${TRACE}-${SPAN}-01-what-the-future-will-be-like`],
    ['without more fields', `01-${TRACE}-${SPAN}-01`],
    ['with an empty field after', `cc-${TRACE}-${SPAN}-01-`],
  ])('reads the first four fields of a newer version %s (W3C versioning)', (_what, value) => {
    expect(parseTraceparent(value)).toEqual({ traceId: TRACE, spanId: SPAN, traceFlags: 1 });
  });

  it("a handled message's newer-version traceparent is inherited as version 00, the shape emit takes", () => {
    const scope = messageScopeOf('m', { [FERRY_HEADERS.traceparent]: `cc-${TRACE}-${SPAN}-01-extra` });
    expect(scope.traceparent).toBe(TRACEPARENT);
  });
});

describe('the handled message scope', () => {
  const scope = messageScopeOf('msg-1', {
    [FERRY_HEADERS.correlationId]: 'corr-1',
    [FERRY_HEADERS.traceparent]: TRACEPARENT,
    [FERRY_HEADERS.tracestate]: 'vendor=1',
  });

  it('takes the incoming correlation id, else the incoming message id starts the conversation', () => {
    expect(scope).toEqual({
      messageId: 'msg-1',
      correlationId: 'corr-1',
      traceparent: TRACEPARENT,
      tracestate: 'vendor=1',
    });
    expect(messageScopeOf('msg-2', { [FERRY_HEADERS.traceparent]: 'garbage', tracestate: 'x=1' })).toEqual({
      messageId: 'msg-2',
      correlationId: 'msg-2',
      traceparent: null,
      tracestate: null,
    });
  });

  it('fills what the event leaves undefined: correlation, causation, incoming trace context', () => {
    expect(inheritScope({ type: 't', payload: {} }, scope, null, 255)).toEqual({
      type: 't',
      payload: {},
      correlationId: 'corr-1',
      causationId: 'msg-1',
      traceparent: TRACEPARENT,
      tracestate: 'vendor=1',
    });
  });

  it('prefers the emit span’s context to the incoming one', () => {
    const own = `00-${TRACE}-${'1'.repeat(16)}-01`;
    const event = inheritScope(
      { type: 't', payload: {} },
      scope,
      { traceparent: own, tracestate: null },
      255,
    );
    expect(event.traceparent).toBe(own);
    expect(event.tracestate).toBeUndefined();
  });

  it('lets explicit values, null included, win', () => {
    const event = { type: 't', payload: {}, correlationId: null, causationId: 'mine', traceparent: null };
    expect(inheritScope(event, scope, null, 255)).toEqual(event);
  });

  it('does not inherit what emit would refuse, so a hostile header cannot fail the handler’s emit', () => {
    const hostile = messageScopeOf('m'.repeat(255), { [FERRY_HEADERS.correlationId]: 'x\u0000y' });
    const event = inheritScope({ type: 't', payload: {} }, hostile, null, 64);
    expect(event).toEqual({ type: 't', payload: {} });
  });

  it('inherits nothing outside a handler', () => {
    expect(currentMessageScope()).toBeUndefined();
    expect(inheritScope({ type: 't', payload: {} }, currentMessageScope(), null, 255)).toEqual({
      type: 't',
      payload: {},
    });
  });

  it('is visible through awaits inside runInMessageScope, and only there', async () => {
    const seen = await runInMessageScope(scope, async () => {
      await new Promise((resolve) => setImmediate(resolve));
      return currentMessageScope();
    });
    expect(seen).toBe(scope);
    expect(currentMessageScope()).toBeUndefined();
  });
});

describe('without @opentelemetry/api', () => {
  afterEach(() => setOtelLoaderForTests(undefined));

  it('spans are no-ops that still run their work', () => {
    setOtelLoaderForTests(() => {
      throw new Error("Cannot find module '@opentelemetry/api'");
    });
    const span = startSpan({
      name: 'x',
      kind: 'producer',
      parent: { traceparent: TRACEPARENT, tracestate: null },
      fallback: 'root',
    });
    expect(span.traceContext()).toBeNull();
    expect(span.run(() => 42)).toBe(42);
    expect(() => span.end(new Error('boom'))).not.toThrow();
  });

  it('with the API but no SDK registered, a span carries on its parent’s context', () => {
    const span = startSpan({
      name: 'x',
      kind: 'consumer',
      parent: { traceparent: TRACEPARENT, tracestate: null },
      fallback: 'root',
    });
    expect(span.traceContext()).toEqual({ traceparent: TRACEPARENT, tracestate: null });
    span.end();
  });
});
