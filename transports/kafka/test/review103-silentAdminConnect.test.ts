/**
 * Review 103: close() of a consumer whose start check's admin client is connecting when the
 * cluster goes silent (the dead-letter producer connected; the admin's first request unanswered)
 * settles within its bound and leaves no socket (review 102 silenced the cluster only once the
 * admin had connected; review 98's silent peer never let the start reach its check). Runs on both
 * clients (platformatic/review103-silentAdminConnect).
 */
import { attachKafkaConsumer } from '../src';
import { ConsumerHarness } from './consumerHarness';
import { testConnection, uniqueName } from './support';
import { expectStartCheckClosed, SilentRoute } from './silentRoute';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';

failOnUnhandledRejections();
jest.setTimeout(180_000);

/** Far beyond the test: a close() that waits for the client's connect or requests to time out hangs here. */
const CLIENT_TIMEOUT_MS = 600_000;
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

test('close() of a consumer whose start check connects its admin client to a silent cluster settles within its bound and leaves no socket', async () => {
  const topic = await harness.topicPair('r103-admin-connect');
  const route = await SilentRoute.start();
  try {
    const connection = testConnection({
      requestTimeoutMs: CLIENT_TIMEOUT_MS,
      connectionTimeoutMs: CLIENT_TIMEOUT_MS,
    });
    await expectStartCheckClosed(
      route,
      connection,
      'connecting',
      () =>
        attachKafkaConsumer(harness.acceptor, {
          connection,
          topic,
          groupId: uniqueName('r103-group'),
          consumer: 'review103',
          closeTimeoutMs: CLOSE_TIMEOUT_MS,
        }),
      CLOSE_WITHIN_MS,
    );
  } finally {
    await route.close();
  }
});
