/**
 * Review 124: the SQS consumer's acceptance outage events (`acceptance-unavailable`,
 * `acceptance-recovered`) named the queue URL as configured, where every other event of the
 * consumer names it without a user and password (stripUrlCredentials): an observer got the
 * password (so did the outage's log lines), and saw one queue as two sources. They now name the
 * source every other event names.
 */
import pino from 'pino';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { SqsPublisher } from '@ferry/sqs';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { useSqsConsumerFixture } from './support/consumerFixture';
import { neverAborted, outboxMessages, uniqueName, waitFor } from './support/sqs';

failOnUnhandledRejections();
jest.setTimeout(90_000);

const fixture = useSqsConsumerFixture();
const SECRET = 'SeCrEtPaSs';

test('the outage events of a queue URL with user:password name the same source as the others, without the password', async () => {
  const acceptor = await fixture.freshAcceptor();
  const { queueUrl } = await fixture.queues.declare({ name: uniqueName('r124-outage') });
  const url = new URL(queueUrl);
  url.username = 'u';
  url.password = SECRET;
  await new SqsPublisher(fixture.connection).publish(outboxMessages(2, queueUrl), neverAborted());
  await acceptor.refuse(true);
  const events: TransportConsumerEvent[] = [];
  const lines: string[] = [];
  fixture.attach(acceptor, url.toString(), {
    logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }),
    retryBackoff: { initialMs: 50, maxMs: 100 },
    observer: (event) => void events.push(event),
  });
  await waitFor('an outage', () =>
    events.some((e) => e.type === 'acceptance-unavailable') ? true : undefined,
  );
  await acceptor.refuse(false);
  await waitFor('the outage over', () =>
    events.some((e) => e.type === 'acceptance-recovered') ? true : undefined,
  );
  expect(JSON.stringify(events)).not.toContain(SECRET);
  // The outage's log lines (warn as it begins, info once over) neither.
  expect(lines.filter((line) => line.includes('acceptance'))).toHaveLength(2);
  expect(lines.join('\n')).not.toContain(SECRET);
  expect(new Set(events.map((e) => e.source))).toEqual(new Set([events[0]!.source]));
});
