/**
 * declareQueue checks its spec like every other options resolver: a key it does not know is
 * refused (FERRY_CONFIG_INVALID naming it) before any queue is created, instead of being
 * ignored, so a mistyped `visibilityTimeout` or a `maxReceiveCount` outside `deadLetter` does
 * not silently declare a queue without it.
 */
import { declareQueue, type QueueSpec } from '../src';
import { countRequests, openConnection, uniqueName } from './support/sqs';

const connection = openConnection();

afterAll(() => connection.close());

test.each([
  ['visibilityTimeout', { visibilityTimeout: 30 }],
  ['maxReceiveCount', { maxReceiveCount: 3 }],
  ['deadLetter.maxReceives', { deadLetter: { maxReceives: 3 } }],
])('declareQueue refuses the unknown key %s and creates nothing', async (option, extra) => {
  const creates = countRequests(connection, 'CreateQueueCommand');
  try {
    const spec = { name: uniqueName('unknown-key'), ...extra } as unknown as QueueSpec;
    await expect(declareQueue(connection, spec)).rejects.toMatchObject({
      code: 'FERRY_CONFIG_INVALID',
      option,
      message: expect.stringContaining('is not a known option'),
    });
    expect(creates.count()).toBe(0);
  } finally {
    creates.stop();
  }
});

test('declareQueue refuses a spec that is not an object', async () => {
  await expect(declareQueue(connection, null as unknown as QueueSpec)).rejects.toMatchObject({
    code: 'FERRY_CONFIG_INVALID',
  });
});
