import { KafkaConnection, KafkaPublisher, attachKafkaConsumer } from '@ferry/kafka';
import {
  describeHostileShapes,
  recordingAcceptor,
  type EntryPoint,
} from '../../../test-support/hostileOptions';

/**
 * Review 142: the options objects of @ferry/kafka's entry points reshaped as an application could
 * hand them over (test-support/hostileOptions.ts): a throwing getter or trap, a revoked Proxy is
 * FerryConfigError naming the option; a null prototype, inherited, frozen or sealed options work;
 * each option is read once (nothing here reaches a broker: 127.0.0.1:1 has none).
 */
const brokers = ['127.0.0.1:1'];
const connection = new KafkaConnection({ brokers });
const { acceptor, asked: handled } = recordingAcceptor();

const ENTRY_POINTS: readonly EntryPoint[] = [
  {
    name: 'KafkaConnection',
    call: (options) => new KafkaConnection(options as never),
    base: () => ({ brokers, clientId: 'review142', requestTimeoutMs: 1_000 }),
    key: 'requestTimeoutMs',
    bad: '1000',
  },
  {
    name: 'KafkaPublisher',
    call: (options) => new KafkaPublisher(connection, options as never),
    base: () => ({ defaultDestination: 't', confirmTimeoutMs: 1_000 }),
    key: 'confirmTimeoutMs',
    bad: -1,
  },
  {
    name: 'attachKafkaConsumer',
    call: (options) => attachKafkaConsumer(acceptor, options as never),
    base: () => ({
      connection,
      topic: 't',
      groupId: 'g',
      consumer: 'c',
      deadLetter: { topic: 'd' },
      retryBackoff: { initialMs: 10 },
    }),
    key: 'consumer',
    bad: '',
    nested: ['deadLetter', 'retryBackoff'],
  },
];

describeHostileShapes(ENTRY_POINTS);

test('attachKafkaConsumer: the consumer name checked against the handlers is the one consumed', () => {
  expect(handled.filter((name) => name !== 'c')).toEqual([]);
});
