import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  type QueueAttributeName,
} from '@aws-sdk/client-sqs';
import { FerryConfigError } from '@ferry/core';
import {
  booleanOption,
  integerOption,
  knownKeysOption,
  nonEmptyOption,
  type OptionKeys,
  received,
  stripUrlCredentials,
} from '@ferry/core/transport';
import { MAX_VISIBILITY_SECONDS } from './backoff';
import type { SqsConnection } from './connection';
import { requestDeadline } from './deadline';
import { errorName, isMissingQueueError, requestError, transportError } from './errors';
import { MAX_QUEUE_NAME, QUEUE_NAME, isFifoQueue } from './queueUrl';
import { QueueAttributesMismatchError, queueAttributeDifferences } from './queueMismatch';

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

/** SQS's largest `maxReceiveCount` of a redrive policy. */
export const MAX_RECEIVE_COUNT = 1_000;

/**
 * Why SQS would refuse `name` (FIFO: with `.fifo`) as a queue name, or null. `deadLetter`: the
 * name is checked with the `<name>-dlq` name declareQueue makes of it too, which must be a
 * queue name as well (76 characters at most), since its refusal would name a queue the spec never did.
 */
function queueNameFault(name: string, fifo: boolean, deadLetter: boolean): string | null {
  const base = fifo ? name.slice(0, -'.fifo'.length) : name;
  if (!QUEUE_NAME.test(base) || name.length > MAX_QUEUE_NAME) {
    return `SQS takes 1 to ${MAX_QUEUE_NAME} letters, digits, - and _ as a queue name${fifo ? ' (.fifo counted)' : ''}, got ${received(name)}`;
  }
  const dead = deadLetterQueueName(name);
  if (deadLetter && dead.length > MAX_QUEUE_NAME) {
    return `the dead-letter queue declareQueue creates for it, ${dead}, would be ${dead.length} characters, over SQS's ${MAX_QUEUE_NAME}: at most ${MAX_QUEUE_NAME - (dead.length - name.length)} characters with deadLetter`;
  }
  return null;
}

export { isFifoQueue } from './queueUrl';

/**
 * Creates a standard or FIFO queue (and its dead-letter queue with a redrive policy).
 * Idempotent for identical attributes, as CreateQueue is; a queue that exists with other
 * attributes is a QueueAttributesMismatchError (FERRY_CONFIG_INVALID, not retriable) naming
 * each one that differs. The spec is checked first: a key it
 * does not know is a FerryConfigError naming it, and nothing is created.
 */
export async function declareQueue(connection: SqsConnection, spec: QueueSpec): Promise<DeclaredQueue> {
  spec = knownKeysOption('', spec, QUEUE_SPEC_KEYS);
  // Snapshots (read once): the maxReceiveCount checked is the one sent.
  const deadLetter = knownKeysOption('deadLetter.', spec.deadLetter, ['maxReceiveCount']);
  if (deadLetter !== undefined) spec = { ...spec, deadLetter };
  nonEmptyOption('name', spec.name);
  const fifo = booleanOption('fifo', spec.fifo ?? isFifoQueue(spec.name));
  if (fifo !== isFifoQueue(spec.name)) {
    throw new FerryConfigError('name', 'a FIFO queue name must end in .fifo, and only a FIFO queue name may');
  }
  const nameFault = queueNameFault(spec.name, fifo, Boolean(spec.deadLetter));
  if (nameFault !== null) throw new FerryConfigError('name', nameFault);
  if (spec.deadLetter) {
    integerOption('deadLetter.maxReceiveCount', spec.deadLetter.maxReceiveCount, 1, MAX_RECEIVE_COUNT);
  }
  if (spec.visibilityTimeoutSeconds !== undefined) {
    integerOption('visibilityTimeoutSeconds', spec.visibilityTimeoutSeconds, 0, MAX_VISIBILITY_SECONDS);
  }
  const base: Partial<Record<QueueAttributeName, string>> = fifo ? { FifoQueue: 'true' } : {};
  let deadLetterQueueUrl: string | null = null;
  const attributes = { ...base };
  if (spec.visibilityTimeoutSeconds !== undefined) {
    attributes.VisibilityTimeout = String(spec.visibilityTimeoutSeconds);
  }
  let createdDeadLetter = false;
  if (spec.deadLetter) {
    const name = deadLetterQueueName(spec.name);
    createdDeadLetter = !(await queueExists(connection, name));
    deadLetterQueueUrl = await createQueue(connection, name, base);
    const deadLetterTargetArn = await queueArn(connection, deadLetterQueueUrl);
    attributes.RedrivePolicy = JSON.stringify({
      deadLetterTargetArn,
      maxReceiveCount: spec.deadLetter.maxReceiveCount,
    });
  }
  let queueUrl: string;
  try {
    queueUrl = await createQueue(connection, spec.name, attributes);
  } catch (error) {
    // The dead-letter queue this call created would be left behind, of no queue: deleted again.
    if (createdDeadLetter && deadLetterQueueUrl !== null) {
      await deleteQueue(connection, deadLetterQueueUrl).catch(() => undefined);
    }
    throw error;
  }
  return { queueUrl, queueArn: await queueArn(connection, queueUrl), deadLetterQueueUrl };
}

/** Whether a queue named `name` exists (GetQueueUrl); a failed lookup is requestError's. */
async function queueExists(connection: SqsConnection, name: string): Promise<boolean> {
  try {
    await connection.queueUrl(name);
    return true;
  } catch (error) {
    if (isMissingQueueError(error)) return false;
    throw requestError(`GetQueueUrl ${name}`, error);
  }
}

