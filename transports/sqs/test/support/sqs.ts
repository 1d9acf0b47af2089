import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
  type Message,
  type MessageAttributeValue,
} from '@aws-sdk/client-sqs';
import { INBOX_TABLE, type OutboxMessage, type SqlExecutor } from '@ferry/core';
import { setOwnProperty } from '@ferry/core/transport';
import { testOutboxMessage } from '../../../../test-support/outboxMessages';
import {
  SqsConnection,
  declareQueue,
  deleteQueue,
  type ConnectionOptions,
  type DeclaredQueue,
  type QueueSpec,
} from '@ferry/sqs';
import { waitUntil } from '@ferry/testing';

export const SQS_ENDPOINT = process.env.FERRY_SQS_ENDPOINT ?? 'http://127.0.0.1:9324';

export function openConnection(): SqsConnection {
  return new SqsConnection({
    endpoint: SQS_ENDPOINT,
    region: 'us-east-1',
    credentials: { accessKeyId: 'ferry', secretAccessKey: 'ferry' },
  });
}

/**
 * A connection through `proxy` (the fault harness's TCP proxy): with the endpoint rewritten, the
 * SDK sends each request of a queue URL rewritten by `proxy.urlFor` through it. One attempt per
 * request, so a failure shows at once.
 */
export function proxiedConnection(proxy: { urlFor(url: string): string }): SqsConnection {
  return new SqsConnection({
    endpoint: proxy.urlFor(SQS_ENDPOINT).replace(/\/$/, ''),
    region: 'us-east-1',
    credentials: { accessKeyId: 'ferry', secretAccessKey: 'ferry' },
    maxAttempts: 1,
  });
}

/** The message ids the inbox stored for `consumer`, sorted. */
export async function storedIds(db: SqlExecutor, consumer: string): Promise<string[]> {
  const rows = await db.query<{ message_id: string }>(
    `SELECT message_id FROM ${INBOX_TABLE} WHERE consumer = $1 ORDER BY message_id`,
    [consumer],
  );
  return rows.map((row) => row.message_id);
}

/** Unique per run and per call, so parallel test files never share a queue. */
export function uniqueName(prefix: string): string {
  return `ferry-t-${prefix}-${randomBytes(5).toString('hex')}`;
}

/** Declares queues and deletes every one of them (dead-letter queues too) in cleanup(). */
export class TestQueues {
  private readonly urls: string[] = [];
  constructor(readonly connection: SqsConnection) {}

  /**
   * Declares the queue; unless the spec says otherwise it gets a dead-letter queue with a
   * generous redrive policy, which the consumer's default `deadLetter: { mode: 'redrive' }`
   * requires.
   */
  async declare(spec: QueueSpec): Promise<DeclaredQueue> {
    return this.declareBare({ deadLetter: { maxReceiveCount: 100 }, ...spec });
  }

  /** Declares exactly `spec`: no dead-letter queue unless it asks for one. */
  async declareBare(spec: QueueSpec): Promise<DeclaredQueue> {
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

/** Messages `queueUrl` holds: visible, in flight (received, not deleted) and delayed. */
export async function heldMessages(connection: SqsConnection, queueUrl: string): Promise<number> {
  const kinds = [
    'ApproximateNumberOfMessages',
    'ApproximateNumberOfMessagesNotVisible',
    'ApproximateNumberOfMessagesDelayed',
  ] as const;
  const { Attributes } = await connection.client.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: [...kinds] }),
  );
  return kinds.reduce((held, kind) => held + Number(Attributes?.[kind] ?? 'NaN'), 0);
}

/** One short poll that must come back empty (the queue holds nothing visible). */
export async function receiveNone(connection: SqsConnection, queueUrl: string): Promise<Message[]> {
  const output = await connection.client.send(
    new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
  );
  return output.Messages ?? [];
}

/** `bodies` sent to `queueUrl` in one SendMessageBatch (at most 10), so one poll receives them together. */
export async function sendRawBatch(
  connection: SqsConnection,
  queueUrl: string,
  bodies: readonly string[],
): Promise<void> {
  await connection.client.send(
    new SendMessageBatchCommand({
      QueueUrl: queueUrl,
      Entries: bodies.map((body, index) => ({ Id: `m${index}`, MessageBody: body })),
    }),
  );
}

/**
 * A client with no endpoint in code: each request goes to its queue URL's host, so a queue URL a
 * TCP proxy rewrote (urlFor) goes through the proxy and the others straight to ElasticMQ. One
 * attempt per request; the SDK's warning about the endpoint left out. destroy() it after the test.
 */
export function perQueueHostClient(): SQSClient {
  const quiet = () => undefined;
  return new SQSClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'ferry', secretAccessKey: 'ferry' },
    maxAttempts: 1,
    logger: { trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet },
  });
}

export async function sendRaw(
  connection: SqsConnection,
  queueUrl: string,
  body: string,
  attributes: Record<string, string> = {},
): Promise<void> {
  const MessageAttributes: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(attributes))
    setOwnProperty(MessageAttributes, name, { DataType: 'String', StringValue: value });
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

/** Waits for `check` to return a value other than undefined (the one wait-until of @ferry/testing). */
export async function waitFor<T>(
  description: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 20_000,
): Promise<T> {
  return (await waitUntil(description, check, { timeoutMs, intervalMs: 50 })) as T;
}

/**
 * Counts the requests of one SQS command (`ReceiveMessageCommand`, …) that `connection`'s client
 * sends from now on, through the SDK's own middleware stack; `stop()` removes the counter.
 */
export function countRequests(
  connection: SqsConnection,
  commandName: string,
): { count(): number; stop(): void } {
  const name = `ferry-test-count-${randomBytes(4).toString('hex')}`;
  let count = 0;
  connection.client.middlewareStack.add(
    (next, context) => (args) => {
      if (context.commandName === commandName) count += 1;
      return next(args);
    },
    { step: 'initialize', name },
  );
  return { count: () => count, stop: () => void connection.client.middlewareStack.remove(name) };
}

/**
 * An endpoint that accepts connections and reads requests but never answers (a network dropping
 * packets to SQS), on a free port of 127.0.0.1. `accepted()`: the connections it took so far (a
 * request on its way). `close()` destroys its sockets and stops it.
 */
export async function silentEndpoint(): Promise<{
  readonly url: string;
  accepted(): number;
  close(): Promise<void>;
}> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    accepted: () => accepted,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A connection to `endpoint` with static test credentials and one SDK attempt per request (unless `options` say otherwise). */
export function endpointConnection(
  endpoint: string,
  options: Pick<ConnectionOptions, 'setupTimeoutMs' | 'maxAttempts' | 'logger'> = {},
): SqsConnection {
  return new SqsConnection({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'ferry', secretAccessKey: 'ferry' },
    maxAttempts: 1,
    ...options,
  });
}
