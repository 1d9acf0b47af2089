/**
 * Review 90 (failed first): a handler's events leave the handled message's trace when
 * OpenTelemetry has a tracer provider but no context manager.
 *
 * What I did: @opentelemetry/sdk-trace-base's BasicTracerProvider registered as the global tracer
 * provider (trace.setGlobalTracerProvider), without a context manager (none is registered unless
 * the application does it: sdk-trace-node's register() and NodeSDK do, sdk-trace-base does not).
 * A delivery with a traceparent was accepted and its handler emitted an event with its tx.
 * What happened: the event's row got the traceparent of a new trace. emit's span is a child of
 * the active context, which without a context manager is always the root, so the span started
 * a trace of its own, and its context, not the handled message's, went on the row (it wins over
 * the message scope's). Without @opentelemetry/api installed the same handler keeps the trace:
 * the README's "one message followed ... stays one trace" broke by installing a tracer.
 * What should happen: inside a handler, the emit span continues the handled message's trace
 * when no span is active (its parent: the receipt's traceparent), as the README promises.
 */
import { trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { emit, FERRY_HEADERS } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { makeInbox, message } from './inbox/helpers';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const TRACEPARENT = `00-${TRACE}-00f067aa0ba902b7-01`;

let t: TestDatabase;
let provider: BasicTracerProvider;
const exporter = new InMemorySpanExporter();
beforeAll(async () => {
  t = await createTestDatabase();
  provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  await t.drop();
});

it("a handler's event stays in the handled message's trace without a context manager", async () => {
  let emitted: string | undefined;
  const inbox = makeInbox(t.prisma, {
    handlers: {
      orders: async (_payload, context) => {
        ({ id: emitted } = await emit(context.tx, { type: 'shipment.requested', payload: {} }));
      },
    },
  });
  await inbox.accept(message({ headers: { [FERRY_HEADERS.traceparent]: TRACEPARENT } }));
  expect(await inbox.runOnce()).toMatchObject({ completed: 1 });
  const [row] = await t.db.query<{ traceparent: string | null }>(
    'SELECT traceparent FROM outbox_events WHERE id = $1::uuid',
    [emitted],
  );
  expect(row?.traceparent?.split('-')[1]).toBe(TRACE);
  const emitSpan = exporter.getFinishedSpans().find((span) => span.name === 'ferry emit');
  expect(emitSpan?.spanContext().traceId).toBe(TRACE);
});
