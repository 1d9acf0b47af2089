/**
 * declareQueue checks its spec like every other options resolver: a key it does not know is
 * refused (FERRY_CONFIG_INVALID naming it) before any queue is created, instead of being
 * ignored, so a mistyped `visibilityTimeout` or a `maxReceiveCount` outside `deadLetter` does
 * not silently declare a queue without it.
 */
import {
  QueueAttributesMismatchError,
  deadLetterQueueName,
  declareQueue,
  deleteQueue,
  type QueueSpec,
} from '../src';
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

describe('declareQueue on an existing queue with other attributes', () => {
  const declared: string[] = [];
  afterAll(async () => {
    await Promise.all(declared.map((url) => deleteQueue(connection, url)));
  });

  it('refuses with a non-retriable FERRY_CONFIG_INVALID naming each attribute that differs', async () => {
    const name = uniqueName('differ');
    const first = await declareQueue(connection, {
      name,
      visibilityTimeoutSeconds: 30,
      deadLetter: { maxReceiveCount: 3 },
    });
    declared.push(first.queueUrl, first.deadLetterQueueUrl!);
    const failure = await declareQueue(connection, {
      name,
      visibilityTimeoutSeconds: 45,
      deadLetter: { maxReceiveCount: 5 },
    }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(QueueAttributesMismatchError);
    expect(failure).toMatchObject({
      code: 'FERRY_CONFIG_INVALID',
      retriable: false,
      option: 'visibilityTimeoutSeconds',
      queue: name,
      message: expect.stringMatching(/VisibilityTimeout is 30, the spec asks 45.*RedrivePolicy/),
    });
    expect((failure as QueueAttributesMismatchError).differences.map((d) => d.attribute)).toEqual([
      'VisibilityTimeout',
      'RedrivePolicy',
    ]);
    // The same spec again is still a no-op.
    await expect(
      declareQueue(connection, { name, visibilityTimeoutSeconds: 30, deadLetter: { maxReceiveCount: 3 } }),
    ).resolves.toMatchObject({ queueUrl: first.queueUrl });
  });
});

describe('declareQueue and deleteQueue leave no queue behind and find none missing', () => {
  it('a main queue found mismatched: the -dlq queue this call created is deleted again (no orphan)', async () => {
    const name = uniqueName('orphan');
    const plain = await declareQueue(connection, { name, visibilityTimeoutSeconds: 30 });
    try {
      await expect(
        declareQueue(connection, { name, visibilityTimeoutSeconds: 45, deadLetter: { maxReceiveCount: 3 } }),
      ).rejects.toBeInstanceOf(QueueAttributesMismatchError);
      const lookup = await connection.queueUrl(deadLetterQueueName(name)).then(
        (url) => url,
        (error: unknown) => error,
      );
      expect(lookup).toMatchObject({ name: expect.stringMatching(/QueueDoesNotExist|NonExistentQueue/) });
    } finally {
      await deleteQueue(connection, plain.queueUrl);
    }
  });

  it('a -dlq queue that existed before a failed declareQueue is kept', async () => {
    const name = uniqueName('keepdlq');
    const first = await declareQueue(connection, {
      name,
      visibilityTimeoutSeconds: 30,
      deadLetter: { maxReceiveCount: 3 },
    });
    try {
      await expect(
        declareQueue(connection, { name, visibilityTimeoutSeconds: 45, deadLetter: { maxReceiveCount: 3 } }),
      ).rejects.toBeInstanceOf(QueueAttributesMismatchError);
      await expect(connection.queueUrl(deadLetterQueueName(name))).resolves.toBe(first.deadLetterQueueUrl);
    } finally {
      await deleteQueue(connection, first.queueUrl);
      await deleteQueue(connection, first.deadLetterQueueUrl!);
    }
  });

  it.each(['QueueDoesNotExist', 'AWS.SimpleQueueService.NonExistentQueue'])(
    'deleteQueue counts a queue SQS reports %s as deleted',
    async (name) => {
      const missing = {
        options: { setupTimeoutMs: 1_000 },
        request: () =>
          Promise.reject(Object.assign(new Error('The specified queue does not exist.'), { name })),
        forgetQueue: () => undefined,
      } as unknown as typeof connection;
      await expect(deleteQueue(missing, 'http://127.0.0.1:9324/000000000000/gone')).resolves.toBeUndefined();
    },
  );
});

describe('declareQueue checks the spec against what SQS can ever take, before any request', () => {
  const long = (length: number, suffix = ''): string =>
    uniqueName('bounds').padEnd(length - suffix.length, 'x') + suffix;
  test.each<[string, QueueSpec, string]>([
    ['maxReceiveCount 0', { name: 'q', deadLetter: { maxReceiveCount: 0 } }, 'deadLetter.maxReceiveCount'],
    [
      'maxReceiveCount 1001',
      { name: 'q', deadLetter: { maxReceiveCount: 1001 } },
      'deadLetter.maxReceiveCount',
    ],
    [
      'visibilityTimeoutSeconds 43201',
      { name: 'q', visibilityTimeoutSeconds: 43_201 },
      'visibilityTimeoutSeconds',
    ],
    ['a name of 81 characters', { name: long(81) }, 'name'],
    ['a FIFO name of 81 characters with .fifo', { name: long(81, '.fifo') }, 'name'],
    ['a name with a dot', { name: 'orders.v2' }, 'name'],
    ['a name with a space', { name: 'my orders' }, 'name'],
    ['a name ending in .fifo without its base', { name: '.fifo' }, 'name'],
    [
      'a 77-character name with deadLetter (-dlq: 81)',
      { name: long(77), deadLetter: { maxReceiveCount: 3 } },
      'name',
    ],
    [
      'a 77-character FIFO name with deadLetter (-dlq.fifo: 81)',
      { name: long(77, '.fifo'), deadLetter: { maxReceiveCount: 3 } },
      'name',
    ],
  ])('%s is FERRY_CONFIG_INVALID naming the option, not retriable', async (_, spec, option) => {
    const requests = countRequests(connection, 'CreateQueueCommand');
    const lookups = countRequests(connection, 'GetQueueUrlCommand');
    try {
      await expect(declareQueue(connection, spec)).rejects.toMatchObject({
        code: 'FERRY_CONFIG_INVALID',
        retriable: false,
        option,
      });
      expect(requests.count() + lookups.count()).toBe(0);
    } finally {
      requests.stop();
      lookups.stop();
    }
  });

  it('takes the longest names and counts SQS takes (80 characters; 76 with deadLetter; 1000 receives)', async () => {
    const specs: QueueSpec[] = [
      { name: long(80) },
      { name: long(80, '.fifo') },
      { name: long(76), deadLetter: { maxReceiveCount: 1000 } },
      { name: long(76, '.fifo'), deadLetter: { maxReceiveCount: 1 } },
    ];
    for (const spec of specs) {
      const declared = await declareQueue(connection, spec);
      const urls = [declared.queueUrl, ...(declared.deadLetterQueueUrl ? [declared.deadLetterQueueUrl] : [])];
      await Promise.all(urls.map((url) => deleteQueue(connection, url)));
      expect(declared.queueUrl.endsWith(spec.name)).toBe(true);
      if (spec.deadLetter)
        expect(declared.deadLetterQueueUrl?.endsWith(deadLetterQueueName(spec.name))).toBe(true);
    }
  });
});
