import { SqsConnection, SqsPublisher, attachSqsConsumer } from '@ferry/sqs';
import {
  describeHostileShapes,
  recordingAcceptor,
  type EntryPoint,
} from '../../../test-support/hostileOptions';

/**
 * Review 142: the options objects of @ferry/sqs's entry points reshaped as an application could
 * hand them over (test-support/hostileOptions.ts): a throwing getter or trap, a revoked Proxy is
 * FerryConfigError naming the option; a null prototype, inherited, frozen or sealed options work;
 * each option is read once (nothing here reaches a service: 127.0.0.1:1 has none).
 */
const endpoint = 'http://127.0.0.1:1';
const connection = new SqsConnection({ endpoint, region: 'us-east-1' });
afterAll(() => connection.close());
const { acceptor, asked: handled } = recordingAcceptor();

const ENTRY_POINTS: readonly EntryPoint[] = [
  {
    name: 'SqsConnection',
    call: (options) => new SqsConnection(options as never),
    base: () => ({
      endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'a', secretAccessKey: 's' },
      maxAttempts: 2,
    }),
    key: 'maxAttempts',
    bad: 0,
    nested: ['credentials'],
  },
  {
    name: 'SqsPublisher',
    call: (options) => new SqsPublisher(connection, options as never),
    base: () => ({ defaultDestination: 'q', confirmTimeoutMs: 1_000 }),
    key: 'confirmTimeoutMs',
    bad: '1000',
  },
  {
    name: 'attachSqsConsumer',
    call: (options) => attachSqsConsumer(acceptor, options as never),
    base: () => ({
      connection,
      queueUrl: `${endpoint}/000000000000/q`,
      consumer: 'c',
      deadLetter: { mode: 'redrive' },
    }),
    key: 'connection',
    bad: 'http://127.0.0.1:1',
    nested: ['deadLetter'],
  },
];

describeHostileShapes(ENTRY_POINTS);

test('attachSqsConsumer: the consumer name checked against the handlers is the one consumed', () => {
  expect(handled.filter((name) => name !== 'c')).toEqual([]);
});
