import {
  InMemoryBroker,
  InMemoryPublisher,
  attachInMemoryConsumer,
  drainInbox,
  waitForInboxRecord,
  waitUntil,
} from '@ferry/testing';
import {
  describeHostileShapes,
  recordingAcceptor,
  type EntryPoint,
} from '../../../test-support/hostileOptions';

/**
 * Review 142: the options objects of @ferry/testing's helpers reshaped as an application could
 * hand them over (test-support/hostileOptions.ts): a throwing getter or trap, a revoked Proxy is
 * FerryConfigError naming the option; a null prototype, inherited, frozen or sealed options work;
 * each option is read once.
 */
const broker = new InMemoryBroker();
const { acceptor, asked: handled } = recordingAcceptor();
const inbox = { runOnce: async () => ({ claimed: 0 }) } as never;
const scope = { get: async () => ({ status: 'COMPLETED' }) } as never;

const ENTRY_POINTS: readonly EntryPoint[] = [
  {
    name: 'InMemoryPublisher',
    call: (options) => new InMemoryPublisher(options as never),
    base: () => ({ decide: () => 'sent', observer: () => undefined }),
    key: 'decide',
    bad: 'sent',
  },
  {
    name: 'attachInMemoryConsumer',
    call: (options) => attachInMemoryConsumer(acceptor, options as never),
    base: () => ({ broker, queue: 'q', consumer: 'c' }),
    key: 'consumer',
    bad: '',
  },
  {
    name: 'waitUntil',
    call: (options) => waitUntil('true', () => true, options as never),
    base: () => ({ timeoutMs: 1_000, intervalMs: 5 }),
    key: 'intervalMs',
    bad: -1,
  },
  {
    name: 'drainInbox',
    call: (options) => drainInbox(inbox, options as never),
    base: () => ({ maxRounds: 2, timeoutMs: 1_000 }),
    key: 'maxRounds',
    bad: 0,
  },
  {
    name: 'waitForInboxRecord',
    call: (options) => waitForInboxRecord(scope, 'id', options as never),
    base: () => ({ status: 'COMPLETED', timeoutMs: 1_000 }),
    key: 'status',
    bad: 'DONE',
  },
];

describeHostileShapes(ENTRY_POINTS);

test('attachInMemoryConsumer: the consumer name checked against the handlers is the one consumed', () => {
  expect(handled.filter((name) => name !== 'c')).toEqual([]);
});
