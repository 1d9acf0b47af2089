/**
 * The functions an application hands the Kafka consumer (identity, tenant, the dead-letter topic)
 * may throw anything or answer the wrong type: each costs the one record concerned a dead letter
 * with its reason, or is reported as the configuration fault it is; never a crashed consumer or
 * a record committed without being stored or dead-lettered.
 */
import { FERRY_HEADERS, FerryConfigError } from '@ferry/core';
import { REJECT_REASONS, resolveConsumerOptions, type ConsumerOptions } from '../src';
import { ConsumerHarness } from './consumerHarness';
import { readBack, waitFor } from './support';
import { HOSTILE_ANSWERS, hostileProxy } from '../../../test-support/hostileAnswers';

let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  await harness.close();
});

const BEHAVIOUR = HOSTILE_ANSWERS;

describe('attachKafkaConsumer with hostile application functions', () => {
  test('dead-letters a record whose identity or tenant function throws anything or answers the wrong type, and accepts its neighbours', async () => {
    const topic = await harness.topicPair('callbacks');
    const kinds = Object.keys(BEHAVIOUR);
    await harness.raw.send({
      topic,
      messages: [
        { key: 'good-1', value: '{"n":1}' },
        ...kinds.map((kind) => ({ key: kind, value: '{"n":2}' })),
        { key: 'tenant-proxy', value: '{"n":3}' },
        { key: 'good-2', value: '{"n":4}' },
      ],
    });
    const { groupId } = await harness.start(topic, 'callbacks', {
      identity: (record) => {
        const behaviour = BEHAVIOUR[record.key ?? ''];
        return behaviour ? (behaviour() as string) : `id-${record.key}`;
      },
      tenant: (record) => {
        if (record.key === 'tenant-proxy') throw hostileProxy();
        return 'acme';
      },
    });

    await harness.waitFullyCommitted(groupId, topic);
    expect((await harness.acceptor.rows('callbacks')).map((row) => row.messageId).sort()).toEqual([
      'id-good-1',
      'id-good-2',
    ]);
    const dead = await readBack(harness.connection, `${topic}.dlq`, kinds.length + 1);
    expect(
      Object.fromEntries(dead.map((record) => [record.key, record.headers[FERRY_HEADERS.rejectReason]])),
    ).toEqual({
      ...Object.fromEntries(kinds.map((kind) => [kind, REJECT_REASONS.missingIdentity])),
      'tenant-proxy': REJECT_REASONS.tenantUnresolved,
    });
  });

  test.each([
    ['a number', () => 42],
    ['a Promise', () => Promise.resolve('x.dlq')],
    [
      'a thrown Proxy',
      () => {
        throw hostileProxy();
      },
    ],
  ])(
    'holds the record whose dead-letter topic function answers %s, naming deadLetter.topic',
    async (_name, topicOf) => {
      const topic = await harness.topicPair('dlq-fn');
      await harness.raw.send({ topic, messages: [{ key: 'no-identity', value: '{"n":1}' }] });
      const { groupId, events } = await harness.start(topic, 'dlq-fn', {
        deadLetter: { topic: topicOf as unknown as () => string },
      });

      await waitFor(
        () => events.some((event) => event.type === 'acceptance-failed'),
        () => `no acceptance-failed event: ${JSON.stringify(events)}`,
      );
      const failed = events.find((event) => event.type === 'acceptance-failed');
      expect(failed).toMatchObject({ error: expect.stringContaining('deadLetter.topic') });
      // Neither committed nor dead-lettered elsewhere: the record is held, not lost.
      expect(await harness.fullyCommitted(groupId, topic)).toBe(false);
    },
  );

  test.each([
    ['identity', 'offset'],
    ['random', 0.5],
  ])('refuses a %s that is not a function when the consumer attaches', (option, value) => {
    const options = {
      connection: harness.connection,
      topic: 't',
      groupId: 'g',
      consumer: 'c',
      [option]: value,
    };
    const attempt = () => resolveConsumerOptions(options as unknown as ConsumerOptions);
    expect(attempt).toThrow(FerryConfigError);
    expect(attempt).toThrow(expect.objectContaining({ option }));
  });

  test('a dead-letter topic function that is async and rejects is refused, leaving no unhandled rejection', async () => {
    const options = {
      connection: harness.connection,
      topic: 't',
      groupId: 'g',
      consumer: 'c',
      deadLetter: {
        topic: (async () => {
          throw new Error('topic lookup failed');
        }) as unknown as () => string,
      },
    };
    const { deadLetterTopic } = resolveConsumerOptions(options as unknown as ConsumerOptions);
    expect(() => deadLetterTopic('orders')).toThrow(expect.objectContaining({ option: 'deadLetter.topic' }));
    // Jest fails the test on an unhandled rejection, reported once the microtasks have drained.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  });
});
