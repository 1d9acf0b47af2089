/**
 * Review 88 (time): a message whose createdAt is before 1970, failing on main.
 *
 * What I did: the relay hands the publisher each row's created_at as the message's createdAt; a row
 * imported with its historical time (1969), or set to '-infinity' (read as the earliest Date,
 * -271821-04-20), is published to RabbitMQ beside ordinary ones.
 *
 * What happened: the AMQP timestamp property is an unsigned 64-bit count of seconds; amqplib
 * refuses a negative one as it encodes the publish ("Value out of range"), so the message was never
 * sent, at every attempt: the event could never be published at all. An Invalid Date (a
 * publisher's caller other than the relay) made it NaN, refused the same way.
 *
 * What should happen: the message is sent with its ferry headers; the timestamp property carries
 * the time when AMQP can (seconds since 1970, up to the latest Date) and is left out when not.
 */
import { RabbitConnection, RabbitPublisher } from '@ferry/rabbitmq';
import { AMQP_URL, openTestBroker, uniqueName, type TestBroker } from './support/broker';
import { neverAborted, outboxMessage } from './support/messages';

describe('RabbitPublisher with a createdAt AMQP cannot write as a timestamp', () => {
  let broker: TestBroker;
  let connection: RabbitConnection;
  let publisher: RabbitPublisher;
  let target: string;

  beforeAll(async () => {
    broker = await openTestBroker();
    connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('time') });
    publisher = new RabbitPublisher(connection, { confirmTimeoutMs: 5_000 });
    target = uniqueName('time_q');
    await broker.channel.assertQueue(target, { durable: true });
  });
  afterAll(async () => {
    await publisher.close();
    await connection.close();
    await broker.channel.deleteQueue(target);
    await broker.close();
  });

  it.each([
    ['1969-07-20T20:17:00Z (before 1970)', new Date('1969-07-20T20:17:00Z'), undefined],
    ['the earliest Date (-infinity read)', new Date(-8.64e15), undefined],
    ['an Invalid Date', new Date(Number.NaN), undefined],
    ['the latest Date (infinity read)', new Date(8.64e15), 8.64e12],
    ['1970-01-01T00:00:00.999Z', new Date(999), 0],
  ])('a message created at %s is sent, beside an ordinary one', async (_what, createdAt, seconds) => {
    const odd = outboxMessage({ destination: `/${target}`, createdAt });
    const ordinary = outboxMessage({ destination: `/${target}` });
    const outcomes = await publisher.publish([odd, ordinary], neverAborted());
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['sent', 'sent']);
    const received = await broker.drain(target);
    const byId = new Map(received.map((message) => [message.properties.messageId as string, message]));
    expect([...byId.keys()].sort()).toEqual([odd.id, ordinary.id].sort());
    expect(byId.get(odd.id)?.properties.timestamp).toBe(seconds);
  });
});
