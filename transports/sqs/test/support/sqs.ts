import { randomBytes } from 'node:crypto';
import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type Message,
  type MessageAttributeValue,
} from '@aws-sdk/client-sqs';
import type { OutboxMessage } from '@ferry/core';
import { testOutboxMessage } from '../../../../test-support/outboxMessages';
import { SqsConnection, declareQueue, deleteQueue, type DeclaredQueue, type QueueSpec } from '@ferry/sqs';

export const SQS_ENDPOINT = process.env.FERRY_SQS_ENDPOINT ?? 'http://127.0.0.1:9324';

export function openConnection(): SqsConnection {
  return new SqsConnection({
    endpoint: SQS_ENDPOINT,
    region: 'us-east-1',
    credentials: { accessKeyId: 'ferry', secretAccessKey: 'ferry' },
  });
}

/** Unique per run and per call, so parallel test files never share a queue. */
export function uniqueName(prefix: string): string {
  return `ferry-t-${prefix}-${randomBytes(5).toString('hex')}`;
}

/** Declares queues and deletes every one of them (dead-letter queues too) in cleanup(). */
export class TestQueues {
  private readonly urls: string[] = [];
  constructor(readonly connection: SqsConnection) {}

  async declare(spec: QueueSpec): Promise<DeclaredQueue> {
    const declared = await declareQueue(this.connection, spec);
    this.urls.push(declared.queueUrl);
    if (declared.deadLetterQueueUrl) this.urls.push(declared.deadLetterQueueUrl);
    return declared;
  }

  async cleanup(): Promise<void> {
    await Promise.all(this.urls.map((url) => deleteQueue(this.connection, url)));
    this.urls.length = 0;
  }
}

/** Receives (and deletes) until `count` messages arrived or the deadline passed. */
export async function receiveAtLeast(
  connection: SqsConnection,
  queueUrl: string,
  count: number,
  timeoutMs = 15_000,
): Promise<Message[]> {
  const messages: Message[] = [];
  const deadline = Date.now() + timeoutMs;
  while (messages.length < count) {
    if (Date.now() > deadline)
      throw new Error(`received ${messages.length} of ${count} messages from ${queueUrl}`);
    const output = await connection.client.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        VisibilityTimeout: 60,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
    );
    const batch = output.Messages ?? [];
    messages.push(...batch);
    // Deleted at once: a FIFO group delivers nothing more while a message of it is in flight.
    if (batch.length > 0) {
      await connection.client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: batch.map((m, index) => ({ Id: `r${index}`, ReceiptHandle: m.ReceiptHandle })),
        }),
      );
    }
  }
  return messages;
}

/** One short poll; whatever it returns is deleted. */
export async function drainOnce(connection: SqsConnection, queueUrl: string): Promise<Message[]> {
  const output = await connection.client.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 10,
      MessageAttributeNames: ['All'],
    }),
  );
  const messages = output.Messages ?? [];
  if (messages.length > 0) {
    await connection.client.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: messages.map((m, index) => ({ Id: `r${index}`, ReceiptHandle: m.ReceiptHandle })),
      }),
    );
  }
  return messages;
}

/** One short poll that must come back empty (the queue holds nothing visible). */
export async function receiveNone(connection: SqsConnection, queueUrl: string): Promise<Message[]> {
  const output = await connection.client.send(
    new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
  );
  return output.Messages ?? [];
}

export async function sendRaw(
  connection: SqsConnection,
  queueUrl: string,
  body: string,
  attributes: Record<string, string> = {},
): Promise<void> {
  const MessageAttributes: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(attributes))
    MessageAttributes[name] = { DataType: 'String', StringValue: value };
  await connection.client.send(
    new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body, MessageAttributes }),
  );
}

export function outboxMessages(
  count: number,
  destination: string | null,
  overrides: Partial<OutboxMessage> = {},
): OutboxMessage[] {
  return Array.from({ length: count }, (_, index) =>
    testOutboxMessage({ payload: { index }, destination, tenantId: 'tenant-a', ...overrides }),
  );
}

export function neverAborted(): AbortSignal {
  return new AbortController().signal;
}

/** Polls `check` until it returns a value other than undefined; throws at the deadline. */
export async function waitFor<T>(
  description: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${description}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
