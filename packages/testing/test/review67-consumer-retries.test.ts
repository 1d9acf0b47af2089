/**
 * Review 67: the in-memory consumer's transport retries (maxTransportRetries, review 64), which
 * count through core's acceptHolding as RabbitMQ's do.
 */
import { FERRY_HEADERS, FerryError, type InboxAcceptor } from '@ferry/core';
import { InMemoryBroker, attachInMemoryConsumer, waitUntil } from '@ferry/testing';

describe('review 67: the in-memory consumer spends a transport retry only for a delivery whose acceptance failed', () => {
  test("a delivery never offered since the batch shrank is not dead-lettered with its neighbour's error", async () => {
    const broker = new InMemoryBroker();
    broker.declareQueue('q');
    for (const id of ['bad', 'good']) {
      broker.send('q', { body: Buffer.from('{}'), headers: { [FERRY_HEADERS.messageId]: id } });
    }
    const offered: string[][] = [];
    const acceptor: InboxAcceptor = {
      maxPayloadBytes: 1_000_000,
      acceptMany: async (inputs) => {
        offered.push(inputs.map((input) => input.messageId));
        // The first offer times out (batch-wide, the size may cause it): the window halves.
        if (offered.length === 1)
          throw new FerryError('FERRY_TIMEOUT', 'statement timeout', { retriable: true });
        // 'bad' fails alone with a retriable database error; 'good' is accepted whenever offered.
        if (inputs.some((input) => input.messageId === 'bad')) {
          throw new FerryError('FERRY_DATABASE_ERROR', 'bad fails');
        }
        return inputs.map((input) => ({ kind: 'accepted' as const, id: `row-${input.messageId}` }));
      },
    };
    const consumer = attachInMemoryConsumer(acceptor, {
      broker,
      queue: 'q',
      consumer: 'c',
      maxTransportRetries: 0,
      retryBackoff: { initialMs: 1, maxMs: 2 },
    });
    try {
      await waitUntil('both deliveries settled', () => broker.held('q') === 0, { timeoutMs: 10_000 });
    } finally {
      await consumer.close();
    }
    // Now: offered [['bad','good'], ['bad']], then both dead-lettered "after 0 transport retries:
    // FERRY_DATABASE_ERROR: bad fails": 'good' lost its (only) retry to 'bad''s failure without
    // ever being offered after the timeout (acceptHolding returns `failed` with every pending
    // input, not only those offered). With the default of 5 the same spends 'good''s retries.
    const dead = broker.deadLetters('q').map((letter) => letter.delivery.headers[FERRY_HEADERS.messageId]);
    expect(dead).toEqual(['bad']);
    expect(offered.some((batch) => batch.includes('good') && !batch.includes('bad'))).toBe(true);
  });
});
