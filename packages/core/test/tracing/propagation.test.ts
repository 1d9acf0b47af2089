import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { createEmitter, createRelay, emit, FERRY_HEADERS, type InboxHandlerContext } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { installTracing, parentSpanId, type TestTracing } from '../../../../test-support/tracing';
import { lostCommitAnswer, makeInbox, message, quietLogger } from '../inbox/helpers';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const UPSTREAM_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE}-${UPSTREAM_SPAN}-01`;

interface Row {
  correlation_id: string | null;
  causation_id: string | null;
  traceparent: string | null;
  tracestate: string | null;
}

describe('tracing and causation through core (OpenTelemetry SDK, in-memory exporter)', () => {
  let t: TestDatabase;
  let tracing: TestTracing;
  beforeAll(async () => {
    t = await createTestDatabase();
    tracing = installTracing();
  });
  afterAll(async () => {
    await tracing.shutdown();
    await t.drop();
  });
  beforeEach(() => tracing.exporter.reset());

  async function row(id: string): Promise<Row> {
    const [found] = await t.db.query<Row>(
      'SELECT correlation_id, causation_id, traceparent, tracestate FROM outbox_events WHERE id = $1::uuid',
      [id],
    );
    return found as Row;
  }

  /** Accepts one message for `orders`, runs the worker once, returns what the handler emitted. */
  async function handle(
    headers: Record<string, string>,
    handler: (context: InboxHandlerContext) => Promise<string[]>,
  ): Promise<{ emitted: string[]; messageId: string }> {
    const emitted: string[] = [];
    const inbox = makeInbox(t.prisma, {
      handlers: {
        orders: async (_payload, context) => {
          emitted.push(...(await handler(context)));
        },
      },
    });
    const input = message({ headers });
    await inbox.accept(input);
    expect(await inbox.runOnce()).toMatchObject({ completed: 1 });
    await inbox.close();
    return { emitted, messageId: input.messageId };
  }

  it('an event emitted with the handler’s tx inherits correlation, causation and the trace', async () => {
    const { emitted, messageId } = await handle(
      {
        [FERRY_HEADERS.traceparent]: TRACEPARENT,
        [FERRY_HEADERS.correlationId]: 'corr-1',
        tracestate: 'v=1',
      },
      async (context) => [(await emit(context.tx, { type: 'shipment.requested', payload: {} })).id],
    );
    const accept = tracing.only('accept orders');
    const processed = tracing.only('process orders');
    const emitSpan = tracing.only('ferry emit');
    expect(accept.kind).toBe(SpanKind.CONSUMER);
    expect(processed.kind).toBe(SpanKind.CONSUMER);
    expect(emitSpan.kind).toBe(SpanKind.INTERNAL);
    for (const span of [accept, processed, emitSpan]) expect(span.spanContext().traceId).toBe(TRACE);
    expect(parentSpanId(accept)).toBe(UPSTREAM_SPAN);
    expect(parentSpanId(processed)).toBe(UPSTREAM_SPAN);
    expect(parentSpanId(emitSpan)).toBe(processed.spanContext().spanId);
    expect(processed.attributes).toMatchObject({
      'messaging.operation.type': 'process',
      'messaging.message.id': messageId,
      'messaging.message.conversation_id': 'corr-1',
    });
    expect(accept.attributes).toMatchObject({
      'messaging.operation.type': 'receive',
      'ferry.outcome': 'accepted',
    });
    expect(await row(emitted[0]!)).toEqual({
      correlation_id: 'corr-1',
      causation_id: messageId,
      traceparent: `00-${TRACE}-${emitSpan.spanContext().spanId}-01`,
      tracestate: 'v=1',
    });
  });

  it('names the messaging system that delivered the message on its accept and process spans', async () => {
    const inbox = makeInbox(t.prisma, { handlers: { orders: async () => undefined } });
    const delivered = message({ system: 'rabbitmq' });
    const unnamed = message();
    await inbox.acceptMany([delivered, unnamed]);
    expect(await inbox.runOnce()).toMatchObject({ completed: 2 });
    await inbox.close();
    const spans = (name: string, messageId: string) =>
      tracing.spans().filter((s) => s.name === name && s.attributes['messaging.message.id'] === messageId);
    for (const name of ['accept orders', 'process orders']) {
      expect(spans(name, delivered.messageId).map((s) => s.attributes['messaging.system'])).toEqual([
        'rabbitmq',
      ]);
      const [other] = spans(name, unnamed.messageId);
      expect(other).toBeDefined();
      expect(other!.attributes).not.toHaveProperty('messaging.system');
    }
  });

  it('works for a custom emitter and emitMany too; explicit values win; the conversation starts at the message id', async () => {
    const emitter = createEmitter();
    const { emitted, messageId } = await handle({}, async (context) => {
      const { ids } = await emitter.emitMany(context.tx, [
        { type: 'a', payload: {} },
        { type: 'b', payload: {}, correlationId: 'own', causationId: null },
      ]);
      return ids;
    });
    const processed = tracing.only('process orders');
    expect(parentSpanId(processed)).toBeUndefined();
    expect(await row(emitted[0]!)).toMatchObject({ correlation_id: messageId, causation_id: messageId });
    expect(await row(emitted[1]!)).toMatchObject({ correlation_id: 'own', causation_id: null });
    expect((await row(emitted[0]!)).traceparent).toContain(processed.spanContext().traceId);
  });

  it('a hostile correlation header is not inherited and the handler still completes', async () => {
    const { emitted, messageId } = await handle(
      { [FERRY_HEADERS.correlationId]: 'c'.repeat(300) },
      async (context) => [(await emit(context.tx, { type: 'x', payload: {} })).id],
    );
    expect(await row(emitted[0]!)).toMatchObject({ correlation_id: null, causation_id: messageId });
  });

  it('outside a handler an emit starts a trace of its own and carries no causation', async () => {
    const { id } = await emit(t.db, { type: 'standalone', payload: {} });
    const emitSpan = tracing.only('ferry emit');
    expect(parentSpanId(emitSpan)).toBeUndefined();
    expect(await row(id)).toEqual({
      correlation_id: null,
      causation_id: null,
      traceparent: `00-${emitSpan.spanContext().traceId}-${emitSpan.spanContext().spanId}-01`,
      tracestate: null,
    });
  });

  it('a failing handler ends its span in error', async () => {
    const inbox = makeInbox(t.prisma, {
      handlers: {
        orders: async () => {
          throw new Error('handler broke');
        },
      },
    });
    await inbox.accept(message({ headers: { [FERRY_HEADERS.traceparent]: TRACEPARENT } }));
    expect(await inbox.runOnce()).toMatchObject({ retried: 1 });
    await inbox.close();
    expect(tracing.only('process orders').status).toEqual({
      code: SpanStatusCode.ERROR,
      message: 'handler broke',
    });
  });

  it('a handler whose COMMIT answer was lost but that committed ends its span completed, not in error', async () => {
    // The transaction committed; only its answer was lost. The worker reconciles it as completed,
    // so the span must not say the message failed (ERROR beside ferry.outcome completed).
    const lossy = lostCommitAnswer(t.prisma);
    const inbox = makeInbox(lossy, { handlers: { 'lost-answer': async () => undefined } });
    await inbox.accept(
      message({ consumer: 'lost-answer', headers: { [FERRY_HEADERS.traceparent]: TRACEPARENT } }),
    );
    expect(await inbox.runOnce()).toMatchObject({ completed: 1, retried: 0 });
    await inbox.close();
    const span = tracing.only('process lost-answer');
    expect(span.attributes['ferry.outcome']).toBe('completed');
    expect(span.attributes['ferry.reconciled']).toBe(true);
    expect(span.status.code).not.toBe(SpanStatusCode.ERROR);
  });

  it("a failing handler's span holds its error redacted, in the status and the exception event", async () => {
    const inbox = makeInbox(t.prisma, {
      handlers: {
        leaky: async () => {
          throw new Error('connect to amqp://app:s3cret@broker failed; password is hunter2');
        },
      },
    });
    await inbox.accept(message({ consumer: 'leaky' }));
    expect(await inbox.runOnce()).toMatchObject({ retried: 1 });
    await inbox.close();
    const span = tracing.only('process leaky');
    const redacted = 'connect to amqp://[redacted]@broker failed; password is [redacted]';
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: redacted });
    expect(span.events.map((e) => e.attributes?.['exception.message'])).toEqual([redacted]);
    expect(JSON.stringify(span.events)).not.toMatch(/s3cret|hunter2/);
  });

  it('the relay publishes each message in a PRODUCER span under its row’s trace and sends that span’s context', async () => {
    const { id } = await emit(t.db, { type: 'order.created', payload: {}, destination: 'orders.exchange' });
    const rejected = (await emit(t.db, { type: 'order.rejected', payload: {} })).id;
    const emitted = await row(id);
    const publisher = new InMemoryPublisher({
      decide: (m) => (m.id === rejected ? { permanent: 'schema rejected' } : 'sent'),
    });
    const relay = createRelay({ db: t.db, publisher, logger: quietLogger });
    await relay.runOnce();
    await relay.close();
    const sent = tracing.only('publish orders.exchange');
    expect(sent.kind).toBe(SpanKind.PRODUCER);
    expect(`00-${sent.spanContext().traceId}-${parentSpanId(sent)}-01`).toBe(emitted.traceparent);
    expect(sent.attributes).toMatchObject({
      'messaging.operation.type': 'send',
      'messaging.destination.name': 'orders.exchange',
      'messaging.message.id': id,
      'ferry.outcome': 'sent',
    });
    const delivered = publisher.delivered.find((m) => m.id === id)!;
    expect(delivered.traceparent).toBe(`00-${sent.spanContext().traceId}-${sent.spanContext().spanId}-01`);
    const failed = tracing
      .spans()
      .find((s) => s.kind === SpanKind.PRODUCER && s.attributes['messaging.message.id'] === rejected)!;
    expect(failed.name).toBe('publish');
    expect(failed.status).toEqual({ code: SpanStatusCode.ERROR, message: 'schema rejected' });
  });
});
