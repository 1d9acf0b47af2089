/**
 * Review 100: close() of a publisher with a publish awaiting its confirm when the broker link goes
 * silent (TCP open, nothing crosses). Hypothesis: close() hangs on the unanswered channel and
 * connection close. It holds: every close answer is waited for at most CLOSE_ANSWER_MS, then the
 * socket is destroyed; the publish is told it is not sent (never `sent`), and no socket is left.
 */
import { RabbitConnection, RabbitPublisher } from '@ferry/rabbitmq';
import {
  openTestBroker,
  uniqueName,
  waitFor,
  type TestBroker,
  declareRoutedQueue,
  deleteRoutedQueue,
} from './support/broker';
import { neverAborted, outboxMessage } from './support/messages';
import { SlowLink } from './support/slowLink';
import { outcomeWithin } from '../../../test-support/deadlines';
import { openSocketsTo } from '../../../test-support/openSockets';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';

failOnUnhandledRejections();
jest.setTimeout(60_000);

/** Far beyond the test: only close() can end the publish. */
const CONFIRM_TIMEOUT_MS = 300_000;
/** Three close answers of CLOSE_ANSWER_MS (2 s) each and room for the test machine. */
const CLOSE_WITHIN_MS = 20_000;

let broker: TestBroker;
const exchange = uniqueName('r100_silent_x');
const queue = uniqueName('r100_silent_q');

beforeAll(async () => {
  broker = await openTestBroker();
  await declareRoutedQueue(broker.channel, exchange, queue);
});

afterAll(async () => {
  await deleteRoutedQueue(broker.channel, exchange, queue);
  await broker.close();
});

test('close() of a publisher whose publish awaits its confirm on a silent link settles, reports it not sent and leaves no socket', async () => {
  const link = await SlowLink.start();
  try {
    const connection = new RabbitConnection({ url: link.url() });
    const publisher = new RabbitPublisher(connection, {
      defaultDestination: exchange,
      confirmTimeoutMs: CONFIRM_TIMEOUT_MS,
    });
    const [warm] = await publisher.publish([outboxMessage()], neverAborted());
    expect(warm).toEqual(expect.objectContaining({ status: 'sent' }));

    link.setSilent(true);
    const message = outboxMessage();
    const publishing = publisher.publish([message], neverAborted());
    await new Promise((resolve) => setTimeout(resolve, 200));

    const closed = await outcomeWithin(Promise.all([publisher.close(), connection.close()]), CLOSE_WITHIN_MS);
    expect(closed).toEqual({ value: [undefined, undefined] });
    const outcome = await outcomeWithin(publishing, 5_000);
    expect(outcome).toEqual({
      value: [
        expect.objectContaining({
          id: message.id,
          // Ended by close() (the publisher's or the connection's): no attempt spent.
          status: 'unavailable',
        }),
      ],
    });
    await waitFor('no socket to the link left open', () =>
      openSocketsTo(Number(new URL(link.url()).port)) === 0 ? true : undefined,
    );
  } finally {
    await link.close();
  }
});
