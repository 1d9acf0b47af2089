/**
 * AMQP short strings (the exchange, the routing key, and properties such as `type` and
 * `correlationId`) hold at most 255 bytes, and amqplib throws when asked to publish a longer one,
 * after it queued the publish's confirm callback: every later confirm on the channel is then
 * credited to the publish before it. emit() allows event types of 255 characters (up to 765
 * bytes), and ids and destinations of 512. Such an event must be refused alone, and no outcome
 * of its batch may be taken from another message's confirm: before, a message the broker nacked
 * (a full queue with overflow reject-publish) after it was reported sent.
 */
import { FERRY_HEADERS } from '@ferry/core';
import { RabbitConnection, RabbitPublisher } from '@ferry/rabbitmq';
import { AMQP_URL, openTestBroker, uniqueName, type TestBroker } from './support/broker';
import { neverAborted, outboxMessage } from './support/messages';

describe('RabbitPublisher with AMQP short strings over 255 bytes', () => {
  let broker: TestBroker;
  let connection: RabbitConnection;
  let publisher: RabbitPublisher;
  const queues: string[] = [];

  beforeEach(() => {
    connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('short') });
    publisher = new RabbitPublisher(connection, { confirmTimeoutMs: 5_000 });
  });
  beforeAll(async () => {
    broker = await openTestBroker();
  });
  afterEach(async () => {
    await publisher.close();
    await connection.close();
    for (const queue of queues.splice(0)) await broker.channel.deleteQueue(queue);
  });
  afterAll(async () => {
    await broker.close();
  });

  async function queue(args: Record<string, unknown> = {}): Promise<string> {
    const name = uniqueName('short_q');
    queues.push(name);
    await broker.channel.assertQueue(name, { durable: true, arguments: args });
    return name;
  }

  it('a long type or correlation id is sent without the AMQP property (ferry headers carry it); a routing key over 255 bytes is permanent', async () => {
    const target = await queue();
    const longType = `order.${'é'.repeat(200)}`;
    const longCorrelation = 'c'.repeat(300);
    const messages = [
      outboxMessage({ destination: `/${target}` }),
      outboxMessage({ destination: `/${target}`, type: longType }),
      outboxMessage({ destination: `/${target}`, correlationId: longCorrelation }),
      outboxMessage({ destination: `/${'q'.repeat(300)}` }),
      outboxMessage({ destination: `/${target}` }),
      outboxMessage({ destination: `/${target}`, headers: { [`x-${'n'.repeat(300)}`]: 'v' } }),
      outboxMessage({ destination: `/${target}` }),
    ];

    const outcomes = await publisher.publish(messages, neverAborted());

    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'sent',
      'sent',
      'sent',
      'permanent',
      'sent',
      'permanent',
      'sent',
    ]);
    expect(outcomes[5]).toMatchObject({ error: expect.stringContaining('header name') });
    expect(outcomes[3]).toMatchObject({ error: expect.stringContaining('255 bytes') });
    const received = await broker.drain(target);
    const byId = new Map(received.map((message) => [message.properties.messageId as string, message]));
    expect([...byId.keys()].sort()).toEqual([0, 1, 2, 4, 6].map((i) => messages[i]!.id).sort());
    const typed = byId.get(messages[1]!.id)!;
    expect([typed.properties.type, typed.properties.headers?.[FERRY_HEADERS.eventType]]).toEqual([
      undefined,
      longType,
    ]);
    const correlated = byId.get(messages[2]!.id)!;
    expect([
      correlated.properties.correlationId,
      correlated.properties.headers?.[FERRY_HEADERS.correlationId],
    ]).toEqual([undefined, longCorrelation]);
  });

  it('a message the broker nacks after one that cannot be encoded is never reported sent', async () => {
    const full = await queue({ 'x-max-length': 1, 'x-overflow': 'reject-publish' });
    broker.channel.sendToQueue(full, Buffer.from('{}'), { messageId: 'filler' });
    const open = await queue();
    const messages = [
      outboxMessage({ destination: `/${'q'.repeat(300)}` }),
      outboxMessage({ destination: `/${full}` }),
      outboxMessage({ destination: `/${open}` }),
    ];

    const outcomes = await publisher.publish(messages, neverAborted());

    const inFull = (await broker.drain(full)).map((message) => message.properties.messageId as string);
    const inOpen = (await broker.drain(open)).map((message) => message.properties.messageId as string);
    expect([inFull, inOpen]).toEqual([['filler'], [messages[2]!.id]]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['permanent', 'retryable', 'sent']);
  });

  it('an event whose header table amqplib could not encode (70 KB of headers: emit allows maxHeaderBytes up to 1 MiB) is permanent before any publish; the rest of the batch goes out, each confirm its own', async () => {
    const full = await queue({ 'x-max-length': 1, 'x-overflow': 'reject-publish' });
    broker.channel.sendToQueue(full, Buffer.from('{}'), { messageId: 'filler' });
    const open = await queue();
    const messages = [
      outboxMessage({ destination: `/${open}`, headers: { 'x-big': 'b'.repeat(70_000) } }),
      outboxMessage({ destination: `/${full}` }),
      outboxMessage({ destination: `/${open}` }),
    ];

    const outcomes = await publisher.publish(messages, neverAborted());

    // Before, amqplib threw mid-batch (its header scratch buffer is 64 KiB) and the neighbours
    // were never put on the wire ('unavailable', waiting for another cycle). Now the event is
    // refused before any publish (headerTable.test.ts, through the relay) and its neighbours'
    // outcomes are their own: the full queue nacks, the open one takes it.
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['permanent', 'retryable', 'sent']);
    expect(outcomes[0]).toMatchObject({ error: expect.stringContaining('the header table is') });
    expect(await broker.readyCount(full)).toBe(1);
    // The next batch on the same channel: every confirm its own.
    const next = [outboxMessage({ destination: `/${full}` }), outboxMessage({ destination: `/${open}` })];
    expect((await publisher.publish(next, neverAborted())).map((outcome) => outcome.status)).toEqual([
      'retryable',
      'sent',
    ]);
  });
});
