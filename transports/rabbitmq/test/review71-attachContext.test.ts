/**
 * Review 71, failing test: every delivery's accept span joins the trace the consumer was attached in.
 *
 * What I did: OpenTelemetry's SDK with an AsyncLocalStorage context manager (as core's README and
 * docs/tracing.md tell users to register). The application attaches its RabbitMQ consumer while a
 * span of its own is active (a traced start-up, a NestJS module init inside an instrumented
 * bootstrap, a consumer attached lazily from a traced HTTP request), and ends that span. Later a
 * producer without tracing sends a message (no traceparent header).
 * What happened: the `accept billing` span is a child of the application's long-ended start-up
 * span, in its trace: the consumer's socket was opened in that async context, and every delivery
 * callback runs in it, so acceptance's fallback "the active context" is the start-up span for
 * every message the process ever receives without a traceparent. One trace grows for the life of
 * the process (tracing backends drop or truncate it), and unrelated messages look causally linked
 * to the start-up (or to whichever request happened to attach the consumer).
 * What should happen: a delivery without a traceparent is accept's root, or a child of what a
 * transport instrumentation made active for that delivery (docs/tracing.md: "none: the active
 * context (a transport's own instrumentation)"), never of the context that was active at attach.
 * Fix direction: open the consumer's connection / channel and run its delivery callbacks under
 * ROOT_CONTEXT (context.with(ROOT_CONTEXT, ...) in attach and in the connection's connect), or let
 * acceptance fall back to the root when the active span is not the delivery's own.
 */
import { context, trace } from '@opentelemetry/api';
import { Inbox, pgTransactions } from '@ferry/core';
import { attachRabbitConsumer, RabbitConnection, type RabbitConsumer } from '@ferry/rabbitmq';
import { Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import pino from 'pino';
import { installTracing, parentSpanId, type TestTracing } from '../../../test-support/tracing';
import { AMQP_URL, InboxQueue, uniqueName, waitFor } from './support/broker';

jest.setTimeout(60_000);

const silent = pino({ level: 'silent' });

describe('accept spans of deliveries without a traceparent', () => {
  const setup = new InboxQueue('review71ctx');
  let tracing: TestTracing;
  let pool: Pool | undefined;
  let connection: RabbitConnection | undefined;
  let consumer: RabbitConsumer | undefined;
  beforeAll(() => {
    tracing = installTracing();
  });
  afterAll(async () => {
    await consumer?.close();
    await connection?.close();
    await pool?.end();
    await tracing.shutdown();
  });

  it('are not children of the span that was active when the consumer was attached', async () => {
    pool = listened(new Pool({ connectionString: setup.database.url, max: 2 }));
    const inbox = new Inbox(pgTransactions(pool), { worker: { enabled: false }, logger: silent });

    const startup = trace.getTracer('application').startSpan('application start-up');
    context.with(trace.setSpan(context.active(), startup), () => {
      connection = new RabbitConnection({
        url: AMQP_URL,
        connectionName: uniqueName('review71'),
        logger: silent,
      });
      consumer = attachRabbitConsumer(inbox, {
        connection,
        queue: setup.queue,
        consumer: 'billing',
        logger: silent,
      });
    });
    await consumer!.ready({ timeoutMs: 20_000 });
    startup.end();

    // Later: a message from a producer without tracing.
    setup.broker.channel.sendToQueue(setup.queue, Buffer.from(JSON.stringify({ orderId: 1 })), {
      messageId: 'untraced-1',
      contentType: 'application/json',
    });
    const accept = await waitFor('the accept span of the delivery', () =>
      tracing.spans().find((span) => span.name === 'accept billing'),
    );

    expect({
      sameTraceAsStartup: accept.spanContext().traceId === startup.spanContext().traceId,
      parent: parentSpanId(accept) ?? null,
    }).toEqual({ sameTraceAsStartup: false, parent: null });
  });
});
