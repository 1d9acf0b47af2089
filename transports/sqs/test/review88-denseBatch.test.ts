/**
 * Review finding (failed first), review 88. A body over the acceptor's maxPayloadBytes and within
 * 6 × it is parsed before it is measured (oversizeBodyFault), and a flat array of one-digit
 * numbers costs V8 tens of milliseconds per 100 KB to parse. The consumer decoded a received
 * batch in one turn of the event loop: meanwhile no timer of the process fired and no socket was
 * read (another consumer's long poll, the visibility extender, the application's own work). The
 * RabbitMQ consumer gives the event loop its turns while it decodes (review 87, denseBodies); the
 * SQS consumer now does the same through the same helper (core eventLoopTurns).
 */
import { expect, it } from '@jest/globals';
import { FERRY_HEADERS } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachSqsConsumer } from '@ferry/sqs';
import pino from 'pino';
import { useSqsConsumerFixture } from './support/consumerFixture';
import { sendRaw, uniqueName, waitFor } from './support/sqs';
import { PgTestAcceptor } from '../../../test-support/pgAcceptor';

const f = useSqsConsumerFixture();

it('a timer set when a batch of bodies slow to parse is received fires before the batch is offered to the inbox; every body is dead-lettered', async () => {
  // 6 × the limit and the message-id attribute within SQS's 256 KiB per message.
  const limit = 43_000;
  const acceptor = await PgTestAcceptor.create(f.database.db, limit);
  const { queueUrl } = await f.queues.declare({ name: uniqueName('r88-dense') });
  const { queueUrl: deadUrl } = await f.queues.declareBare({ name: uniqueName('r88-dense-dead') });
  const count = Math.floor((6 * limit - 8) / 2);
  const dense = `{"a":[${Array.from({ length: count }, () => '1').join(',')}]}`;
  expect(dense.length).toBeLessThanOrEqual(6 * limit);
  const ids = Array.from({ length: 10 }, (_, index) => `dense-${index}`);
  for (const id of ids) await sendRaw(f.connection, queueUrl, dense, { [FERRY_HEADERS.messageId]: id });

  const events: TransportConsumerEvent[] = [];
  // acceptMany calls the acceptor had seen when the timer fired; undefined until it fires.
  let callsWhenFired: number | undefined;
  let timerSet = false;
  const consumer = attachSqsConsumer(acceptor, {
    connection: f.connection,
    consumer: 'r88-dense',
    queueUrl,
    waitTimeSeconds: 1,
    maxBatchSize: 10,
    deadLetter: { mode: 'queue', queueUrl: deadUrl },
    logger: pino({ level: 'silent' }),
    observer: (event) => {
      events.push(event);
      if (event.type !== 'received' || timerSet) return;
      timerSet = true;
      const calls = acceptor.batches.length;
      setTimeout(() => (callsWhenFired = acceptor.batches.length - calls), 0);
    },
  });
  f.consumers.push(consumer);
  await consumer.ready();
  const deadLettered = await waitFor('every body dead-lettered', () => {
    const dead = events.flatMap((event) =>
      event.type === 'dead-lettered' ? [`${event.messageId}: ${event.reason}`] : [],
    );
    return dead.length >= ids.length && callsWhenFired !== undefined ? dead : undefined;
  });
  expect(deadLettered.sort()).toEqual(ids.map((id) => `${id}: payload_too_large`).sort());
  // Fired while the batch was decoded: before its acceptMany.
  expect(callsWhenFired).toBe(0);
}, 60_000);
