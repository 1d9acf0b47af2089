import { SendMessageBatchCommand, type MessageAttributeValue } from '@aws-sdk/client-sqs';
import { outboxHeaders } from '@ferry/core/transport';
import { SqsConnection, SqsPublisher, declareQueue, deleteQueue } from '@ferry/sqs';
import { SERVICES, chunks, uniqueName } from '../env';
import { relayScenario } from './relay';

/** SendMessageBatch takes at most 10 entries. */
const SQS_BATCH = 10;

/**
 * Outbox → SQS: SqsPublisher vs raw SendMessageBatch calls of 10 entries, sent one after the
 * other (as SqsPublisher sends a relay batch), each checked for an empty `Failed` list.
 */
export const relaySqs = relayScenario({
  name: 'relay-sqs',
  baselineLabel: 'SendMessageBatch of 10, sequential',
  subjectLabel: 'createRelay + SqsPublisher',
  async openBroker() {
    const connection = new SqsConnection({
      endpoint: SERVICES.sqsEndpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'ferry', secretAccessKey: 'ferry' },
    });
    const { queueUrl } = await declareQueue(connection, { name: uniqueName('relay') });
    const publisher = new SqsPublisher(connection);
    return {
      destination: queueUrl,
      publisher,
      prepare(batch) {
        const requests = chunks(batch, SQS_BATCH).map((group) =>
          group.map((message, i) => {
            const attributes: Record<string, MessageAttributeValue> = {};
            for (const [name, value] of Object.entries(outboxHeaders(message)))
              attributes[name] = { DataType: 'String', StringValue: value };
            return {
              Id: `m${i}`,
              MessageBody: JSON.stringify(message.payload),
              MessageAttributes: attributes,
            };
          }),
        );
        return async () => {
          for (const entries of requests) {
            const output = await connection.client.send(
              new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }),
            );
            if ((output.Failed ?? []).length > 0)
              throw new Error(`SQS refused ${output.Failed?.length} entries`);
          }
        };
      },
      async close() {
        await publisher.close();
        await deleteQueue(connection, queueUrl);
        await connection.close();
      },
    };
  },
});
