/**
 * A queue subscribed to an SNS topic with raw message delivery off receives SNS's notification
 * envelope as the body: `Message` (the published text, a string) and `MessageAttributes` (the
 * published attributes, `{ Type, Value }`). Without an option ferry took the envelope as the
 * payload, ignored ferry's attributes inside it (a tenant sent by the producer went to the global
 * scope) and took the SQS MessageId as the identity, new for each of SNS's deliveries of one
 * publish. `envelope: 'sns'` takes the envelope off. Raw delivery on needs no option: the
 * attributes are SQS's own (attributeTypes.test.ts, review104-binaryAttributes.test.ts).
 */
import { describe, expect, it } from '@jest/globals';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { FERRY_HEADERS } from '@ferry/core';
import { attachSqsConsumer } from '@ferry/sqs';
import { useSqsConsumerFixture } from './support/consumerFixture';
import { receiveAtLeast, uniqueName, waitFor } from './support/sqs';

const fixture = useSqsConsumerFixture();

/** The body SNS delivers for one publish of `message` with `attributes`. */
function notification(
  snsMessageId: string,
  message: string,
  attributes: Record<string, unknown> = {},
): string {
  return JSON.stringify({
    Type: 'Notification',
    MessageId: snsMessageId,
    TopicArn: 'arn:aws:sns:us-east-1:123456789012:orders',
    Message: message,
    Timestamp: '2024-05-01T12:00:00.000Z',
    SignatureVersion: '1',
    Signature: 'c2lnbmF0dXJl',
    SigningCertURL: 'https://sns.us-east-1.amazonaws.com/cert.pem',
    UnsubscribeURL: 'https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe',
    MessageAttributes: attributes,
  });
}

async function rows(): Promise<
  { message_id: string; tenant_id: string | null; type: string | null; payload: unknown; headers: unknown }[]
> {
  return fixture.database.db.query(
    'SELECT message_id, tenant_id, type, payload, headers FROM test_inbox ORDER BY message_id',
  );
}

describe("SQS consumer: SNS's notification envelope", () => {
  it("envelope: 'sns' accepts the published message with its attributes, once per publish", async () => {
    const acceptor = await fixture.freshAcceptor();
    const { queueUrl } = await fixture.queues.declare({ name: uniqueName('sns') });
    const { queueUrl: deadUrl } = await fixture.queues.declareBare({ name: uniqueName('sns-dead') });
    const send = (body: string) =>
      fixture.connection.client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
    const placed = notification('sns-1', '{"orderId":7}', {
      [FERRY_HEADERS.tenantId]: { Type: 'String', Value: 'acme' },
      [FERRY_HEADERS.eventType]: { Type: 'String', Value: 'order.placed' },
      'app.priority': { Type: 'Number', Value: '5' },
      'app.blob': { Type: 'Binary', Value: Buffer.from('bytes as text').toString('base64') },
    });
    await send(placed);
    await send(placed); // SNS delivered the same publish twice: a new SQS message, the same SNS MessageId
    await send(
      notification('sns-2', '{"orderId":8}', {
        [FERRY_HEADERS.messageId]: { Type: 'String', Value: 'own-id' },
      }),
    );
    await send('{"orderId":9}'); // not a notification (raw delivery on)
    await send(notification('sns-3', 'plain text'));

    const consumer = fixture.attach(acceptor, queueUrl, {
      envelope: 'sns',
      deadLetter: { mode: 'queue', queueUrl: deadUrl },
    });
    await consumer.ready();

    const dead = await receiveAtLeast(fixture.connection, deadUrl, 2);
    expect(
      dead
        .map((m) => [m.Body, m.MessageAttributes?.[FERRY_HEADERS.rejectReason]?.StringValue])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    ).toEqual([
      ['{"orderId":9}', 'unparseable_body'],
      [notification('sns-3', 'plain text'), 'unparseable_body'],
    ]);
    const stored = await waitFor('two stored', async () => {
      const found = await rows();
      return found.length >= 2 ? found : undefined;
    });
    expect(stored).toEqual([
      {
        message_id: 'own-id',
        tenant_id: null,
        type: null,
        payload: { orderId: 8 },
        headers: { [FERRY_HEADERS.messageId]: 'own-id' },
      },
      {
        message_id: 'sns-1',
        tenant_id: 'acme',
        type: 'order.placed',
        payload: { orderId: 7 },
        headers: {
          [FERRY_HEADERS.tenantId]: 'acme',
          [FERRY_HEADERS.eventType]: 'order.placed',
          'app.priority': '5',
          'app.blob': 'bytes as text',
        },
      },
    ]);
  });

  it('without the option the envelope is the payload, as any JSON object body', async () => {
    const acceptor = await fixture.freshAcceptor();
    const { queueUrl } = await fixture.queues.declare({ name: uniqueName('sns-none') });
    const body = notification('sns-9', '{"orderId":1}');
    const sent = await fixture.connection.client.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }),
    );
    fixture.attach(acceptor, queueUrl);
    const [row] = await waitFor('stored', async () => {
      const found = await rows();
      return found.length > 0 ? found : undefined;
    });
    expect(row).toMatchObject({ message_id: sent.MessageId, payload: JSON.parse(body) });
  });

  it('refuses an envelope option it does not know', () => {
    expect(() =>
      attachSqsConsumer({ maxPayloadBytes: 1, acceptMany: async () => [] } as never, {
        connection: fixture.connection,
        queueUrl: 'q',
        consumer: 'orders',
        envelope: 'SNS' as never,
      }),
    ).toThrow(/envelope.*must be one of none, sns, got "SNS"/);
  });
});
