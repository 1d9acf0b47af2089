/**
 * Review 105 (failed first): a span whose tracestate cannot be read loses its traceparent too.
 *
 * What I did: a tracer provider of the application's whose spans are valid and sampled, but whose
 * SpanContext's traceState throws on serialize() (or its getter throws: a wrapper with a bug, as
 * review 104's spanContext() that threw). Then emitted an event.
 * What happened: traceContext() (review 104: "W3C's shape or nothing, never a throw") read the
 * tracestate inside the same guard as the traceparent, so the whole context was null: the event
 * was stored without the emit span's traceparent and the trace broke at the broker.
 * What should happen: only what cannot be read is left out: the traceparent is propagated, the
 * tracestate is not.
 */
import { trace, type SpanContext } from '@opentelemetry/api';
import { emit } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { spanContextProvider } from '../../../test-support/tracing';

const IDS = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 };

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterEach(() => trace.disable());
afterAll(() => t.drop());

const broken: [string, SpanContext][] = [
  [
    'whose serialize() throws',
    {
      ...IDS,
      traceState: {
        serialize: () => {
          throw new Error('broken');
        },
      } as never,
    },
  ],
  [
    'whose getter throws',
    Object.defineProperty({ ...IDS }, 'traceState', {
      get: () => {
        throw new Error('broken');
      },
    }),
  ],
];

it.each(broken)(
  'a span with a tracestate %s: the event carries its traceparent, no tracestate',
  async (_name, context) => {
    trace.setGlobalTracerProvider(spanContextProvider(() => context));
    const { id } = await emit(t.db, { type: 'order.placed', payload: {} });
    const [row] = await t.db.query<{ traceparent: string | null; tracestate: string | null }>(
      'SELECT traceparent, tracestate FROM outbox_events WHERE id = $1::uuid',
      [id],
    );
    expect(row).toEqual({ traceparent: `00-${IDS.traceId}-${IDS.spanId}-01`, tracestate: null });
  },
);
