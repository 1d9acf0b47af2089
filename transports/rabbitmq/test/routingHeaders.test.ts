/**
 * Review finding (failed first; 956de6c's area: the outbox publisher's `mandatory` publishes, publisher.ts):
 * emit() accepts an event header named `CC` or `BCC` with a string value (an e-mail event's
 * `CC: ops@example.com` is plausible; only x-ferry-*, traceparent, tracestate are reserved).
 * encodeMessage copies it into the AMQP headers, and RabbitMQ reads CC/BCC at publish time as
 * sender-selected distribution, which must be an array: it closes the channel with
 * 406 PRECONDITION_FAILED "unacceptable_type_in_header, CC, longstr". Every publish after it in
 * the batch fails with "channel closed" and is reported retryable (a retry spent), and the event
 * itself is retried until FAILED, failing the neighbours claimed after it in each cycle: one
 * event header fails the batch, what foreignRows.ts set out to prevent for bad rows. Fix: never
 * send event headers named CC/BCC (rename them, or refuse them at emit as reserved).
 */
import { RabbitConnection, RabbitPublisher } from '@ferry/rabbitmq';
import { AMQP_URL, openTestBroker, uniqueName, type TestBroker } from './support/broker';
import { neverAborted, outboxMessage } from './support/messages';

let broker: TestBroker;
let exchange: string;
let queue: string;
let connection: RabbitConnection;
let publisher: RabbitPublisher;

beforeEach(async () => {
  broker = await openTestBroker();
  exchange = uniqueName('review6_cc_x');
  queue = uniqueName('review6_cc_q');
  await broker.channel.assertExchange(exchange, 'topic', { durable: true });
  await broker.channel.assertQueue(queue, { durable: true });
  await broker.channel.bindQueue(queue, exchange, 'order.*');
  connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('review6-cc') });
  publisher = new RabbitPublisher(connection, { defaultDestination: exchange, confirmTimeoutMs: 5_000 });
});

afterEach(async () => {
  await publisher.close();
  await connection.close();
  await broker.channel.deleteQueue(queue);
  await broker.channel.deleteExchange(exchange);
  await broker.close();
});

it.each([['CC'], ['BCC']])(
  'an event header named %s neither closes the channel under its batch nor is retried for ever',
  async (name) => {
    const poisoned = outboxMessage({ headers: { [name]: 'ops@example.com' } });
    const after = [outboxMessage(), outboxMessage()];
    const outcomes = await publisher.publish([poisoned, ...after], neverAborted());
    const byId = new Map(outcomes.map((o) => [o.id, o]));
    // On main: all three retryable, "broker did not confirm: ... 406 (PRECONDITION-FAILED) ...".
    expect(after.map((m) => byId.get(m.id)?.status)).toEqual(['sent', 'sent']);
    expect(byId.get(poisoned.id)).toMatchObject({
      status: 'permanent',
      error: expect.stringContaining(`header ${name} is a RabbitMQ routing instruction`),
    });
  },
);
