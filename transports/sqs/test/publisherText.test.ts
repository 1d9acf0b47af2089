/**
 * What emit() allows and SQS does not: a FIFO MessageGroupId is 1 to 128 ASCII letters, digits
 * and punctuation, while an ordering key may hold spaces, any script and 512 characters; SQS
 * bodies and attributes exclude U+FFFE and U+FFFF, which a payload or id may hold (ElasticMQ
 * refuses the whole request for a U+FFFF, failing every neighbour in it). Each event is published
 * or refused alone; none fails its batch.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { FERRY_HEADERS } from '@ferry/core';
import { SqsPublisher, type SqsConnection } from '@ferry/sqs';
import {
  TestQueues,
  neverAborted,
  openConnection,
  outboxMessages,
  receiveAtLeast,
  uniqueName,
} from './support/sqs';

describe('SqsPublisher with text SQS does not take as it is', () => {
  let connection: SqsConnection;
  let queues: TestQueues;

  beforeAll(() => {
    connection = openConnection();
    queues = new TestQueues(connection);
  });

  afterAll(async () => {
    await queues.cleanup();
    await connection.close();
  });

  it('publishes every ordering key to a FIFO queue: a key SQS takes is the group id, any other maps to one group id of its own', async () => {
    const { queueUrl } = await queues.declare({ name: `${uniqueName('keys')}.fifo` });
    const publisher = new SqsPublisher(connection);
    const keys = ['plain-key', 'customer 42', 'customer 42', 'ключ', 'k'.repeat(200), 'customer 42'];
    const messages = keys.map((orderingKey, i) => ({
      ...outboxMessages(1, queueUrl)[0]!,
      orderingKey,
      payload: { i },
    }));

    const outcomes = await publisher.publish(messages, neverAborted());
    await publisher.close();

    expect(outcomes.map((outcome) => outcome.status)).toEqual(keys.map(() => 'sent'));
    const received = await receiveAtLeast(connection, queueUrl, keys.length);
    const groupOf = new Map(
      received.map((m) => [
        m.MessageAttributes?.[FERRY_HEADERS.messageId]?.StringValue,
        m.Attributes?.MessageGroupId,
      ]),
    );
    const groups = messages.map((message) => groupOf.get(message.id)!);
    expect(groups[0]).toBe('plain-key');
    expect(new Set([groups[1], groups[2], groups[5]]).size).toBe(1);
    expect(new Set(groups).size).toBe(4);
    expect(groups.every((group) => /^[\x21-\x7e]{1,128}$/.test(group))).toBe(true);
    // Per-key order within the mapped group.
    const customer = received
      .filter((m) => m.Attributes?.MessageGroupId === groups[1])
      .map((m) => (JSON.parse(m.Body!) as { i: number }).i);
    expect(customer).toEqual([1, 2, 5]);
  });

  it('a payload holding U+FFFE or U+FFFF is sent escaped and reads back the same; an attribute holding one is permanent alone', async () => {
    const { queueUrl } = await queues.declare({ name: uniqueName('text') });
    const publisher = new SqsPublisher(connection);
    const [a, b, c, d] = outboxMessages(4, queueUrl);
    const messages = [
      { ...a!, payload: { s: 'x\uffffy\ufffez' } },
      { ...b!, correlationId: 'corr\uffff' },
      { ...c!, headers: { 'x-app': 'h\uffff' } },
      { ...d!, payload: { n: 4 } },
    ];

    const outcomes = await publisher.publish(messages, neverAborted());
    await publisher.close();

    expect(outcomes.map((outcome) => outcome.status)).toEqual(['sent', 'permanent', 'sent', 'sent']);
    expect(outcomes[1]).toMatchObject({ error: expect.stringContaining(FERRY_HEADERS.correlationId) });
    const received = await receiveAtLeast(connection, queueUrl, 3);
    const byId = new Map(
      received.map((m) => [m.MessageAttributes?.[FERRY_HEADERS.messageId]?.StringValue, m]),
    );
    expect(JSON.parse(byId.get(messages[0]!.id)!.Body!)).toEqual({ s: 'x\uffffy\ufffez' });
    expect(
      JSON.parse(byId.get(messages[2]!.id)!.MessageAttributes!['x-ferry-headers']!.StringValue!),
    ).toEqual({
      'x-app': 'h\uffff',
    });
  });
});
