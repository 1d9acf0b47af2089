/**
 * Review 150: nothing of a Kafka consumer runs once close() resolved, also when close() gave up
 * at closeTimeoutMs on the fetch long-poll in flight (maxWaitTimeMs longer than closeTimeoutMs
 * on an idle topic): destroying the sockets fails the fetch, and kafkajs schedules its retry of
 * the fetch manager then, up to clientRetryCeilingMs later, which its disconnect waits for.
 *
 * On main: that kafkajs scheduleRetry timer fired after close() resolved (close() waited for the
 * client only until closeTimeoutMs, part of which the destroy itself had taken).
 */
import type { InboxAcceptor } from '@ferry/core';
import { attachKafkaConsumer, deleteTopics, ensureTopics } from '../src';
import { NOTHING_AFTER_CLOSE, watchAfterClose } from '../../../test-support/afterClose';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { kafkaClient } from './clients';
import { fastGroup, testConnection, uniqueName, waitFor } from './support';

failOnUnhandledRejections();
jest.setTimeout(120_000);

const admin = testConnection();
const topics: string[] = [];
afterAll(async () => {
  await deleteTopics(admin, topics);
});

const acceptor: InboxAcceptor = {
  maxPayloadBytes: 1024,
  acceptMany: async (inputs) => inputs.map(() => ({ kind: 'accepted' as const, id: 'x' })),
};

it.each([1, 2, 3])(
  'a consumer closed past closeTimeoutMs during its fetch long-poll leaves nothing running (%i)',
  async () => {
    const topic = uniqueName('long-poll');
    topics.push(topic, `${topic}.dlq`);
    await ensureTopics(admin, [{ topic, partitions: 1 }, { topic: `${topic}.dlq` }]);
    const watch = watchAfterClose();
    try {
      const consumer = watch.own(() =>
        attachKafkaConsumer(acceptor, {
          connection: testConnection({ client: kafkaClient(), logger: watch.logger, kafkaLogLevel: 'debug' }),
          topic,
          groupId: uniqueName('long-poll-group'),
          consumer: 'longPoll',
          ...fastGroup,
          maxWaitTimeMs: 5_000,
          closeTimeoutMs: 400,
          logger: watch.logger,
          observer: watch.observer(),
        }),
      );
      await watch.own(() => consumer.ready({ timeoutMs: 40_000 }));
      // A fetch long-poll of 5 s is in flight on the idle topic: close() gives up on it.
      await waitFor(
        () => watch.lines.some((line) => /Request Fetch/.test(line)),
        () => `no fetch: ${watch.lines.join(' | ')}`,
      );
      const report = await watch.close(() => consumer.close(), { deadlineMs: 5_000, windowMs: 8_000 });
      expect(report).toEqual(NOTHING_AFTER_CLOSE);
    } finally {
      watch.stop();
    }
  },
);
