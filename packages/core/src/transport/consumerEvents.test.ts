import { consumerEmitter } from './consumerEvents';
import type { TransportConsumerEvent } from './events';

describe('consumerEmitter', () => {
  it("gives a lag event the consumer's instance, the one of its connection events", () => {
    const events: TransportConsumerEvent[] = [];
    const emit = consumerEmitter('kafka', 'orders', (event) => void events.push(event));
    emit({ type: 'connected', assignment: { orders: [0] } });
    emit({ type: 'lag', group: 'billing', partition: 0, lag: 3 }, 'orders');
    const [joined, lag] = events;
    expect(lag).toEqual({
      type: 'lag',
      transport: 'kafka',
      source: 'orders',
      group: 'billing',
      partition: 0,
      lag: 3,
      instance: joined?.type === 'connected' ? joined.instance : 'no connected event',
    });
  });
});
