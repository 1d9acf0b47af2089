/**
 * Review 103: close() of a consumer whose start check's admin client is connecting when the
 * cluster goes silent (the dead-letter producer connected, the admin's first request unanswered).
 */
import { attachKafkaConsumer } from '../src';
import { ConsumerHarness } from './consumerHarness';
import { testConnection, uniqueName, waitFor } from './support';
import { SilentRoute } from './silentRoute';
import { outcomeWithin } from '../../../test-support/deadlines';
import { openSocketsTo } from '../../../test-support/openSockets';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';

failOnUnhandledRejections();
jest.setTimeout(180_000);

const REQUEST_TIMEOUT_MS = 600_000;
const CLOSE_TIMEOUT_MS = 2_000;
const CLOSE_WITHIN_MS = 20_000;

let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  await harness.close();
});

test('close() of a consumer whose start check connects its admin client to a silent cluster settles within its bound and leaves no socket', async () => {
  const topic = await harness.topicPair('r103-admin-connect');
  const route = await SilentRoute.start();
  try {
    const connection = testConnection({
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      connectionTimeoutMs: REQUEST_TIMEOUT_MS,
    });
    const connectAdmin = connection.driver.admin.bind(connection.driver);
    let silenced = false;
    jest.spyOn(connection.driver, 'admin').mockImplementation((signal) => {
      route.silence();
      silenced = true;
      return connectAdmin(signal);
    });
    const consumer = attachKafkaConsumer(harness.acceptor, {
      connection,
      topic,
      groupId: uniqueName('r103-group'),
      consumer: 'review103',
      closeTimeoutMs: CLOSE_TIMEOUT_MS,
    });
    await waitFor(
      () => silenced && route.dropped > 0,
      () => 'the start check never connected',
    );
    const closed = await outcomeWithin(Promise.all([consumer.close(), consumer.close()]), CLOSE_WITHIN_MS);
    expect(closed).toEqual({ value: [undefined, undefined] });
    expect(openSocketsTo(route.port)).toBe(0);
  } finally {
    await route.close();
  }
});
