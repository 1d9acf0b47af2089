/**
 * Review finding (failed first), review 84. A user declares queues as the README's quick start
 * does (`declareQueue(connection, { name, deadLetter: { maxReceiveCount } })`) with a spec SQS can
 * never take. README: declareQueue's spec is checked like every other options object
 * (`FERRY_CONFIG_INVALID` naming the option); `visibilityTimeoutSeconds` is range-checked
 * (0..43200) before any request. What happens instead: `deadLetter.maxReceiveCount` is checked
 * only for >= 1 (SQS takes 1..1000), and a name whose dead-letter queue name ferry makes up
 * (`<name>-dlq`) is over SQS's 80 characters: both reach SQS, whose refusal comes back as a
 * retriable FERRY_TRANSPORT_ERROR ("SQS answered CreateQueue … with an error"). A start-up that
 * retries retriable errors (as ready() teaches: "the consumer keeps trying") retries for ever a
 * spec no retry can fix; the name error even names a queue (`…-dlq`) the user never wrote.
 * Cause: src/topology.ts declareQueue: `integerOption('deadLetter.maxReceiveCount', …, 1)` with
 * no upper bound; no check of `name` / deadLetterQueueName(name) against SQS's queue name rule.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { declareQueue, deleteQueue } from '@ferry/sqs';
import { countRequests, openConnection, uniqueName } from './support/sqs';

const connection = openConnection();
const leftovers: string[] = [];

afterAll(async () => {
  await Promise.all(leftovers.map((url) => deleteQueue(connection, url)));
  await connection.close();
});

async function declareFailure(spec: Parameters<typeof declareQueue>[1]): Promise<unknown> {
  try {
    const declared = await declareQueue(connection, spec);
    leftovers.push(declared.queueUrl, ...(declared.deadLetterQueueUrl ? [declared.deadLetterQueueUrl] : []));
    return null;
  } catch (error) {
    return error;
  }
}

describe('review84: declareQueue with a spec SQS can never take', () => {
  it('deadLetter.maxReceiveCount over 1000 is FERRY_CONFIG_INVALID naming it, before any queue is created', async () => {
    const creates = countRequests(connection, 'CreateQueueCommand');
    try {
      const failure = await declareFailure({
        name: uniqueName('r84-receives'),
        deadLetter: { maxReceiveCount: 5000 },
      });
      expect(failure).toMatchObject({
        code: 'FERRY_CONFIG_INVALID',
        retriable: false,
        option: 'deadLetter.maxReceiveCount',
      });
      expect(creates.count()).toBe(0);
    } finally {
      creates.stop();
    }
  });

  it('a name whose dead-letter queue name would be over 80 characters is FERRY_CONFIG_INVALID, not a retriable transport error', async () => {
    // 77 characters: a valid SQS queue name; its `-dlq` queue would have 81.
    const name = uniqueName('r84-long').padEnd(77, 'x');
    const failure = await declareFailure({ name, deadLetter: { maxReceiveCount: 5 } });
    expect(failure).toMatchObject({ code: 'FERRY_CONFIG_INVALID', retriable: false, option: 'name' });
  });
});
