/**
 * Review 124: 10,000 distinct destinations. A topic a send failed on is suspect (TopicPresence):
 * checked before the next send to it, until the cluster lists it or a send to it succeeds. A
 * topic that never comes stayed suspect for the life of the publisher, so events naming
 * ever new missing topics (per-tenant or per-request destinations, a typo with an id in it) grew
 * the set without bound. It now keeps the most recent UNANSWERED_KEPT (10,000) suspects, as the
 * publisher's other per-record memories: one dropped is only not checked first any more.
 */
import { TopicPresence } from '../src/topicPresence';
import { deadlineIn } from '../src/race';
import { testConnection } from './support';

test('the suspect topics are bounded: the oldest of 10,001 is no longer checked, the newest is', async () => {
  const presence = new TopicPresence(testConnection());
  try {
    for (let i = 0; i <= 10_000; i += 1) presence.suspect(`ferry-test-r124-missing-${i}`);
    expect(await presence.missing(new Set(['ferry-test-r124-missing-0']), [], deadlineIn(20_000))).toEqual(
      new Set(),
    );
    expect(
      await presence.missing(new Set(['ferry-test-r124-missing-10000']), [], deadlineIn(20_000)),
    ).toEqual(new Set(['ferry-test-r124-missing-10000']));
  } finally {
    await presence.close();
  }
});
