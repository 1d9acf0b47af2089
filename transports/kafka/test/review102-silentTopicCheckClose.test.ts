/**
 * Review 102: close() while a topic listing of an admin client is in flight and the cluster goes
 * silent (its TCP links stay open, nothing answers): a publisher's check of a suspect topic
 * (topicPresence.ts) and a consumer's start check (startChecks.ts). close() settles within its
 * bound (closeTimeoutMs) and, like the producer's and the consumer's (reviews 99 and 100), the
 * admin client's sockets are destroyed: none is left to the cluster.
 * Runs on both clients (platformatic/review102-silentTopicCheckClose).
 *
 * Every broker connection of the process is routed through a SilentRoute (./silentRoute). The
 * shared broker is never touched.
 */
import { attachKafkaConsumer, KafkaPublisher } from '../src';
import { ConsumerHarness } from './consumerHarness';
import { outboxMessage, quickRetries, testConnection, uniqueName, waitFor } from './support';
import { expectClosedNotSent, expectStartCheckClosed, SilentRoute } from './silentRoute';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';

failOnUnhandledRejections();
jest.setTimeout(180_000);

/** Far beyond the test: a close() that waits for the client's requests to time out hangs here. */
const REQUEST_TIMEOUT_MS = 600_000;
/** The publish's own bound (the check's too): long enough for a send to a missing topic to fail in the client. */
const CONFIRM_TIMEOUT_MS = 60_000;
const CLOSE_TIMEOUT_MS = 2_000;
/** closeTimeoutMs and room for the test machine. */
const CLOSE_WITHIN_MS = 20_000;

let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  await harness.close();
});

test('close() of a publisher whose topic check is in flight on a silent cluster settles within its bound and leaves no socket', async () => {
  const route = await SilentRoute.start();
  try {
    const publisher = new KafkaPublisher(
      testConnection({ ...quickRetries(), requestTimeoutMs: REQUEST_TIMEOUT_MS }),
      {
        defaultDestination: uniqueName('r102-missing'),
        confirmTimeoutMs: CONFIRM_TIMEOUT_MS,
        closeTimeoutMs: CLOSE_TIMEOUT_MS,
      },
    );
    const never = new AbortController().signal;
    // A send to a topic the cluster does not have: the topic is suspect from now on.
    expect(await publisher.publish([outboxMessage()], never)).toEqual([
      expect.objectContaining({ status: 'retryable' }),
    ]);
    // The next publish checks it first (its admin client connects and lists the topics): missing.
    expect(await publisher.publish([outboxMessage()], never)).toEqual([
      expect.objectContaining({ status: 'retryable' }),
    ]);

    route.silence();
    const message = outboxMessage();
    const publishing = publisher.publish([message], never);
    await waitFor(
      () => route.dropped > 0,
      () => 'the topic check never reached the link',
    );

    // Nothing of the check is left to the silent cluster once close() resolved.
    await expectClosedNotSent(route, publisher, publishing, message, CLOSE_WITHIN_MS);
  } finally {
    await route.close();
  }
});

test('close() of a consumer whose start check is listing the topics when the cluster goes silent settles within its bound and leaves no socket', async () => {
  const topic = await harness.topicPair('r102-start-check');
  const route = await SilentRoute.start();
  try {
    // The cluster goes silent as the start check's admin client has connected: its listing is unanswered.
    const connection = testConnection({ requestTimeoutMs: REQUEST_TIMEOUT_MS });
    await expectStartCheckClosed(
      route,
      connection,
      'connected',
      () =>
        attachKafkaConsumer(harness.acceptor, {
          connection,
          topic,
          groupId: uniqueName('r102-group'),
          consumer: 'review102',
          closeTimeoutMs: CLOSE_TIMEOUT_MS,
        }),
      CLOSE_WITHIN_MS,
    );
  } finally {
    await route.close();
  }
});
