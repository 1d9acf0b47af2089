/**
 * Review 99: close() of a consumer that joined its group, whose cluster then goes silent (its TCP
 * links stay open, nothing answers). kafkajs's stop waits for the fetch in flight, then for its
 * LeaveGroup, each up to requestTimeoutMs (@platformatic/kafka likewise for its LeaveGroup):
 * a process given 30 s to stop (Kubernetes' SIGTERM) could not. close() settles within its
 * `closeTimeoutMs` (default 10 s), destroys what is left of the client, reports `disconnected`
 * (closed) once and leaves no socket. A chunk accepted before the silence stays accepted and is
 * committed; one whose commit the silence swallowed is read again by the next member and answered
 * as a duplicate (nothing lost); the closed consumer connects no more (review 125). Runs on both
 * clients (platformatic/review99-silentClose).
 *
 * Every broker connection of the process is routed through a SilentRoute (./silentRoute). The
 * shared broker is never touched.
 */
import { FERRY_HEADERS } from '@ferry/core';
import { ConsumerHarness, eventSum } from './consumerHarness';
import { testConnection, waitFor } from './support';
import { activityWithin, SilentRoute } from './silentRoute';
import { outcomeWithin } from '../../../test-support/deadlines';
import { openSocketsTo } from '../../../test-support/openSockets';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';

failOnUnhandledRejections();
jest.setTimeout(120_000);

/**
 * How long the test watches the closed consumer: several of the group's heartbeat intervals
 * (fastGroup's 300 ms) and of the client's retry delays (1 s).
 */
const WATCHED_AFTER_CLOSE_MS = 4_000;

/** Far beyond the test: a close() that waits for the client's requests to time out hangs here. */
const REQUEST_TIMEOUT_MS = 600_000;
/** The consumer's default closeTimeoutMs (10 s) and room for the test machine. */
const CLOSE_WITHIN_MS = 25_000;

let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  await harness.close();
});

test('close() of a joined consumer whose cluster went silent settles within its bound, reports closed once and leaves no socket; nothing is lost', async () => {
  const topic = await harness.topicPair('r99-silent');
  const record = (id: string) => ({ value: `{"id":"${id}"}`, headers: { [FERRY_HEADERS.messageId]: id } });
  await harness.raw.send({ topic, messages: [record('before')] });
  const route = await SilentRoute.start();
  let groupId = '';
  try {
    const started = await harness.start(topic, 'review99', {
      connection: testConnection({ requestTimeoutMs: REQUEST_TIMEOUT_MS }),
    });
    groupId = started.groupId;
    await harness.waitFullyCommitted(groupId, topic);

    // A chunk being accepted as the cluster goes silent: stored, its commit never answered.
    let silenced = false;
    harness.acceptor.afterCommit = async () => {
      route.silence();
      silenced = true;
    };
    await harness.raw.send({ topic, messages: [record('during')] });
    await waitFor(
      () => silenced,
      () => 'the second record was never accepted',
    );
    harness.acceptor.afterCommit = null;

    const closed = await outcomeWithin(
      Promise.all([started.handle.close(), started.handle.close()]),
      CLOSE_WITHIN_MS,
    );
    expect(closed).toEqual({ value: [undefined, undefined] });
    expect(openSocketsTo(route.port)).toBe(0);
    expect(
      started.events.filter((event) => event.type === 'disconnected' && event.retryInMs === null),
    ).toEqual([expect.objectContaining({ reason: 'closed' })]);
    expect(eventSum(started.events, 'accepted')).toBeGreaterThanOrEqual(1);
  } finally {
    await route.close();
  }
  // Nor does the closed consumer connect again, the route gone (review 125: a @platformatic/kafka
  // consumer's close() refused while its stream ran, and its group requests went on connecting).
  expect(await activityWithin(WATCHED_AFTER_CLOSE_MS)).toEqual({ connects: [], heartbeats: 0 });

  // The next member of the group reads what was not committed again: a duplicate, nothing lost.
  const duplicatesBefore = harness.acceptor.duplicates;
  const next = await harness.start(topic, 'review99', { groupId });
  await harness.waitFullyCommitted(groupId, topic);
  expect(harness.acceptor.duplicates - duplicatesBefore).toBeLessThanOrEqual(1);
  expect((await harness.acceptor.rows('review99')).map((row) => row.messageId).sort()).toEqual([
    'before',
    'during',
  ]);
  await next.handle.close();
});
