/**
 * Review 96 (a publish call's one deadline, review 95): a publish() the relay's signal aborts
 * answers at once, whatever it waits on. The Kafka publisher's wait for its producer's connect
 * (connectWithin) raced only the call's deadline (answerWithinMs: 2 x confirmTimeoutMs +
 * connectionTimeoutMs), not the signal: against a cluster gone silent with its TCP still accepted,
 * an aborted publish went on waiting for the connect until the connect failed (kafkajs's 30 s
 * request timeout here) or that deadline (63 s here), holding the relay's publish, its close() and
 * its lease past the abort.
 */
import { waitUntil } from '@ferry/testing';
import { testOutboxMessage } from '../../../test-support/outboxMessages';
import { KafkaPublisher } from '../src';
import { ShapedLink } from './shapedLink';
import { uniqueName } from './support';

jest.setTimeout(120_000);

let link: ShapedLink;

beforeAll(async () => {
  link = await ShapedLink.start({});
  link.setSilent(true);
});

afterAll(async () => {
  await link.close();
});

test('a publish aborted by its signal while the producer connects to a silent cluster answers at once, not at answerWithinMs', async () => {
  const connection = link.connection('ferry-review96-aborted-connect');
  const publisher = new KafkaPublisher(connection, { confirmTimeoutMs: 30_000 });
  expect(publisher.answerWithinMs).toBeGreaterThan(60_000);
  const controller = new AbortController();
  let answer: readonly { status: string }[] | undefined;
  const publishing = publisher
    .publish(
      [
        testOutboxMessage({
          type: 'doc.stored',
          destination: uniqueName('review96-aborted-connect'),
          payload: { n: 1 },
        }),
      ],
      controller.signal,
    )
    .then((outcomes) => (answer = outcomes));
  try {
    await new Promise((resolve) => setTimeout(resolve, 200));
    controller.abort(new Error('relay stopping'));
    // Before: no answer until the connect failed, 30 s on.
    await waitUntil('the aborted publish answered', () => answer !== undefined, 20_000);
    expect(answer!.map((outcome) => outcome.status)).not.toContain('sent');
  } finally {
    await publishing.catch(() => undefined);
    await publisher.close().catch(() => undefined);
  }
});
