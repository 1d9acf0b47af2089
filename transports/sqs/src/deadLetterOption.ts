import { FerryConfigError } from '@ferry/core';
import { nonEmptyOption, received, stripUrlCredentials } from '@ferry/core/transport';
import { isFifoQueue, isQueueUrl } from './queueUrl';

const OPTION = 'deadLetter.queueUrl';

/**
 * `deadLetter.queueUrl` of queue mode, checked without a request: a URL (a name would make
 * every copy fail), not the consumer's own `queueUrl`, and FIFO exactly when the consumer's
 * queue is (SQS's own rule for a RedrivePolicy). What needs SQS (the queue answers, the same
 * queue under another spelling, its region) is checked at attach (checkDeadLetterQueue).
 */
export function deadLetterQueueUrlOption(queueUrl: string, deadLetterQueueUrl: unknown): string {
  const url = nonEmptyOption(OPTION, deadLetterQueueUrl);
  if (!isQueueUrl(url)) {
    throw new FerryConfigError(
      OPTION,
      `must be the dead-letter queue's URL (http:// or https://), got ${received(url)}: a queue name is not resolved here; pass the URL (GetQueueUrl, or declareQueue's queueUrl)`,
    );
  }
  if (url === queueUrl) {
    throw new FerryConfigError(
      OPTION,
      `is the consumer's own queue ${stripUrlCredentials(url)}: a copy would come back as a new message`,
    );
  }
  if (isFifoQueue(url) !== isFifoQueue(queueUrl)) {
    const [kind, other] = isFifoQueue(queueUrl) ? ['FIFO', 'standard'] : ['standard', 'FIFO'];
    throw new FerryConfigError(
      OPTION,
      `${stripUrlCredentials(url)} is a ${other} queue and ${stripUrlCredentials(queueUrl)} a ${kind} one; the dead-letter queue of a ${kind} queue must be a ${kind} queue, as SQS requires of a RedrivePolicy`,
    );
  }
  return url;
}
