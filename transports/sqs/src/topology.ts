import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  type QueueAttributeName,
} from '@aws-sdk/client-sqs';
import { FerryConfigError } from '@ferry/core';
import {
  booleanOption,
  integerOption,
  knownKeysOption,
  nonEmptyOption,
  type OptionKeys,
} from '@ferry/core/transport';
import { MAX_VISIBILITY_SECONDS } from './backoff';
import type { SqsConnection } from './connection';
import { requestDeadline } from './deadline';
import { errorName, requestError } from './errors';

export interface QueueSpec {
  /** Queue name; a FIFO queue's name must end in `.fifo`. */
  readonly name: string;
  readonly fifo?: boolean;
  readonly visibilityTimeoutSeconds?: number;
  /**
   * Creates `<name>-dlq` (`<base>-dlq.fifo` for FIFO) and a redrive policy moving a message
   * there after `maxReceiveCount` receives.
   */
  readonly deadLetter?: { readonly maxReceiveCount: number };
}

const QUEUE_SPEC_KEYS = {
  name: true,
  fifo: true,
  visibilityTimeoutSeconds: true,
  deadLetter: true,
} as const satisfies OptionKeys<QueueSpec>;

export interface DeclaredQueue {
  readonly queueUrl: string;
  readonly queueArn: string;
  /** Null when the spec asked for no dead-letter queue. */
  readonly deadLetterQueueUrl: string | null;
}

/** The dead-letter queue name declareQueue uses for `name`. */
export function deadLetterQueueName(name: string): string {
  return name.endsWith('.fifo') ? `${name.slice(0, -'.fifo'.length)}-dlq.fifo` : `${name}-dlq`;
}

/** Whether a queue URL or name denotes a FIFO queue (SQS requires the `.fifo` suffix). */
export function isFifoQueue(nameOrUrl: string): boolean {
  return nameOrUrl.endsWith('.fifo');
}

/**
 * Creates a standard or FIFO queue (and its dead-letter queue with a redrive policy).
 * Idempotent for identical attributes, as CreateQueue is. The spec is checked first: a key it
 * does not know is a FerryConfigError naming it, and nothing is created.
 */
export async function declareQueue(connection: SqsConnection, spec: QueueSpec): Promise<DeclaredQueue> {
  knownKeysOption('', spec, QUEUE_SPEC_KEYS);
  knownKeysOption('deadLetter.', spec.deadLetter, ['maxReceiveCount']);
  nonEmptyOption('name', spec.name);
  const fifo = booleanOption('fifo', spec.fifo ?? isFifoQueue(spec.name));
  if (fifo !== isFifoQueue(spec.name)) {
    throw new FerryConfigError('name', 'a FIFO queue name must end in .fifo, and only a FIFO queue name may');
  }
  if (spec.deadLetter) integerOption('deadLetter.maxReceiveCount', spec.deadLetter.maxReceiveCount, 1);
  if (spec.visibilityTimeoutSeconds !== undefined) {
    integerOption('visibilityTimeoutSeconds', spec.visibilityTimeoutSeconds, 0, MAX_VISIBILITY_SECONDS);
  }
  const base: Partial<Record<QueueAttributeName, string>> = fifo ? { FifoQueue: 'true' } : {};
  let deadLetterQueueUrl: string | null = null;
  const attributes = { ...base };
  if (spec.visibilityTimeoutSeconds !== undefined) {
    attributes.VisibilityTimeout = String(spec.visibilityTimeoutSeconds);
  }
  if (spec.deadLetter) {
    deadLetterQueueUrl = await createQueue(connection, deadLetterQueueName(spec.name), base);
    const deadLetterTargetArn = await queueArn(connection, deadLetterQueueUrl);
    attributes.RedrivePolicy = JSON.stringify({
      deadLetterTargetArn,
      maxReceiveCount: spec.deadLetter.maxReceiveCount,
    });
  }
  const queueUrl = await createQueue(connection, spec.name, attributes);
  return { queueUrl, queueArn: await queueArn(connection, queueUrl), deadLetterQueueUrl };
}

/** Deletes a queue; a queue that does not exist counts as deleted. */
export async function deleteQueue(connection: SqsConnection, queueUrl: string): Promise<void> {
  try {
    await connection.request(
      (sqs, abortSignal) => sqs.send(new DeleteQueueCommand({ QueueUrl: queueUrl }), { abortSignal }),
      requestDeadline(connection.options.setupTimeoutMs),
    );
  } catch (error) {
    if (errorName(error) !== 'QueueDoesNotExist') throw requestError(`DeleteQueue of ${queueUrl}`, error);
  }
  connection.forgetQueue(queueUrl);
}

export async function queueArn(connection: SqsConnection, queueUrl: string): Promise<string> {
  try {
    const arn = (await queueAttributes(connection, queueUrl, ['QueueArn'])).QueueArn;
    if (!arn) throw new Error('no QueueArn attribute');
    return arn;
  } catch (error) {
    throw requestError(`GetQueueAttributes of ${queueUrl}`, error);
  }
}

async function createQueue(
  connection: SqsConnection,
  name: string,
  attributes: Partial<Record<QueueAttributeName, string>>,
): Promise<string> {
  try {
    const output = await connection.request(
      (sqs, abortSignal) =>
        sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }), { abortSignal }),
      requestDeadline(connection.options.setupTimeoutMs),
    );
    if (!output.QueueUrl) throw new Error('CreateQueue returned no URL');
    return output.QueueUrl;
  } catch (error) {
    throw requestError(`CreateQueue of ${name}`, error);
  }
}

/**
 * The queue's attributes `names` (GetQueueAttributes), asked within setupTimeoutMs, ending with
 * `signal` too. Rejects with SQS's error as it is.
 */
async function queueAttributes(
  connection: SqsConnection,
  queueUrl: string,
  names: QueueAttributeName[],
  signal?: AbortSignal,
): Promise<Partial<Record<string, string>>> {
  const output = await connection.request(
    (sqs, abortSignal) =>
      sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: names }), { abortSignal }),
    requestDeadline(connection.options.setupTimeoutMs, signal),
  );
  return output.Attributes ?? {};
}

/**
 * The queue's RedrivePolicy ('' when it has none), which also says SQS answered for the queue:
 * the consumer's check before its first poll. A failed lookup rejects with requestError
 * (FERRY_PERMANENT_FAILURE when the queue does not exist or SQS refused the credentials), or with
 * the reason of `signal` once it aborted. Ends after setupTimeoutMs at the latest.
 */
export async function redrivePolicyOf(
  connection: SqsConnection,
  queueUrl: string,
  signal?: AbortSignal,
): Promise<string> {
  try {
    return (await queueAttributes(connection, queueUrl, ['RedrivePolicy'], signal)).RedrivePolicy ?? '';
  } catch (error) {
    if (signal?.aborted) throw error;
    throw requestError(`GetQueueAttributes of queue ${queueUrl}`, error);
  }
}

/**
 * Checks that a queue has a RedrivePolicy (the dead-letter path of `deadLetter: { mode:
 * 'redrive' }`): without one an invalid message would be received again and again, forever.
 * FerryConfigError when it has none; a failed lookup as redrivePolicyOf's.
 */
export async function requireRedrivePolicy(
  connection: SqsConnection,
  queueUrl: string,
  signal?: AbortSignal,
): Promise<void> {
  const policy = await redrivePolicyOf(connection, queueUrl, signal);
  if (policy.length === 0) {
    throw new FerryConfigError(
      'deadLetter',
      `queue ${queueUrl} has no RedrivePolicy; give it one or use deadLetter: { mode: 'queue', queueUrl }`,
    );
  }
}
