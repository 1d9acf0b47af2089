/**
 * Review finding (failed first), review 84. A producer (not ferry) sends to a queue without
 * `x-ferry-message-id`; the consumer's identity is then, as documented, the SQS `MessageId`
 * (stable across redeliveries of one send). The consumer runs in `deadLetter: { mode: 'queue' }`.
 * One message cannot be accepted yet (its shop has no tenant yet: the tenant function throws,
 * `tenant_unresolved`) and is dead-lettered. The DeleteMessageBatch after its confirmed copy
 * fails once (the brief's "ack failing after acceptance"; README, Deadlines: "the undeleted
 * message comes back"): the message comes back and is copied again, as the README allows ("the
 * dead-letter queue may hold it twice").
 *
 * Then the operator fixes the cause (the shop gets its tenant) and drains the dead-letter queue
 * into the inbox with a ferry consumer. What happens: the two copies are two new sends, each with
 * a MessageId of its own and no `x-ferry-message-id`: the inbox stores the one producer message
 * twice (the handler runs twice). The identity ferry knew the message by (the original MessageId)
 * is in neither copy, so nothing can tell the copies apart from two messages.
 * What should happen: one receipt: a copy carries the identity the consumer used for the
 * original (e.g. as `x-ferry-message-id` when the original had none), so the inbox absorbs the
 * second copy as a duplicate, as it absorbs every other redelivery.
 * Cause: src/deadLetter.ts deadLetterEntry copies the original attributes only; the item's
 * `messageId` (decodeMessage's identity) is used for logs and events, never written to the copy.
 */
import { describe, expect, it } from '@jest/globals';
import type { Message } from '@aws-sdk/client-sqs';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachSqsConsumer } from '@ferry/sqs';
import pino from 'pino';
import { heldMessages, sendRaw, uniqueName, waitFor } from './support/sqs';
import { useSqsConsumerFixture } from './support/consumerFixture';

describe('review84: dead-letter copies of a message identified by its SQS MessageId', () => {
  const f = useSqsConsumerFixture();

  it('two copies of one message (its delete failed once) are one receipt once the dead-letter queue is drained', async () => {
    const acceptor = await f.freshAcceptor();
    const { queueUrl } = await f.queues.declareBare({ name: uniqueName('r84-dlid') });
    // The dead-letter queue, with a redrive policy of its own: the operator's drain runs in redrive mode.
    const { queueUrl: deadUrl } = await f.queues.declare({ name: uniqueName('r84-dlid-dead') });
    const tenants = new Map<string, string>();
    const tenant = (message: Message): string => {
      const shop = message.MessageAttributes?.shop?.StringValue ?? '';
      const found = tenants.get(shop);
      if (found === undefined) throw new Error(`shop ${shop} has no tenant yet`);
      return found;
    };
    await sendRaw(f.connection, queueUrl, '{"order":1}', { shop: 'shop-1' });

    // The first DeleteMessageBatch of the source queue fails (a reset connection): nothing was deleted.
    let deleteFailed = false;
    const name = 'r84-fail-first-delete';
    f.connection.client.middlewareStack.add(
      (next, context) => (args) => {
        const input = args.input as { QueueUrl?: string };
        if (
          !deleteFailed &&
          context.commandName === 'DeleteMessageBatchCommand' &&
          input.QueueUrl === queueUrl
        ) {
          deleteFailed = true;
          return Promise.reject(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
        }
        return next(args);
      },
      { step: 'initialize', name },
    );
    const events: TransportConsumerEvent[] = [];
    try {
      const consumer = attachSqsConsumer(acceptor, {
        connection: f.connection,
        consumer: 'orders',
        queueUrl,
        waitTimeSeconds: 1,
        visibilityTimeoutSeconds: 1,
        deleteAttempts: 1,
        tenant,
        deadLetter: { mode: 'queue', queueUrl: deadUrl },
        observer: (event) => events.push(event),
        logger: pino({ level: 'silent' }),
      });
      f.consumers.push(consumer);
      await consumer.ready();
      await waitFor('the message settled after its second dead-lettering', () =>
        events.some((e) => e.type === 'settled') ? true : undefined,
      );
      await consumer.close();
    } finally {
      f.connection.client.middlewareStack.remove(name);
    }
    expect(deleteFailed).toBe(true);
    expect(events.filter((e) => e.type === 'dead-lettered')).toHaveLength(2);
    expect(await heldMessages(f.connection, queueUrl)).toBe(0);

    // The operator fixes the cause and drains the dead-letter queue into the inbox.
    tenants.set('shop-1', 'acme');
    const drained: TransportConsumerEvent[] = [];
    const drain = attachSqsConsumer(acceptor, {
      connection: f.connection,
      consumer: 'orders',
      queueUrl: deadUrl,
      waitTimeSeconds: 1,
      tenant,
      observer: (event) => drained.push(event),
      logger: pino({ level: 'silent' }),
    });
    f.consumers.push(drain);
    await drain.ready();
    await waitFor('both copies settled', () =>
      drained.reduce((n, e) => n + (e.type === 'settled' ? e.count : 0), 0) >= 2 ? true : undefined,
    );
    // One message from the producer: one receipt, however many copies ferry made of it.
    expect(await acceptor.storedIds()).toHaveLength(1);
  });
});
