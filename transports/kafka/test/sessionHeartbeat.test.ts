/**
 * Review finding (failed first): an option bounded by another option's default must say so. A
 * `heartbeatIntervalMs` at or above the default `sessionTimeoutMs` was refused as "an integer
 * between 1 and 29999", naming no session timeout; left out, it follows the session timeout.
 * Pure logic: no broker.
 */
import { resolveConsumerOptions, type ConsumerOptions } from '../src';
import { testConnection } from './support';

const connection = testConnection();
const resolve = (extra: Partial<ConsumerOptions>) =>
  resolveConsumerOptions({ connection, topic: 'orders', groupId: 'g', consumer: 'c', ...extra });

describe('heartbeatIntervalMs and sessionTimeoutMs', () => {
  test('left out, the heartbeat follows a short session timeout', () => {
    expect(resolve({ sessionTimeoutMs: 1_500 }).heartbeatIntervalMs).toBe(500);
  });

  test('a heartbeat too long for the default session timeout names that default', () => {
    expect(() => resolve({ heartbeatIntervalMs: 40_000 })).toThrow(
      'invalid option heartbeatIntervalMs: must be less than sessionTimeoutMs (30000, the default), got 40000',
    );
  });

  test('both set: the refusal shows both values', () => {
    expect(() => resolve({ sessionTimeoutMs: 10_000, heartbeatIntervalMs: 10_000 })).toThrow(
      'invalid option heartbeatIntervalMs: must be less than sessionTimeoutMs (10000), got 10000',
    );
  });
});
