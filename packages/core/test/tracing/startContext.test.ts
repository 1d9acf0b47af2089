/**
 * Review 71's class: what ferry starts inside an application span (a traced start-up, a request
 * that attaches a consumer or starts a relay lazily) must not make that span the parent of every
 * later span. An `accept` span of a delivery without a traceparent is a root; the relay's and the
 * inbox worker's loops run outside the context they were started in, so what they call (the
 * publisher, the database, the observer: where an application's instrumentation makes spans and
 * its logger reads the active trace id) never joins the start-up trace.
 */
import { context, trace } from '@opentelemetry/api';
import { createRelay, emit, pgTransactions, type InboxAcceptInput } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { Pool } from 'pg';
import { activeTraceId, inApplicationSpan, parentSpanId } from '../../../../test-support/tracing';
import { makeInbox, message, quietLogger, waitFor } from '../inbox/helpers';
import { useTracedDatabase } from './helpers';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const UPSTREAM_SPAN = '00f067aa0ba902b7';

/** A pool that records the trace active at every connect (what pg's instrumentation parents its spans on). */
class TracedPool extends Pool {
  readonly traces: (string | null)[] = [];
  override connect(...args: never[]): never {
    this.traces.push(activeTraceId());
    return (super.connect as (...a: never[]) => never)(...args);
  }
}

describe('spans and calls of what ferry started inside an application span', () => {
  const traced = useTracedDatabase();

  it('an accept span of a delivery without a traceparent is a root, also under an active span', async () => {
    const inbox = makeInbox(traced.db().prisma);
    const request = trace.getTracer('application').startSpan('attach consumer');
    const untraced = message();
    const continued = message({ headers: { traceparent: `00-${TRACE}-${UPSTREAM_SPAN}-01` } });
    await context.with(trace.setSpan(context.active(), request), () =>
      inbox.acceptMany([untraced, continued] as InboxAcceptInput[]),
    );
    request.end();
    const accepts = traced
      .tracing()
      .spans()
      .filter((span) => span.name === 'accept orders');
    const byId = (id: string) => accepts.find((span) => span.attributes['messaging.message.id'] === id)!;
    expect({
      untracedParent: parentSpanId(byId(untraced.messageId)) ?? null,
      untracedInRequestTrace:
        byId(untraced.messageId).spanContext().traceId === request.spanContext().traceId,
      continuedTrace: byId(continued.messageId).spanContext().traceId,
      continuedParent: parentSpanId(byId(continued.messageId)),
    }).toEqual({
      untracedParent: null,
      untracedInRequestTrace: false,
      continuedTrace: TRACE,
      continuedParent: UPSTREAM_SPAN,
    });
  });

  it('a relay started inside an application span publishes and reports outside it', async () => {
    const seen: { where: string; trace: string | null }[] = [];
    const publisher = new InMemoryPublisher({
      decide: () => {
        seen.push({ where: 'publish', trace: activeTraceId() });
        return 'sent';
      },
    });
    const pool = new TracedPool({ connectionString: traced.db().url, max: 2 });
    let relay: ReturnType<typeof createRelay> | undefined;
    try {
      const { id } = await emit(traced.db().db, { type: 'order.created', payload: {} });
      const startup = inApplicationSpan('application start-up', () => {
        relay = createRelay({
          db: pgTransactions(pool).db,
          publisher,
          logger: quietLogger,
          options: { pollInterval: 20 },
          observer: (event) => void seen.push({ where: `observer ${event.type}`, trace: activeTraceId() }),
        });
        relay.start();
      });
      await waitFor('the event published', async () => publisher.delivered.some((m) => m.id === id));
      await relay!.close();
      expect(seen.some((entry) => entry.where === 'publish')).toBe(true);
      expect(pool.traces.length).toBeGreaterThan(0);
      expect({
        inStartupTrace: seen.filter((entry) => entry.trace === startup.spanContext().traceId),
        statementsInStartupTrace: pool.traces.filter((id) => id === startup.spanContext().traceId).length,
      }).toEqual({ inStartupTrace: [], statementsInStartupTrace: 0 });
    } finally {
      await relay?.close();
      await pool.end();
    }
  });

  it('an inbox worker started inside an application span runs its statements and reports outside it', async () => {
    const seen: { where: string; trace: string | null }[] = [];
    const pool = new TracedPool({ connectionString: traced.db().url, max: 4 });
    try {
      const handled: string[] = [];
      const inbox = makeInbox(pgTransactions(pool), {
        handlers: {
          orders: async (_payload, handler) => {
            handled.push(handler.messageId);
          },
        },
        observer: (event) => void seen.push({ where: `observer ${event.type}`, trace: activeTraceId() }),
      });
      const input = message();
      await inbox.accept(input);
      pool.traces.length = 0;
      const startup = inApplicationSpan('application start-up', () => inbox.start());
      await waitFor('the receipt handled', async () => handled.includes(input.messageId));
      await waitFor('its completion reported', async () =>
        seen.some((entry) => entry.where === 'observer completed'),
      );
      await inbox.close();
      expect(pool.traces.length).toBeGreaterThan(0);
      expect({
        inStartupTrace: seen.filter((entry) => entry.trace === startup.spanContext().traceId),
        statementsInStartupTrace: pool.traces.filter((id) => id === startup.spanContext().traceId).length,
      }).toEqual({ inStartupTrace: [], statementsInStartupTrace: 0 });
    } finally {
      await pool.end();
    }
  });
});
