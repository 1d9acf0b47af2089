import { FerryConfigError } from '@ferry/core';
import { stripUrlCredentials } from '@ferry/core/transport';
import type { SqsConnection } from './connection';
import { SQS_CLASSIC_LIMIT_BYTES } from './options';
import { requestDeadline, untilDeadline } from './deadline';
import { abandonedError, requestError } from './errors';
import { awsQueueRegion } from './queueUrl';
import { queueAttributes } from './topology';

const OPTION = 'deadLetter.queueUrl';

/** A dead-letter queue checked at attach. */
export interface DeadLetterTarget {
  readonly queueUrl: string;
  /** The largest copy it takes: its MaximumMessageSize (SQS's classic 256 KiB when it names none). */
  readonly maxMessageBytes: number;
}

/**
 * The attach check of `deadLetter: { mode: 'queue' }`, beside the consumer queue's own lookup:
 * the dead-letter queue answers GetQueueAttributes (a failure is a retriable transport error
 * naming it, so the consumer receives nothing until it does), is of the connection's region, is
 * not the consumer's queue under another spelling (same QueueArn) and takes every message the
 * consumer's queue takes (MaximumMessageSize); FerryConfigError otherwise.
 */
export async function checkDeadLetterQueue(
  connection: SqsConnection,
  sourceUrl: string,
  deadLetterUrl: string,
  signal: AbortSignal,
): Promise<DeadLetterTarget> {
  const region = awsQueueRegion(deadLetterUrl);
  // A region provider (instance metadata, a config service) may not answer: the check waits for it
  // within setupTimeoutMs, then fails retriably and the attach asks again.
  const signing = await untilDeadline(
    connection.signingRegion(),
    requestDeadline(connection.options.setupTimeoutMs, signal),
    abandonedError,
  ).catch((error: unknown) => {
    throw signal.aborted ? error : requestError('the region of the SQS client', error);
  });
  if (region !== null && signing !== null && region !== signing.toLowerCase()) {
    throw new FerryConfigError(
      OPTION,
      `${stripUrlCredentials(deadLetterUrl)} is a queue of region ${region} and the connection signs for ${signing}: SQS would refuse every copy; use a dead-letter queue of ${signing}`,
    );
  }
  const names = ['QueueArn', 'MaximumMessageSize'] as const;
  const [dead, source] = await Promise.all([
    queueAttributes(
      connection,
      deadLetterUrl,
      names,
      `dead-letter queue ${deadLetterUrl}: GetQueueAttributes`,
      signal,
    ),
    queueAttributes(connection, sourceUrl, names, `GetQueueAttributes ${sourceUrl}`, signal),
  ]);
  if (dead.QueueArn !== undefined && dead.QueueArn === source.QueueArn) {
    throw new FerryConfigError(
      OPTION,
      `${stripUrlCredentials(deadLetterUrl)} is the consumer's own queue (${dead.QueueArn}): a copy would come back as a new message`,
    );
  }
  const deadMax = maxMessageBytes(dead.MaximumMessageSize);
  const sourceMax = maxMessageBytes(source.MaximumMessageSize);
  if (deadMax < sourceMax) {
    throw new FerryConfigError(
      OPTION,
      `dead-letter queue ${stripUrlCredentials(deadLetterUrl)} takes messages of up to ${deadMax} bytes and ${stripUrlCredentials(sourceUrl)} of up to ${sourceMax}: a large message could never be copied; raise its MaximumMessageSize`,
    );
  }
  return { queueUrl: deadLetterUrl, maxMessageBytes: deadMax };
}

function maxMessageBytes(attribute: string | undefined): number {
  const value = Number(attribute);
  return Number.isInteger(value) && value > 0 ? value : SQS_CLASSIC_LIMIT_BYTES;
}
