/**
 * Review finding (failed first): trace context and attributes a broker delivery hands ferry's
 * spans. A newer traceparent version with extra fields started a new trace; a 15 KB correlation
 * header was copied whole into the accept and process spans; the process span did not say what
 * became of the receipt (ferry.outcome), as the publish and accept spans do.
 */
import { emit, FERRY_HEADERS, InboxPermanentError } from '@ferry/core';
import { makeInbox, message } from '../inbox/helpers';
import { useTracedDatabase } from './helpers';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('hostile trace context and attributes from a delivery', () => {
  const env = useTracedDatabase();

  // W3C Trace Context, 4.3 "Versioning of traceparent": a parser of version 00 that receives a
  // higher version (not ff) parses trace-id, parent-id and flags from the first 55 characters and
  // ignores what follows a '-' after them; the trace continues across a newer upstream.
  it.each([
    ['a future version with extra fields', `cc-${TRACE}-${SPAN}-01-what-the-future-will-be-like`],
    ['a future version without extra fields', `01-${TRACE}-${SPAN}-01`],
  ])('continues the trace of %s', async (_what, traceparent) => {
    const inbox = makeInbox(env.db().prisma, { handlers: { orders: async () => undefined } });
    await inbox.accept(message({ headers: { [FERRY_HEADERS.traceparent]: traceparent } }));
    const span = env.tracing().only('accept orders');
    expect(span.spanContext().traceId).toBe(TRACE);
    expect(span.parentSpanContext?.spanId).toBe(SPAN);
  });

  it('a handler emitting under a future-version traceparent emits in the same trace', async () => {
    const inbox = makeInbox(env.db().prisma, {
      handlers: {
        orders: async (_payload, context) => {
          await emit(context.tx, { type: 'next', payload: {} });
        },
      },
    });
    const traceparent = `cc-${TRACE}-${SPAN}-01-extra`;
    await inbox.accept(message({ headers: { [FERRY_HEADERS.traceparent]: traceparent } }));
    expect(await inbox.runOnce()).toMatchObject({ completed: 1 });
    expect(env.tracing().only('process orders').spanContext().traceId).toBe(TRACE);
    expect(env.tracing().only('ferry emit').spanContext().traceId).toBe(TRACE);
  });

  const longest = (attributes: Record<string, unknown>): number =>
    Math.max(...Object.values(attributes).map((value) => (typeof value === 'string' ? value.length : 0)));

  it("a delivery's correlation header of 15,000 characters is not copied whole into a span attribute", async () => {
    const inbox = makeInbox(env.db().prisma, { handlers: { orders: async () => undefined } });
    const huge = 'c'.repeat(15_000);
    await inbox.accept(message({ headers: { [FERRY_HEADERS.correlationId]: huge } }));
    // emit bounds a correlation id to maxIdLength (255 by default, at most 512); a header that
    // no ferry producer could have written is not a trace attribute of 15 KB per delivery.
    expect(longest(env.tracing().only('accept orders').attributes)).toBeLessThanOrEqual(512);
    // Stored with the receipt (16 KiB of headers are accepted): the process span alike.
    expect(await inbox.runOnce()).toMatchObject({ completed: 1 });
    expect(longest(env.tracing().only('process orders').attributes)).toBeLessThanOrEqual(512);
  });

  it('over-long fields of a refused delivery are no span attributes either, nor its name', async () => {
    const inbox = makeInbox(env.db().prisma, { handlers: { orders: async () => undefined } });
    const huge = 'x'.repeat(10_000);
    const [result] = await inbox.acceptMany([
      message({ consumer: huge, messageId: huge, type: huge, system: huge }),
    ]);
    expect(result).toMatchObject({ kind: 'invalid' });
    const span = env.tracing().only('accept');
    expect(longest(span.attributes)).toBeLessThanOrEqual(512);
    expect(span.attributes['ferry.outcome']).toBe('invalid');
  });

  // The publish span says what became of each message (ferry.outcome sent / retryable / permanent /
  // lost) and the accept span too (accepted / duplicate / invalid …); the process span ends in
  // ERROR alike whether the receipt will be tried again or is DEAD for good.
  it('the process span of a failed attempt says whether the receipt is retried or DEAD', async () => {
    const inbox = makeInbox(env.db().prisma, {
      handlers: {
        flaky: async () => {
          throw new Error('try again later');
        },
        doomed: async () => {
          throw new InboxPermanentError('never');
        },
      },
    });
    await inbox.accept(message({ consumer: 'flaky' }));
    await inbox.accept(message({ consumer: 'doomed' }));
    expect(await inbox.runOnce()).toMatchObject({ retried: 1, dead: 1 });
    expect([
      env.tracing().only('process flaky').attributes['ferry.outcome'],
      env.tracing().only('process doomed').attributes['ferry.outcome'],
    ]).toEqual(['retry', 'dead']);
  });

  it('the process span of a handled receipt says completed', async () => {
    const inbox = makeInbox(env.db().prisma, { handlers: { orders: async () => undefined } });
    await inbox.accept(message());
    expect(await inbox.runOnce()).toMatchObject({ completed: 1 });
    expect(env.tracing().only('process orders').attributes['ferry.outcome']).toBe('completed');
  });
});
