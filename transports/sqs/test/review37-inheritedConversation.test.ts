/**
 * Review 37 (failing tests): what a handler's events inherit from a hostile delivery
 * (docs/tracing.md, "What a handler's events inherit") must not keep them from being published.
 *
 * A producer on RabbitMQ or Kafka can set `x-ferry-correlation-id` and `tracestate` to any text.
 * Every transport stores such a header with the receipt as long as it holds no NUL or lone
 * surrogate (putStorableHeader), and inheritScope hands it to the handler's events when it passes
 * `textFault` alone: control characters, ESC, line breaks, U+FFFF are all inherited (a tracestate
 * too, when @opentelemetry/api is not installed: nothing parses it as W3C list members). The
 * handler's emit succeeds, but SqsPublisher refuses those characters in a message attribute
 * (`attribute x-ferry-correlation-id holds U+0001, which SQS does not take`) as a `permanent`
 * outcome: the event the handler emitted is FAILED at its first attempt, for ever, because of a
 * header some upstream producer set. docs/tracing.md promises that "a hostile incoming header can
 * never make the handler's emit fail"; here it makes the emitted event fail instead.
 *
 * Real PostgreSQL and ElasticMQ; the delivery's headers are stored exactly as a transport stores
 * them (putStorableHeader). Fix direction: inherit a correlation id only when it passes the id
 * rule (identifierFault) and holds nothing a ferry transport cannot carry (no U+FFFE / U+FFFF),
 * and a tracestate only as W3C list members (printable ASCII key=value, at most 32), else leave
 * them out, as an over-long one already is.
 */
import { randomUUID } from 'node:crypto';
import { createRelay, emit, FERRY_HEADERS, Inbox, type InboxAcceptInput } from '@ferry/core';
import { putStorableHeader } from '@ferry/core/transport';
import { setOtelLoaderForTests } from '../../../packages/core/src/tracing/otel';
import { SqsPublisher } from '@ferry/sqs';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { useSqsQueuesFixture } from './support/queuesFixture';
import { uniqueName } from './support/sqs';

const quiet = pino({ level: 'silent' });
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

const sqs = useSqsQueuesFixture();
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});
afterEach(() => setOtelLoaderForTests(undefined));

/**
 * Accepts one delivery with `delivered` headers (stored as every transport stores them), runs
 * the handler, which emits one event to `queue` inheriting the conversation, relays it to SQS
 * once, and answers the emitted event's row.
 */
async function handleAndRelay(
  delivered: Record<string, string>,
): Promise<{ status: string; last_error: string | null; correlation_id: string | null }> {
  const name = uniqueName('inherit');
  await sqs.queues.declareBare({ name });
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(delivered))
    putStorableHeader(headers, Buffer.from(key), Buffer.from(value));
  const emitted: string[] = [];
  const inbox = new Inbox(database.prisma, {
    logger: quiet,
    handlers: {
      orders: async (_payload, context) => {
        emitted.push(
          (await emit(context.tx, { type: 'shipment.requested', payload: {}, destination: name })).id,
        );
      },
    },
  });
  const input: InboxAcceptInput = {
    consumer: 'orders',
    messageId: randomUUID(),
    tenantId: 'acme',
    type: 'order.placed',
    payload: { order: 7 },
    headers,
    system: 'kafka',
  };
  const publisher = new SqsPublisher(sqs.connection);
  const relay = createRelay({ db: database.db, publisher, logger: quiet });
  try {
    expect(await inbox.acceptMany([input])).toMatchObject([{ kind: 'accepted' }]);
    expect(await inbox.runOnce()).toMatchObject({ completed: 1 });
    expect(emitted).toHaveLength(1);
    await relay.runOnce();
    const [row] = await database.db.query<{
      status: string;
      last_error: string | null;
      correlation_id: string | null;
    }>('SELECT status, last_error, correlation_id FROM outbox_events WHERE id = $1::uuid', [emitted[0]]);
    return row!;
  } finally {
    await relay.close();
    await publisher.close();
    await inbox.close();
  }
}

describe("a handler's event inheriting a hostile delivery's conversation still reaches SQS", () => {
  it.each([
    ['a control character', 'order-7\u0001'],
    ['an ANSI escape and a line break', '\u001b[31morder-7\nforged: yes'],
    ['U+FFFF', 'order-7\uffff'],
  ])('a correlation header holding %s', async (_what, correlation) => {
    const row = await handleAndRelay({
      [FERRY_HEADERS.traceparent]: TRACEPARENT,
      [FERRY_HEADERS.correlationId]: correlation,
    });
    // Today: FAILED, "attribute x-ferry-correlation-id holds U+0001, which SQS does not take".
    expect(row).toMatchObject({ status: 'SENT', last_error: null });
  });

  it('a tracestate holding a control character, without @opentelemetry/api installed', async () => {
    setOtelLoaderForTests(() => null);
    const row = await handleAndRelay({
      [FERRY_HEADERS.traceparent]: TRACEPARENT,
      [FERRY_HEADERS.tracestate]: 'vendor=a\u0001b',
    });
    // Today: FAILED, "attribute tracestate holds U+0001, which SQS does not take".
    expect(row).toMatchObject({ status: 'SENT', last_error: null });
  });
});
