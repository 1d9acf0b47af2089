/**
 * Review 129: close() while a consumer that lost its cluster connects again (kafkajs: the restart
 * of its crashed client; @platformatic/kafka: ferry's next session), the cluster still down.
 * close() fails that connect at once, as it fails a first connect: it does not wait for the
 * client's own connect retries up to closeTimeoutMs and then destroy it, and once it resolved
 * nothing of the consumer runs (no connection, no log line, no event). Runs on both clients
 * (platformatic/review129-closeDuringRestart).
 */
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachKafkaConsumer, type KafkaInboxConsumer } from '../src';
import { kafkaClient } from './clients';
import { ConsumerHarness } from './consumerHarness';
import { ShapedLink } from './shapedLink';
import { fastGroup, waitFor, uniqueName } from './support';
import { expectBackToBaseline, expectNothingAfterClose, recordingLogger, settledResources } from './quiet';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';

failOnUnhandledRejections();
jest.setTimeout(60_000);

/** Shorter than kafkajs's connect retries (~9 s by default): on main close() ran into it. */
const CLOSE_TIMEOUT_MS = 3_000;

let harness: ConsumerHarness;
beforeAll(async () => {
  harness = await ConsumerHarness.create();
});
afterAll(async () => {
  await harness.close();
});

test('close() while the consumer connects again after its cluster was lost: the connect fails at once, nothing runs after', async () => {
  const topic = await harness.topicPair('r129-restart');
  const link = await ShapedLink.start({});
  const baseline = await settledResources();
  const log = recordingLogger();
  const events: TransportConsumerEvent[] = [];
  let consumer: KafkaInboxConsumer | undefined;
  try {
    consumer = attachKafkaConsumer(harness.acceptor, {
      connection: link.connection('ferry-r129', {
        client: kafkaClient(),
        requestTimeoutMs: 2_000,
        logger: log.logger,
        kafkaLogLevel: 'debug',
      }),
      topic,
      groupId: uniqueName('r129-group'),
      consumer: 'review129',
      ...fastGroup,
      maxWaitTimeMs: 200,
      reconnectBackoff: { initialMs: 100, maxMs: 100 },
      closeTimeoutMs: CLOSE_TIMEOUT_MS,
      logger: log.logger,
      observer: (event) => events.push(event),
    });
    await consumer.ready({ timeoutMs: 40_000 });
    // The loss the cut causes, not one of a loaded machine's first join before it.
    const cutAt = events.length;
    link.setDown(true);
    await waitFor(
      () => events.slice(cutAt).some((event) => event.type === 'disconnected' && event.retryInMs !== null),
      () => `the session was not lost: ${JSON.stringify(events)}`,
    );
    // The next connect after the loss was reported: the restart's (or the next session's).
    const seen = link.connectionsSeen;
    await waitFor(
      () => link.connectionsSeen > seen,
      () => `no connect after the loss: ${JSON.stringify(events)}`,
    );
    await expectNothingAfterClose(consumer.close(), log, events, {
      closeTimeoutMs: CLOSE_TIMEOUT_MS,
      watchedMs: 3_000,
    });
    // Nothing of the restart is left: no socket, no retry or restart timer.
    await expectBackToBaseline(baseline);
  } finally {
    await consumer?.close();
    await link.close();
  }
});
