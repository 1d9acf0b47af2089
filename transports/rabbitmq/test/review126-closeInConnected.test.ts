/**
 * Review 126 (the Kafka consumer's case, probed on RabbitMQ): close() called from inside the
 * consumer's own `connected` event (an application that closes on first connect). Once close()
 * resolved nothing of the consumer runs: the queue has no consumer, no socket is opened, nothing
 * is logged, no event is emitted and nothing is left unhandled.
 */
import net from 'node:net';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { outcomeWithin } from '../../../test-support/deadlines';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { writtenLog } from '../../../test-support/writtenLog';
import { consumerCount, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

failOnUnhandledRejections();
jest.setTimeout(60_000);

/** Several of the fixture's reconnect backoff steps (50-500 ms) after close(). */
const WATCHED_AFTER_CLOSE_MS = 3_000;

const f = useConsumerFixture();

test('close() inside connected: once it resolved, no consumer on the queue, no connect, no log line, no event', async () => {
  const log = writtenLog();
  const events: TransportConsumerEvent[] = [];
  let closing: Promise<void> | undefined;
  void f
    .attach({
      logger: log.logger,
      observer: (event) => {
        events.push(event);
        if (event.type === 'connected') closing ??= f.consumer!.close();
      },
    })
    .catch(() => undefined);
  await waitFor('a connected event', () => (closing !== undefined ? true : undefined));
  expect(await outcomeWithin(closing!, 30_000)).toEqual({ value: undefined });
  const count = events.length;
  const logged = log.text();
  expect(events[count - 1]).toMatchObject({ type: 'disconnected', reason: 'closed' });

  const connects: unknown[] = [];
  const connect = net.Socket.prototype.connect;
  const spy = jest.spyOn(net.Socket.prototype, 'connect').mockImplementation(function (
    this: net.Socket,
    ...args: unknown[]
  ) {
    connects.push(args[0]);
    return (connect as (...a: unknown[]) => net.Socket).apply(this, args);
  });
  try {
    await new Promise((resolve) => setTimeout(resolve, WATCHED_AFTER_CLOSE_MS));
  } finally {
    spy.mockRestore();
  }
  expect(connects).toEqual([]);
  expect(await consumerCount(f.queue)).toBe(0);
  expect(log.text().slice(logged.length)).toBe('');
  expect(events.slice(count)).toEqual([]);
});
