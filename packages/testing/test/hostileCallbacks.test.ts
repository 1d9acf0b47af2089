/**
 * The in-memory consumer takes the same application functions as the real transports (identity,
 * tenant): one that throws anything or answers the wrong type costs its delivery a dead letter
 * with its reason, never the batch, so an application's own tests see what production does.
 */
import { InMemoryBroker, attachInMemoryConsumer, waitUntil } from '@ferry/testing';
import { MemoryAcceptor } from '@ferry/testing/conformance';
import { HOSTILE_ANSWERS, hostileProxy } from '../../../test-support/hostileAnswers';

const BEHAVIOUR = HOSTILE_ANSWERS;

describe('attachInMemoryConsumer with hostile application functions', () => {
  test('dead-letters a delivery whose identity or tenant function throws anything or answers the wrong type, and accepts its neighbours', async () => {
    const broker = new InMemoryBroker();
    broker.declareQueue('q');
    const kinds = Object.keys(BEHAVIOUR);
    broker.send('q', { body: Buffer.from('{}'), headers: { 'x-kind': 'good', 'x-app-id': 'good-1' } });
    for (const kind of kinds) broker.send('q', { body: Buffer.from('{}'), headers: { 'x-kind': kind } });
    broker.send('q', { body: Buffer.from('{}'), headers: { 'x-kind': 'tenant-proxy', 'x-app-id': 'tp' } });
    broker.send('q', { body: Buffer.from('{}'), headers: { 'x-kind': 'good', 'x-app-id': 'good-2' } });
    const acceptor = new MemoryAcceptor();
    const consumer = attachInMemoryConsumer(acceptor, {
      broker,
      queue: 'q',
      consumer: 'c',
      identity: (delivery) =>
        delivery.headers['x-app-id'] ?? (BEHAVIOUR[delivery.headers['x-kind'] ?? '']!() as string),
      tenant: (delivery) => {
        if (delivery.headers['x-kind'] === 'tenant-proxy') throw hostileProxy();
        return 'acme';
      },
    });
    try {
      await waitUntil('every delivery settled', () => broker.deadLetters('q').length === kinds.length + 1);
      await waitUntil('two accepted', () => acceptor.accepted.length === 2);
    } finally {
      await consumer.close();
    }
    expect(
      Object.fromEntries(broker.deadLetters('q').map((d) => [d.delivery.headers['x-kind'], d.reason])),
    ).toEqual({
      ...Object.fromEntries(kinds.map((kind) => [kind, 'missing_identity'])),
      'tenant-proxy': 'tenant_unresolved',
    });
  });
});
