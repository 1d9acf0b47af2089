/**
 * retryWithin's `ended` (KafkajsGate: no retry once the client is released), run on kafkajs's own
 * retrier (src/retry, as its producer, consumer and broker pool make one per call): until then
 * its retries are kafkajs's as given; from then on a retrier fails at its next failure without
 * another wait, in an error kafkajs does not retry, so a retrier around it fails at once too
 * (review 150: retries nested in retries scheduled one more wait after close() destroyed the client).
 */
import { retryWithin } from '../src/client/kafkajsGate';

type Retrier = <T>(fn: (bail: (error: Error) => void, retryCount: number) => Promise<T>) => Promise<T>;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const createRetry = require('kafkajs/src/retry') as (options: object) => Retrier;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { KafkaJSConnectionError } = require('kafkajs') as typeof import('kafkajs');

const TIMINGS = { initialRetryTime: 5, maxRetryTime: 20, factor: 0, multiplier: 1, retries: 5 };

test('until ended, a failing call is retried as kafkajs retries it', async () => {
  const retrier = createRetry({ ...retryWithin(TIMINGS, 1_000, () => false) });
  let calls = 0;
  const result = await retrier(async () => {
    calls += 1;
    if (calls < 4) throw new KafkaJSConnectionError('refused');
    return 'done';
  });
  expect({ result, calls }).toEqual({ result: 'done', calls: 4 });
});

test('once ended, a retrier and the retrier around it fail at their next failure, with no further wait', async () => {
  let ended = false;
  // kafkajs copies the options it is given before it reads them (Object.assign), as here.
  const options = { ...retryWithin(TIMINGS, 1_000, () => ended) };
  const inner = createRetry(options);
  const outer = createRetry(options);
  let innerCalls = 0;
  let outerCalls = 0;
  const failing = outer(async () => {
    outerCalls += 1;
    await inner(async () => {
      innerCalls += 1;
      // The client is released during the inner call's first attempt (its wait is already set).
      ended = true;
      throw new KafkaJSConnectionError('the client is closing');
    });
  });
  await expect(failing).rejects.toMatchObject({ retriable: false });
  // The inner attempt in flight waits once; its next attempt is its last; the outer one retries none.
  expect({ innerCalls, outerCalls }).toEqual({ innerCalls: 2, outerCalls: 1 });
});
