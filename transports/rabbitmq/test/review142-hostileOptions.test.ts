import { RabbitConnection, RabbitPublisher, attachRabbitConsumer } from '@ferry/rabbitmq';
import {
  describeHostileShapes,
  recordingAcceptor,
  type EntryPoint,
} from '../../../test-support/hostileOptions';

/**
 * Review 142: the options objects of @ferry/rabbitmq's entry points reshaped as an application
 * could hand them over (test-support/hostileOptions.ts): a throwing getter or trap, a revoked
 * Proxy is FerryConfigError naming the option; a null prototype, inherited, frozen or sealed
 * options work; each option is read once (nothing here reaches a broker: 127.0.0.1:1 has none).
 */
const url = 'amqp://127.0.0.1:1';
const { acceptor, asked: handled } = recordingAcceptor();

const ENTRY_POINTS: readonly EntryPoint[] = [
  {
    name: 'RabbitConnection',
    call: (options) => new RabbitConnection(options as never),
    base: () => ({ url, connectionName: 'review142', reconnectBackoff: { initialMs: 10 } }),
    key: 'connectionName',
    bad: 5,
    nested: ['reconnectBackoff'],
  },
  {
    name: 'RabbitPublisher',
    call: (options) => new RabbitPublisher(url, options as never),
    base: () => ({ routes: { order: { exchange: 'x', routingKey: 'k' } }, confirmTimeoutMs: 1_000 }),
    key: 'confirmTimeoutMs',
    bad: '1000',
    nested: ['routes'],
  },
  {
    name: 'attachRabbitConsumer',
    call: (options) => attachRabbitConsumer(acceptor, options as never),
    base: () => ({
      connection: url,
      queue: 'q',
      consumer: 'c',
      deadLetter: { exchange: 'q.dlx' },
      bindings: [{ exchange: 'x', routingKey: 'k' }],
    }),
    key: 'consumer',
    bad: '',
    nested: ['deadLetter'],
  },
];

describeHostileShapes(ENTRY_POINTS);

test('attachRabbitConsumer: the consumer name checked against the handlers is the one consumed', () => {
  expect(handled.filter((name) => name !== 'c')).toEqual([]);
});