/** Deletes a queue; a queue that does not exist counts as deleted. */
export async function deleteQueue(connection: SqsConnection, queueUrl: string): Promise<void> {
  try {
    await connection.request(
      (sqs, abortSignal) => sqs.send(new DeleteQueueCommand({ QueueUrl: queueUrl }), { abortSignal }),
      requestDeadline(connection.options.setupTimeoutMs),
    );
  } catch (error) {
    if (!isMissingQueueError(error)) throw requestError(`DeleteQueue ${queueUrl}`, error);
  }
  connection.forgetQueue(queueUrl);
}

export async function queueArn(connection: SqsConnection, queueUrl: string): Promise<string> {
  const arn = (await queueAttributes(connection, queueUrl, ['QueueArn'], `GetQueueAttributes ${queueUrl}`))
    .QueueArn;
  if (!arn) throw transportError(`GetQueueAttributes ${queueUrl} failed`, new Error('no QueueArn attribute'));
  return arn;
}

/**
 * GetQueueAttributes of `names`, ended by `signal` and after setupTimeoutMs at the latest. Once
 * `signal` aborted its reason is rethrown as it is; any other failure is requestError(`what`):
 * FERRY_PERMANENT_FAILURE when the queue does not exist or SQS refused the credentials, else a
 * retriable transport error saying whether SQS answered.
 */
export async function queueAttributes(
  connection: SqsConnection,
  queueUrl: string,
  names: readonly QueueAttributeName[],
  what: string,
  signal?: AbortSignal,
): Promise<Partial<Record<QueueAttributeName, string>>> {
  try {
    const output = await connection.request(
      (sqs, abortSignal) =>
        sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: [...names] }), {
          abortSignal,
        }),
      requestDeadline(connection.options.setupTimeoutMs, signal),
    );
    return output.Attributes ?? {};
  } catch (error) {
    if (signal?.aborted) throw error;
    throw requestError(what, error);
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
    connection.answeredQueueUrl(output.QueueUrl);
    return output.QueueUrl;
  } catch (error) {
    const code = errorName(error);
    if (code === 'QueueNameExists' || code === 'QueueAlreadyExists') {
      throw await attributesMismatch(connection, name, attributes, error);
    }
    throw requestError(`CreateQueue ${name}`, error);
  }
}

/**
 * Why CreateQueue refused `attributes` for an existing queue: a QueueAttributesMismatchError
 * naming what differs, read with GetQueueAttributes; the retriable transport error of the
 * CreateQueue when that read fails.
 */
async function attributesMismatch(
  connection: SqsConnection,
  name: string,
  attributes: Partial<Record<QueueAttributeName, string>>,
  cause: unknown,
): Promise<Error> {
  try {
    const url = await connection.queueUrl(name);
    const names = Object.keys(attributes) as QueueAttributeName[];
    const existing = await queueAttributes(connection, url, names, `GetQueueAttributes ${url}`);
    return new QueueAttributesMismatchError(name, queueAttributeDifferences(attributes, existing));
  } catch {
    return requestError(`CreateQueue ${name}`, cause);
  }
}

/**
 * Checks that a queue has a RedrivePolicy (the dead-letter path of `deadLetter: { mode:
 * 'redrive' }`) whose dead-letter queue exists: without either an invalid message would be
 * received again and again, forever, or dropped by SQS. FerryConfigError (option `deadLetter`)
 * when it has none or its target does not exist; a failed lookup as queueAttributes'.
 * The lookups end with `signal`, and after setupTimeoutMs at the latest. The consumer runs it
 * at attach and again each time it leaves invalid messages to the policy.
 */
export async function requireRedrivePolicy(
  connection: SqsConnection,
  queueUrl: string,
  signal?: AbortSignal,
): Promise<void> {
  const what = `GetQueueAttributes ${queueUrl}`;
  const policy = (await queueAttributes(connection, queueUrl, ['RedrivePolicy'], what, signal)).RedrivePolicy;
  if (policy === undefined || policy.length === 0) {
    throw new FerryConfigError(
      'deadLetter',
      `queue ${stripUrlCredentials(queueUrl)} has no RedrivePolicy; give it one or use deadLetter: { mode: 'queue', queueUrl }`,
    );
  }
  const target = redriveTarget(policy);
  if (target === null) return;
  try {
    await connection.request(
      (sqs, abortSignal) =>
        sqs.send(new GetQueueUrlCommand({ QueueName: target.name, QueueOwnerAWSAccountId: target.account }), {
          abortSignal,
        }),
      requestDeadline(connection.options.setupTimeoutMs, signal),
    );
  } catch (error) {
    const name = errorName(error);
    if (signal?.aborted) throw error;
    if (name === 'QueueDoesNotExist' || name === 'AWS.SimpleQueueService.NonExistentQueue') {
      throw new FerryConfigError(
        'deadLetter',
        `the RedrivePolicy of queue ${stripUrlCredentials(queueUrl)} moves messages to ${target.arn}, which does not exist: SQS cannot move an invalid message there`,
      );
    }
    throw requestError(`GetQueueUrl ${target.name} (the RedrivePolicy's dead-letter queue)`, error);
  }
}

/** The dead-letter queue of a RedrivePolicy (`arn:aws:sqs:region:account:name`); null when unreadable. */
function redriveTarget(policy: string): { arn: string; account: string; name: string } | null {
  try {
    const arn = (JSON.parse(policy) as { deadLetterTargetArn?: unknown }).deadLetterTargetArn;
    const parts = typeof arn === 'string' ? arn.split(':') : [];
    if (parts.length !== 6 || !parts[4] || !parts[5]) return null;
    return { arn: arn as string, account: parts[4], name: parts[5] };
  } catch {
    return null;
  }
}
