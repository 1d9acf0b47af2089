/**
 * Review 104 (failed first): a tracer provider whose spans are odd breaks emit and the relay.
 *
 * What I did: registered a tracer provider of the application's (OpenTelemetry's API lets any
 * object be one) whose spans carry upper-case hex ids (an IdGenerator written with
 * `toString('hex').toUpperCase()`; OpenTelemetry's isSpanContextValid takes either case), or
 * whose spanContext() throws (a wrapper with a bug). Then emitted an event and ran the relay.
 * What happened: emit() refused the application's valid event with FERRY_VALIDATION_FAILED
 * "traceparent: not W3C trace context" (the emit span's context, formatted as it came, is the
 * event's inherited traceparent, and emit's own check wants lower-case); with spanContext()
 * throwing, emit() rejected with the tracer's error, and relay.runOnce() rejected after claiming
 * (the rows stay PROCESSING until their lease expires, then the same again).
 * span.ts promises "a tracing failure is a no-op span": tracing never changes the traced work.
 * What should happen: the span's context is propagated in the shape W3C and emit take (lower-case
 * hex), or not at all when the span cannot say it; the event is stored and published.
 */
import { trace, type SpanContext } from '@opentelemetry/api';
import { createRelay, emit } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { spanContextProvider as providerOf } from '../../../test-support/tracing';
import { quietLogger } from './inbox/helpers';

const UPPER: SpanContext = {
  traceId: '4BF92F3577B34DA6A3CE929D0E0E4736',
  spanId: '00F067AA0BA902B7',
  traceFlags: 1,
};

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  trace.disable();
  await t.drop();
});
beforeEach(async () => {
  trace.disable();
  await t.db.execute('DELETE FROM outbox_events');
});

const traceparentOf = async (id: string): Promise<string | null> => {
  const [row] = await t.db.query<{ traceparent: string | null }>(
    'SELECT traceparent FROM outbox_events WHERE id = $1::uuid',
    [id],
  );
  return row?.traceparent ?? null;
};

async function relayOnce(): Promise<InMemoryPublisher> {
  const publisher = new InMemoryPublisher();
  const relay = createRelay({ db: t.db, publisher, logger: quietLogger });
  try {
    await expect(relay.runOnce()).resolves.toMatchObject({ claimed: 1, sent: 1 });
  } finally {
    await relay.close();
  }
  return publisher;
}

it('spans with upper-case hex ids: the event is stored and published with the trace in lower case', async () => {
  trace.setGlobalTracerProvider(providerOf(() => UPPER));
  const { id } = await emit(t.db, { type: 'order.placed', payload: {} });
  const lower = `00-${UPPER.traceId.toLowerCase()}-${UPPER.spanId.toLowerCase()}-01`;
  expect(await traceparentOf(id)).toBe(lower);
  const publisher = await relayOnce();
  expect(publisher.delivered.map((m) => m.traceparent)).toEqual([lower]);
});

it('spans whose spanContext() throws: the event is stored and published (without their context)', async () => {
  trace.setGlobalTracerProvider(
    providerOf(() => {
      throw new Error('tracer wrapper broke');
    }),
  );
  const given = `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`;
  const { id } = await emit(t.db, { type: 'order.placed', payload: {}, traceparent: given });
  expect(await traceparentOf(id)).toBe(given);
  const publisher = await relayOnce();
  expect(publisher.delivered.map((m) => m.traceparent)).toEqual([given]);
});
