/**
 * Review 156 (failed first): while the broker is down, every publish (and connect(signal)) waits
 * for the connection. Each wait added a listener of its own to the connection's closing signal,
 * which lives as long as the connection: eleven waits at once passed Node's limit of 10, a
 * MaxListenersExceededWarning ("possible EventTarget memory leak") in the application's log. What
 * should happen: the closing signal holds at most one listener of the waits however many there
 * are (core's onAbort), none once they ended, and close() still ends every wait.
 */
import { getEventListeners } from 'node:events';
import { expect, test } from '@jest/globals';
import { RabbitConnection } from '@ferry/rabbitmq';
import { uniqueName } from './support/broker';

const WAITS = 30;

/** The connection's closing signal (private): the one every wait of it listens to. */
function closingSignal(connection: RabbitConnection): AbortSignal {
  return (connection as unknown as { closing: AbortController }).closing.signal;
}

test(`${WAITS} waits for a connection in an outage: at most one listener on the closing signal, none after`, async () => {
  // Nothing listens on port 1: every attempt is refused, the waits go on until their signal aborts.
  const connection = new RabbitConnection({
    url: 'amqp://guest:guest@127.0.0.1:1',
    connectionName: uniqueName('review156-outage'),
  });
  const closing = closingSignal(connection);
  const before = getEventListeners(closing, 'abort').length;
  const callers = Array.from({ length: WAITS }, () => new AbortController());
  const waits = callers.map((caller) =>
    connection.connect(caller.signal).then(
      () => 'connected',
      () => 'gave up',
    ),
  );
  try {
    // connect(signal) waits at once (no await before it listens).
    expect(getEventListeners(closing, 'abort').length - before).toBeLessThanOrEqual(1);
    callers.slice(0, WAITS / 2).forEach((caller) => caller.abort(new Error('caller gave up')));
    expect(await Promise.all(waits.slice(0, WAITS / 2))).toEqual(Array(WAITS / 2).fill('gave up'));
    expect(getEventListeners(closing, 'abort').length - before).toBeLessThanOrEqual(1);
  } finally {
    await connection.close();
  }
  expect(await Promise.all(waits)).toEqual(Array(WAITS).fill('gave up'));
  expect(getEventListeners(closing, 'abort')).toHaveLength(0);
});
