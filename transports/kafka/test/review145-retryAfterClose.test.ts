/**
 * Review 145 (lead of earlier reviews: a kafkajs retry timer that may fire after close): close()
 * of a publisher whose send the client is retrying because the broker went down (every connection
 * cut, each new one refused). The client's retry timer of the send must not outlive close(): no
 * retry runs afterwards (no connect, no log line of it), and no timer of the client holds the
 * process. Failed on main on kafkajs: the retry timer fired about a second after close()
 * resolved and the send's retry connected again (refused by the closed client's gate), logging
 * "Connecting", "disconnecting...", "disconnected", and two retry timers were pending when
 * close() resolved; on @platformatic/kafka it held (one run of two counted a connect after
 * close(), none since). kafkajs's retry timings are its production ones here (jest's
 * NODE_ENV=test shortens them to 50 ms), so a retry comes up to seconds after the last.
 *
 * A retry delay set longer than closeTimeoutMs is bounded to a quarter of it (KafkajsGate's
 * retryWithin): close() waits out kafkajs's timer, which nothing can cancel, and no retry fires
 * after it (afterClose.test.ts watches that no timer of the publisher fires).
 */
import { deleteTopics, ensureTopics, KafkaPublisher } from '../src';
import { outboxMessage, testConnection, uniqueName, waitFor } from './support';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { outcomeWithin } from '../../../test-support/deadlines';
import { activityWithin, SilentRoute } from './silentRoute';
import { expectBackToBaseline, recordingLogger, resourcesAbove, settledResources } from './quiet';
import { kafkaClient } from './clients';

failOnUnhandledRejections();
jest.setTimeout(120_000);

/** kafkajs's production retry timings (its defaults outside NODE_ENV=test). */
const PRODUCTION_RETRY = { initialRetryTime: 300, maxRetryTime: 30_000, factor: 0.2, multiplier: 2 };
/** Retries 2 s apart or more: a closeTimeoutMs of 300 ms is over before the next one. */
const SLOW_RETRY = { ...PRODUCTION_RETRY, initialRetryTime: 2_000, factor: 0 };
/** Longer than the client's retry delays at that point (a few seconds). */
const WATCHED_AFTER_CLOSE_MS = 6_000;

const admin = testConnection();
const topics: string[] = [];

afterAll(async () => {
  await deleteTopics(admin, topics);
});

/**
 * Publishes once, cuts the broker off, lets a publish's send go into the client's retries and
 * closes (twice); what is left after close() is then watched.
 */
async function closeWhileRetrying(
  retry: typeof PRODUCTION_RETRY,
  closeTimeoutMs?: number,
): Promise<{ timersAtClose: string[]; log: ReturnType<typeof recordingLogger> }> {
  const topic = uniqueName('r145-retry');
  topics.push(topic);
  await ensureTopics(admin, [{ topic, partitions: 1 }]);
  const route = await SilentRoute.start();
  const log = recordingLogger();
  const baseline = await settledResources();
  let timersAtClose: string[];
  try {
    const publisher = new KafkaPublisher(
      testConnection({
        kafkaLogLevel: 'debug',
        logger: log.logger,
        ...(kafkaClient() === 'kafkajs' ? { kafkaConfig: { retry } } : {}),
      }),
      { defaultDestination: topic, ...(closeTimeoutMs === undefined ? {} : { closeTimeoutMs }) },
    );
    const first = outboxMessage();
    expect(await publisher.publish([first], new AbortController().signal)).toEqual([
      expect.objectContaining({ id: first.id, status: 'sent' }),
    ]);
    route.cut();
    const publishing = publisher.publish([outboxMessage()], new AbortController().signal);
    await waitFor(
      () => route.refused > 0,
      () => 'the client never tried the broker again after the cut',
    );
    const closed = await outcomeWithin(Promise.all([publisher.close(), publisher.close()]), 30_000);
    expect(closed).toEqual({ value: [undefined, undefined] });
    log.markClosed();
    timersAtClose = resourcesAbove(baseline).filter((resource) => resource.startsWith('Timeout'));
    expect(await outcomeWithin(publishing, 1_000)).toEqual({
      // Ended by close() (or the cut): no attempt spent.
      value: [expect.objectContaining({ status: 'unavailable' })],
    });
  } finally {
    await route.close();
  }
  // With the route gone, a retry's connect would go straight to the broker: seen here.
  expect(await activityWithin(WATCHED_AFTER_CLOSE_MS)).toEqual({ connects: [], heartbeats: 0 });
  expect(log.linesAfterClose()).toEqual([]);
  await expectBackToBaseline(baseline);
  return { timersAtClose, log };
}

test('no retry of a send runs after close(), and no timer of the client is left when it resolves', async () => {
  const { timersAtClose, log } = await closeWhileRetrying(PRODUCTION_RETRY);
  expect(timersAtClose).toEqual([]);
  expect(log.lines.filter((line) => line.msg.includes('did not finish closing'))).toEqual([]);
});

test('a retry set to outlast closeTimeoutMs connects nowhere and logs nothing after close()', async () => {
  await closeWhileRetrying(SLOW_RETRY, 300);
});
