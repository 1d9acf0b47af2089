/**
 * `brokers` lists seed brokers, any of which may be down: a consumer and a publisher started
 * while the first one is down reach the brokers through the next one (each start tries one
 * seed, the next start the next seed), and one that is down after the first costs no start.
 */
import type { TransportConsumerEvent } from '@ferry/core/transport';
import type { InboxAcceptor } from '@ferry/core';
import { attachKafkaConsumer, deleteTopics, ensureTopics, KafkaPublisher } from '../src';
import { closedPort } from '../../../test-support/closedPort';
import { brokers, outboxMessage, testConnection, uniqueName, waitFor } from './support';

const acceptor: InboxAcceptor = {
  maxPayloadBytes: 1024,
  acceptMany: async (inputs) => inputs.map(() => ({ kind: 'accepted' as const, id: 'x' })),
};

const topic = uniqueName('seed-brokers');

beforeAll(() => ensureTopics(testConnection(), [{ topic }, { topic: `${topic}.dlq` }]));
afterAll(() => deleteTopics(testConnection(), [topic, `${topic}.dlq`]));

/** A connection whose first or second seed broker refuses connections. */
async function seedDown(which: 'first' | 'second') {
  const down = `127.0.0.1:${await closedPort()}`;
  return testConnection({ brokers: which === 'first' ? [down, ...brokers()] : [...brokers(), down] });
}

function attach(connection: ReturnType<typeof testConnection>, events: TransportConsumerEvent[]) {
  return attachKafkaConsumer(acceptor, {
    connection,
    topic,
    groupId: uniqueName('seed-group'),
    consumer: 'orders',
    reconnectBackoff: { initialMs: 20, maxMs: 40, jitter: 'none' },
    observer: (event) => events.push(event),
  });
}

describe('the first seed broker is down', () => {
  test('a consumer joins its group through the next seed broker', async () => {
    const events: TransportConsumerEvent[] = [];
    const consumer = attach(await seedDown('first'), events);
    try {
      await waitFor(
        () => events.some((event) => event.type === 'connected'),
        () => `never joined: ${events.length} events, none connected`,
        20_000,
      );
    } finally {
      await consumer.close();
    }
  });

  test('a publisher sends through the next seed broker', async () => {
    const publisher = new KafkaPublisher(await seedDown('first'), { defaultDestination: topic });
    const outcomes: string[] = [];
    try {
      await waitFor(
        async () => {
          const [outcome] = await publisher.publish([outboxMessage()], new AbortController().signal);
          outcomes.push(outcome?.status ?? 'none');
          return outcome?.status === 'sent';
        },
        () => `never sent: ${outcomes.join(', ')}`,
        20_000,
      );
    } finally {
      await publisher.close();
    }
  });
});

describe('the second seed broker is down', () => {
  test('a consumer joins its group at its first start', async () => {
    const events: TransportConsumerEvent[] = [];
    const consumer = attach(await seedDown('second'), events);
    try {
      await consumer.ready({ timeoutMs: 20_000 });
      expect(events.filter((event) => event.type === 'disconnected')).toEqual([]);
    } finally {
      await consumer.close();
    }
  });

  test('a publisher sends at its first publish', async () => {
    const publisher = new KafkaPublisher(await seedDown('second'), { defaultDestination: topic });
    try {
      const [outcome] = await publisher.publish([outboxMessage()], new AbortController().signal);
      expect(outcome?.status).toBe('sent');
    } finally {
      await publisher.close();
    }
  });
});
