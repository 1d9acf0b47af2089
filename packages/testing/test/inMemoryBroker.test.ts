import { InMemoryBroker, type InMemoryDelivery } from '@ferry/testing';

const delivery = (id: string): InMemoryDelivery => ({ body: Buffer.from('{}'), messageId: id, headers: {} });
const ids = (items: readonly { delivery: InMemoryDelivery }[]) =>
  items.map((item) => item.delivery.messageId);

describe('InMemoryBroker', () => {
  test('a restart puts unacked deliveries back at the head of their queue and ignores late acks', () => {
    const broker = new InMemoryBroker();
    broker.declareQueue('q');
    ['a', 'b', 'c'].forEach((id) => broker.send('q', delivery(id)));
    const first = broker.take('q', 2);
    broker.restart();
    broker.ack(first);
    expect(ids(broker.take('q', 10))).toEqual(['a', 'b', 'c']);
  });

  test('a nacked batch goes back to the head of the queue in its order', () => {
    const broker = new InMemoryBroker();
    broker.declareQueue('q');
    ['a', 'b', 'c'].forEach((id) => broker.send('q', delivery(id)));
    broker.nack(broker.take('q', 2));
    expect(ids(broker.take('q', 10))).toEqual(['a', 'b', 'c']);
  });

  test('a delivery to a queue that does not exist is not accepted by the broker', () => {
    const broker = new InMemoryBroker();
    expect(broker.send('nowhere', delivery('a'))).toBe(false);
  });
});
