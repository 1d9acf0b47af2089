/**
 * Review 37 (failing tests): a span processor whose onEnd throws changes what ferry does.
 *
 * OpenTelemetry's SDK calls every registered SpanProcessor's `onEnd` (and `onEnding`) inside
 * `span.end()` with no guard (MultiSpanProcessor), so an application's own processor that throws
 * (one that enriches, filters or forwards spans, with a bug or on one span it does not expect)
 * makes `span.end()` throw. ferry guards the start of its spans ("Never throws: a tracing failure
 * is a no-op span", src/tracing/span.ts; a processor throwing in onStart changes nothing) and the
 * end of the process span (endSpan), but not the end of the emit span (inSpan), of the accept spans
 * (AcceptSpans.end) nor of the publish spans (PublishSpans.end). docs/tracing.md: "Ending a span
 * never throws". What happens instead, each after the work was done:
 * - emit() rejects with the processor's error although its own transaction committed the event
 *   (a caller that retries emits it twice); inside a handler, the handler's emit throws, so every
 *   handler that emits fails its attempt and its receipt goes round retries to DEAD;
 * - inbox.acceptMany() rejects after the receipt was committed, and the `accepted` observer event
 *   is never sent: every transport takes it as a failed acceptance and redelivers the message,
 *   which is a duplicate whose acceptance throws again, for ever (never settled);
 * - relay.runOnce() rejects after the broker confirmed the message: the row stays PROCESSING, is
 *   recovered when its lease expires and published again, for ever.
 * Fix direction: end every span through one guarded call (try/catch around span.end() and the
 * status calls in FerrySpan.end), as startSpan already guards the start.
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createRelay, emit, type InboxEvent } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { makeInbox, message, quietLogger } from './inbox/helpers';

/** An application's span processor with a bug: it throws for every span that ends. */
class ThrowingOnEnd implements SpanProcessor {
  ended = 0;
  onStart(): void {}
  onEnd(): void {
    this.ended += 1;
    throw new Error('span processor broke');
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

describe('a span processor that throws in onEnd', () => {
  let t: TestDatabase;
  const processor = new ThrowingOnEnd();
  beforeAll(async () => {
    t = await createTestDatabase();
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [processor] }));
  });
  afterAll(async () => {
    trace.disable();
    context.disable();
    await t.drop();
  });
  beforeEach(async () => {
    await t.db.execute('DELETE FROM outbox_events');
    await t.db.execute('DELETE FROM ferry_inbox_receipts');
  });

  const count = async (table: string): Promise<number> => {
    const [row] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
    return Number(row?.n);
  };

  it('emit() in its own transaction answers the ids of the events it committed', async () => {
    const before = processor.ended;
    // Today: rejects with "span processor broke", while the event is committed.
    await expect(emit(t.db, { type: 'order.placed', payload: { n: 1 } })).resolves.toEqual({
      id: expect.any(String),
    });
    expect(processor.ended).toBeGreaterThan(before);
    expect(await count('outbox_events')).toBe(1);
  });

  it("a handler that emits with its context.tx completes (tracing's failure is not the handler's)", async () => {
    const inbox = makeInbox(t.prisma, {
      handlers: {
        orders: async (_payload, ctx) => {
          await emit(ctx.tx, { type: 'shipment.requested', payload: {} });
        },
      },
    });
    await inbox.acceptMany([message()]).catch(() => undefined);
    expect(await count('ferry_inbox_receipts')).toBe(1);
    // Today: { retried: 1 }: the emit span's end threw inside the handler; every attempt does.
    expect(await inbox.runOnce()).toMatchObject({ completed: 1, retried: 0 });
    expect(await count('outbox_events')).toBe(1);
  });

  it('inbox.acceptMany() answers accepted, then duplicate, and reports acceptance to the observer', async () => {
    const events: InboxEvent[] = [];
    const inbox = makeInbox(t.prisma, {
      handlers: { orders: async () => undefined },
      observer: (event) => void events.push(event),
    });
    const delivery = message();
    // Today: both reject with "span processor broke", though the first committed the receipt:
    // a transport redelivers the message for ever and never settles it.
    await expect(inbox.acceptMany([delivery])).resolves.toMatchObject([{ kind: 'accepted' }]);
    await expect(inbox.acceptMany([delivery])).resolves.toMatchObject([{ kind: 'duplicate' }]);
    expect(events.map((event) => event.type)).toEqual(['accepted', 'duplicate']);
  });

  it('relay.runOnce() records a message the broker confirmed as SENT', async () => {
    await emit(t.db, { type: 'order.placed', payload: { n: 2 } }).catch(() => undefined);
    expect(await count('outbox_events')).toBe(1);
    const publisher = new InMemoryPublisher();
    const relay = createRelay({ db: t.db, publisher, logger: quietLogger });
    try {
      // Today: rejects with "span processor broke" after publishing; the row stays PROCESSING
      // and is published again once its lease expires.
      await expect(relay.runOnce()).resolves.toMatchObject({ claimed: 1, sent: 1 });
      expect(publisher.delivered).toHaveLength(1);
      const [row] = await t.db.query<{ status: string }>('SELECT status FROM outbox_events');
      expect(row?.status).toBe('SENT');
    } finally {
      await relay.close();
    }
  });
});
